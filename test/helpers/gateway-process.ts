/**
 * Runs the gateway as a child process (from source, through tsx) so tests can SIGKILL it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { readProcStat } from "../../src/util/process-identity.js";
import { until } from "./until.js";

const ROOT = resolve(import.meta.dirname, "../..");

export interface GatewayProcess {
  /** The spawned process: the gateway, or with `unreaped` the parent that never reaps it. */
  child: ChildProcess;
  /** The gateway's own pid. */
  pid: number;
  url: string;
  output: () => string;
  /** Signals the gateway and resolves once it has exited (with `unreaped`: once it is a zombie). */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface SpawnGatewayOptions {
  /**
   * Start it under a parent that never reaps it (`sh` that becomes `sleep`), as a container
   * whose init does not reap: once killed it stays a zombie until the test ends, and a pid check
   * (`kill(pid, 0)`) still finds it. The parent is killed with `kill()`'s second call or at exit.
   */
  unreaped?: boolean;
}

const parents = new Set<ChildProcess>();
process.once("exit", () => {
  for (const p of parents) p.kill("SIGKILL");
});

/** Starts `switchyard gateway` and resolves once it prints its URL (after recovery: it is ready). */
export async function spawnGateway(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: SpawnGatewayOptions = {},
): Promise<GatewayProcess> {
  const command = [process.execPath, "--import", "tsx", "test/helpers/cli-entry.ts", "gateway", ...args];
  const child = options.unreaped
    ? spawn("sh", ["-c", '"$0" "$@" & echo "gateway pid $!"; exec sleep 600', ...command], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      })
    : spawn(command[0] as string, command.slice(1), {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
  if (options.unreaped) parents.add(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start in 20 s:\n${out}`)), 20_000);
    child.stderr?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before starting:\n${out}`));
    });
  });
  if (!options.unreaped) {
    return {
      child,
      pid: child.pid as number,
      url,
      output: () => out,
      kill: (signal = "SIGKILL") =>
        new Promise((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode);
          child.once("exit", (code) => done(code));
          child.kill(signal);
        }),
    };
  }
  // The background job is the gateway itself (sh forks and execs it); `sh` then became `sleep`.
  const pid = Number(/gateway pid (\d+)/.exec(out)?.[1]);
  if (!Number.isInteger(pid)) throw new Error(`no gateway pid in the output:\n${out}`);
  let killed = false;
  return {
    child,
    pid,
    url,
    output: () => out,
    kill: async (signal = "SIGKILL") => {
      if (killed) {
        child.kill("SIGKILL"); // the parent: the zombie is reaped by init with it
        parents.delete(child);
        return null;
      }
      killed = true;
      process.kill(pid, signal);
      await until(
        () => {
          const state = readProcStat(pid)?.state;
          return state === undefined || state === "Z";
        },
        `gateway ${pid} to exit`,
        30_000,
      );
      return null;
    },
  };
}
