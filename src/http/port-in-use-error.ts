/**
 * The gateway's address is taken (EADDRINUSE): another gateway, or another program, listens on
 * `host`:`port`. A start failure a person can fix, so it is reported as one line, no stack.
 */

/** A listen that failed because the port is in use; owns the port and host it tried. */
export class PortInUseError extends Error {
  readonly code = "port_in_use";
  constructor(
    readonly port: number,
    readonly host: string,
    options: { cause?: unknown } = {},
  ) {
    super(
      `port ${port} on ${host} is already in use (another gateway? pass --port N or set gateway.port)`,
      options,
    );
    this.name = "PortInUseError";
  }
}
