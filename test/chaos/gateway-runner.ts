/**
 * The BUILT gateway (`node bin/switchyard.js gateway --home H --config C --port 0`) as a process
 * the chaos run SIGKILLs and starts again on the same home, at once. By default a killed gateway
 * stays unreaped (a zombie) until the run reaps it, as under a parent that reaps late (a
 * container without an init): it runs under `sh`, which then becomes `sleep` and never waits for
 * it, so a restart that checks its predecessor's pid finds a zombie. With `reapAtOnce` it is a
 * plain child, reaped by Node as soon as it dies. Every process is tracked and killed on any path.
 */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { readProcStat } from "../../src/util/process-identity.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin", "switchyard.js");
const TAIL_CHARS = 8192;
const PID_LINE = /chaos-gateway-pid (\d+)\n/;
/**
 * `sh` starts the gateway in the background, says its pid, then becomes a `sleep` that never
 * reaps it. A watcher (not the gateway's parent, so it reaps nothing of it) kills the gateway
 * and the `sleep` if the driver itself dies (even by SIGKILL), and ends once the gateway is gone.
 */
const UNREAPED_SCRIPT = [
  'driver=$PPID; "$0" "$@" & gw=$!',
  'echo "chaos-gateway-pid $gw" >&2',
  '(while kill -0 "$driver" && kill -0 "$gw"; do sleep 1; done',
  ' kill -0 "$driver" || { kill -9 "$gw"; kill -9 $$; }) </dev/null >/dev/null 2>&1 &',
  "exec sleep 86400 </dev/null >/dev/null 2>&1",
].join("\n");

export interface GatewayRunnerOptions {
  home: string;
  configPath: string;
  /** Working directory of the gateways (a temp dir: no switchyard.yaml is picked up). */
  cwd: string;
  /** The driver's clock, in ms. */
  now: () => number;
  /** Let Node reap a killed gateway at once instead of keeping it a zombie until `reap`; default false. */
  reapAtOnce?: boolean;
}

/** One gateway process's life, from spawn to exit. */
export interface GatewayLife {
  /** 0 for the first process, then one more per restart. */
  readonly index: number;
  readonly spawnedAtMs: number;
  /** When it printed "listening on" (driver clock); undefined until then. */
  readonly listeningAtMs: number | undefined;
  /** Resolves once it died (its stderr closed). */
  readonly exited: Promise<void>;
  /** How it ended, e.g. "code 1", "SIGKILL", "exited"; undefined while it runs. */
  readonly exitStatus: string | undefined;
  /**
   * Resolves with the "listening on" time; rejects when it dies first or after `timeoutMs`,
   * with its stderr tail in the message.
   */
  listening(timeoutMs: number): Promise<number>;
  /** The last 8 KB of its stderr. */
  stderrTail(): string;
  /** The gateway's own pid once known (for signals other than kill, e.g. SIGSTOP/SIGCONT). */
  readonly pid: number | undefined;
  /** SIGKILL now; does not wait. */
  kill(): void;
  /**
   * Resolves true once the process is dead (a zombie, reaped or exited): it runs no more code and
   * writes nothing more. False after `timeoutMs`.
   */
  gone(timeoutMs: number): Promise<boolean>;
  /** SIGTERM, then waits up to `timeoutMs` (SIGKILL after that); resolves its exit code when known. */
  terminate(timeoutMs: number): Promise<number | null>;
}

interface Tracked {
  /** What was spawned: the gateway, or the `sh`/`sleep` parent that does not reap it. */
  child: ChildProcess;
  gatewayPid: () => number | undefined;
  dead: () => boolean;
}

/** Spawns gateway processes on one home and keeps track of them. */
export class GatewayRunner {
  readonly #o: GatewayRunnerOptions;
  readonly #tracked = new Set<Tracked>();
  #count = 0;

  constructor(options: GatewayRunnerOptions) {
    this.#o = options;
  }

  /** Starts a gateway process; returns at once (see `listening`). */
  spawn(): GatewayLife {
    const { home, configPath, cwd, now } = this.#o;
    const command = [process.execPath, BIN, "gateway", "--home", home, "--config", configPath, "--port", "0"];
    // Only PATH and HOME: no model key or proxy from the caller's environment reaches it.
    const options: SpawnOptions = {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      stdio: ["ignore", "ignore", "pipe"],
    };
    const unreaped = this.#o.reapAtOnce !== true;
    const child = unreaped
      ? spawn("sh", ["-c", UNREAPED_SCRIPT, ...command], options)
      : spawn(command[0] as string, command.slice(1), options);
    const index = this.#count++;
    const spawnedAtMs = now();
    let tail = "";
    let listeningAtMs: number | undefined;
    let gatewayPid = unreaped ? undefined : child.pid;
    let exitStatus: string | undefined;
    let pendingSignal: NodeJS.Signals | undefined;
    let sent: NodeJS.Signals | undefined;
    const listeners = new Set<() => void>();
    const tell = () => {
      for (const l of [...listeners]) l();
    };
    const signal = (name: NodeJS.Signals) => {
      sent = name;
      if (exitStatus !== undefined) return;
      if (gatewayPid === undefined)
        pendingSignal = name; // sent once its pid is known
      else tryKill(gatewayPid, name);
    };
    child.stderr?.on("data", (d: Buffer) => {
      tail = (tail + d.toString()).slice(-TAIL_CHARS);
      if (gatewayPid === undefined) {
        const m = PID_LINE.exec(tail);
        if (m) {
          gatewayPid = Number(m[1]);
          tail = tail.replace(PID_LINE, "");
          if (pendingSignal) tryKill(gatewayPid, pendingSignal);
        }
      }
      if (listeningAtMs === undefined && /listening on http:\/\//.test(tail)) {
        listeningAtMs = now();
        tell();
      }
    });
    const exited = new Promise<void>((done) => {
      const end = (status: () => string) => {
        if (exitStatus !== undefined) return;
        exitStatus = status();
        tell();
        done();
      };
      child.once("error", () => end(() => "spawn failed"));
      if (!unreaped) child.once("exit", (code, sig) => end(() => sig ?? `code ${code}`));
      // Only the gateway holds the pipe's write end (the `sleep` has none): it closes as the
      // gateway dies, a moment before the kernel shows it as a zombie with its exit status.
      else
        child.stderr?.once(
          "close",
          () => void zombieStatus(gatewayPid).then((s) => end(() => s ?? sent ?? "exited")),
        );
    });
    const tracked: Tracked = { child, gatewayPid: () => gatewayPid, dead: () => exitStatus !== undefined };
    this.#tracked.add(tracked);
    if (!unreaped) void exited.then(() => this.#tracked.delete(tracked));
    return {
      index,
      spawnedAtMs,
      exited,
      get listeningAtMs() {
        return listeningAtMs;
      },
      get exitStatus() {
        return exitStatus;
      },
      get pid() {
        return gatewayPid;
      },
      stderrTail: () => tail,
      listening: (timeoutMs) =>
        new Promise<number>((resolveListening, reject) => {
          const finish = (settle: () => void) => {
            clearTimeout(timer);
            listeners.delete(check);
            settle();
          };
          const check = () => {
            if (listeningAtMs !== undefined) finish(() => resolveListening(listeningAtMs as number));
            else if (exitStatus !== undefined)
              finish(() =>
                reject(new Error(`gateway #${index} ended (${exitStatus}) before listening:\n${tail}`)),
              );
          };
          const timer = setTimeout(
            () =>
              finish(() =>
                reject(new Error(`gateway #${index} not listening after ${timeoutMs} ms:\n${tail}`)),
              ),
            timeoutMs,
          );
          listeners.add(check);
          check();
        }),
      kill: () => signal("SIGKILL"),
      gone: async (timeoutMs) => {
        const until = Date.now() + timeoutMs;
        for (;;) {
          if (exitStatus !== undefined || (gatewayPid !== undefined && !runs(gatewayPid))) return true;
          if (Date.now() >= until) return false;
          await new Promise((r) => setTimeout(r, 1));
        }
      },
      terminate: async (timeoutMs) => {
        signal("SIGTERM");
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((r) => {
          timer = setTimeout(r, timeoutMs);
        });
        try {
          await Promise.race([exited, late]);
        } finally {
          clearTimeout(timer);
        }
        if (exitStatus === undefined) {
          signal("SIGKILL");
          await exited;
          return null;
        }
        const code = /^code (\d+)$/.exec(exitStatus)?.[1];
        return code === undefined ? null : Number(code);
      },
    };
  }

  /** Reaps the gateways that died (ends the `sleep` parent of each; init reaps the zombie). */
  reapDead(): void {
    for (const t of this.#tracked) {
      if (!t.dead()) continue;
      if (t.child.exitCode === null && t.child.signalCode === null) t.child.kill("SIGKILL");
      this.#tracked.delete(t);
    }
  }

  /** SIGKILLs every gateway and parent still alive (synchronous: safe in an `exit` handler). */
  killAll(): void {
    for (const t of this.#tracked) {
      const pid = t.gatewayPid();
      if (pid !== undefined && !t.dead()) tryKill(pid, "SIGKILL");
      if (t.child.exitCode === null && t.child.signalCode === null) t.child.kill("SIGKILL");
    }
    this.#tracked.clear();
  }
}

function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** Whether `pid` still runs code: false once it is gone or a zombie (Linux /proc). */
function runs(pid: number): boolean {
  const state = readProcStat(pid)?.state;
  return state !== undefined && state !== "Z" && state !== "X";
}

/** The exit status of a process that just died, once it shows as a zombie (read for up to 200 ms). */
async function zombieStatus(pid: number | undefined): Promise<string | undefined> {
  for (let i = 0; i < 40; i++) {
    const status = statusOf(pid);
    if (status !== undefined || pid === undefined) return status;
    await new Promise((r) => setTimeout(r, 5));
  }
  return undefined;
}

/**
 * How a dead, unreaped process ended, from /proc/<pid>/stat's exit_code (a waitpid status;
 * Linux 3.5+): "code N" or the signal's name; undefined when it cannot be read (reaped, not Linux).
 */
function statusOf(pid: number | undefined): string | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat
      .slice(stat.lastIndexOf(")") + 2)
      .trim()
      .split(/\s+/);
    if (fields[0] !== "Z") return undefined;
    const status = Number(fields.at(-1));
    if (!Number.isInteger(status)) return undefined;
    const sig = status & 0x7f;
    if (sig === 0) return `code ${(status >> 8) & 0xff}`;
    return sig === 9 ? "SIGKILL" : sig === 15 ? "SIGTERM" : `signal ${sig}`;
  } catch {
    return undefined;
  }
}
