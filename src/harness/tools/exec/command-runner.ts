/**
 * The commands running now, owned in one place so that shutdown can stop them all: the gateway
 * keeps one CommandRunner, the `exec` tool runs every command through it, and stopping the
 * gateway calls killAll before the process exits.
 */
import { runCommand } from "./run-command.js";
import type { CommandResult, RunCommandOptions } from "./types.js";

/** Owns the live commands (their abort controllers and pending results) until each has ended. */
export class CommandRunner {
  readonly #running = new Map<AbortController, Promise<unknown>>();

  /** Commands started through `run` and not yet ended. */
  get running(): number {
    return this.#running.size;
  }

  /**
   * Runs one command with runCommand (same options, contract and errors), tracked until its
   * result is in, so killAll can stop it. `options.signal` still stops it on its own.
   */
  async run(options: RunCommandOptions): Promise<CommandResult> {
    const controller = new AbortController();
    const outer = options.signal;
    const onAbort = (): void => controller.abort(outer?.reason);
    if (outer?.aborted) onAbort();
    else outer?.addEventListener("abort", onAbort, { once: true });
    const result = runCommand({ ...options, signal: controller.signal });
    this.#running.set(
      controller,
      result.catch(() => undefined),
    );
    try {
      return await result;
    } finally {
      this.#running.delete(controller);
      outer?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * Stops every running command as an abort would (SIGTERM to its process group, SIGKILL after
   * the grace; its result says `aborted`) and resolves when all have ended. Never rejects.
   * Commands started afterwards run normally.
   */
  async killAll(): Promise<void> {
    const running = [...this.#running];
    for (const [controller] of running) controller.abort(new Error("the gateway is shutting down"));
    await Promise.all(running.map(([, ended]) => ended));
  }
}
