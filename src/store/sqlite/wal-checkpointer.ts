/**
 * WAL checkpoints on a worker thread. In WAL mode SQLite copies the log back into the database
 * file every `wal_autocheckpoint` pages, inside whichever commit crosses the line: on the
 * gateway's event loop, about a third of its write cost here. A second connection on a worker
 * thread checkpoints instead (PASSIVE: it never blocks the writer), so commits only append. The
 * main connection keeps a much higher autocheckpoint as a safety net should the worker stall.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Logger } from "../../util/logger.js";

/** Options of {@link WalCheckpointer}. */
export interface WalCheckpointerOptions {
  /** The database file (not `:memory:`). */
  path: string;
  /** Checkpoint this often; default 250 ms. */
  intervalMs?: number;
  logger?: Logger;
}

/** Pages the main connection lets the WAL grow to before it checkpoints itself (~16 MB). */
export const SAFETY_AUTOCHECKPOINT_PAGES = 4_000;

// Plain CommonJS for `eval`: the driver is required by absolute path, so this works from any
// working directory and under any TypeScript loader.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 0 });
let failures = 0;
let seen = -1;
const timer = setInterval(() => {
  try {
    // data_version changes when another connection commits: nothing new, nothing to copy.
    const version = db.pragma("data_version", { simple: true });
    if (version === seen) return;
    seen = version;
    db.pragma("wal_checkpoint(PASSIVE)");
    failures = 0;
  } catch (err) {
    if (++failures === 1) parentPort.postMessage({ type: "error", message: String(err && err.message || err) });
  }
}, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch {}
  db.close();
  parentPort.close();
});
`;

/** Runs PASSIVE checkpoints of one database file on a worker thread until `stop()`. */
export class WalCheckpointer {
  readonly #worker: Worker;
  #stopped = false;

  constructor(options: WalCheckpointerOptions) {
    const intervalMs = options.intervalMs ?? 250;
    if (!Number.isInteger(intervalMs) || intervalMs < 1) {
      throw new RangeError(`WalCheckpointer: intervalMs must be a positive integer, got ${intervalMs}`);
    }
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { driver, path: options.path, intervalMs },
    });
    // The gateway's lifetime is decided elsewhere; this thread must not keep the process up.
    this.#worker.unref();
    this.#worker.on("message", (m: { type: string; message?: string }) => {
      if (m.type === "error")
        options.logger?.warn(
          { err: m.message },
          "WAL checkpoint failed on the worker; the writer will checkpoint",
        );
    });
    this.#worker.on("error", (err) =>
      options.logger?.warn({ err }, "WAL checkpoint worker died; the writer will checkpoint"),
    );
  }

  /** Stops the worker after a last checkpoint; resolves when it has exited. Idempotent. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    const exited = new Promise<void>((resolve) => this.#worker.once("exit", () => resolve()));
    this.#worker.postMessage("stop");
    const timer = setTimeout(() => void this.#worker.terminate(), 2_000);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
