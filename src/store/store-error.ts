/** Store failures with a stable code and a plain-words message. */
export class StoreError extends Error {
  readonly code:
    | "locked"
    | "corrupt"
    | "read_only"
    | "schema_too_new"
    | "disk_full"
    | "io"
    | "conflict"
    /** A server store (PostgreSQL) that cannot be reached, or refused the login. */
    | "unavailable";
  constructor(code: StoreError["code"], message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "StoreError";
    this.code = code;
  }
}
