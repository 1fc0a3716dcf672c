/**
 * An MCP stdio client transport that runs the server in its own process group, so stopping it
 * ends whatever it forked too, and that knows how the server ended (`exit 1`, `signal SIGKILL`)
 * for the one-line reason its calls fail with. The SDK's StdioClientTransport spawns without a
 * group and drops the exit status; the framing (one JSON-RPC message a line) is the SDK's own
 * ReadBuffer. Loaded lazily with the SDK, when a server first starts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { endGroup, signalGroup } from "../../harness/tools/exec/process-group.js";
import { systemClock } from "../../util/clock.js";

/** What the server is run with. */
export interface StdioServerProcess {
  command: string;
  args: readonly string[];
  /** Its whole environment (already scrubbed). */
  env: Record<string, string>;
  cwd: string;
}

/** Characters of the server's stderr kept for the crash reason. */
const STDERR_TAIL_CHARS = 2_000;
/** Time the server gets to exit after SIGTERM before its group is killed. */
const STOP_GRACE_MS = 1_000;

/** One server process, spoken to over stdin/stdout; owns the process group until closed. */
export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #params: StdioServerProcess;
  readonly #buffer = new ReadBuffer();
  #child: ChildProcess | undefined;
  #ended: string | undefined;
  #stderr = "";

  constructor(params: StdioServerProcess) {
    this.#params = params;
  }

  /** The server's pid once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How the process ended (`exit 1`, `signal SIGKILL`), once it has. */
  get ended(): string | undefined {
    return this.#ended;
  }

  /** The last lines the server wrote to stderr. */
  get stderrTail(): string {
    return this.#stderr;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.#params.command, [...this.#params.args], {
        env: this.#params.env,
        cwd: this.#params.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      this.#child = child;
      child.once("error", (err) => {
        this.#ended ??= `could not start: ${err.message}`;
        reject(err);
        this.onerror?.(err);
      });
      child.once("spawn", () => resolve());
      child.once("close", (code, signal) => {
        this.#ended ??= signal ? `signal ${signal}` : `exit ${code ?? "unknown"}`;
        this.#child = undefined;
        this.onclose?.();
      });
      child.stdin?.on("error", (err) => this.onerror?.(err));
      child.stdout?.on("data", (chunk: Buffer) => this.#read(chunk));
      child.stderr?.on("data", (chunk: Buffer) => {
        this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
      });
    });
  }

  #read(chunk: Buffer): void {
    try {
      this.#buffer.append(chunk);
    } catch (err) {
      // Over the SDK's 10 MB line limit: nothing sane comes after it.
      this.onerror?.(err as Error);
      this.close().catch(() => {});
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#buffer.readMessage();
      } catch (err) {
        // A line that is not JSON-RPC (a server printing to stdout): reported, skipped.
        this.onerror?.(err as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.#child?.stdin;
      if (!stdin || stdin.destroyed) return reject(new Error("the server is not running"));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** Ends the server's whole process group (SIGTERM, then SIGKILL); resolves once it is gone. */
  async close(): Promise<void> {
    const child = this.#child;
    this.#buffer.clear();
    if (!child?.pid) return;
    this.#ended ??= "stopped";
    child.stdin?.end();
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    await endGroup(child.pid, STOP_GRACE_MS, systemClock);
    // The leader may be gone with its pipes still open in a child; the group is empty now.
    if (signalGroup(child.pid, 0)) signalGroup(child.pid, "SIGKILL");
    await Promise.race([closed, new Promise<void>((r) => setTimeout(r, STOP_GRACE_MS).unref())]);
  }
}
