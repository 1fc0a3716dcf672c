/**
 * The BUILT gateway (`node bin/switchyard.js gateway`) as a child process, in simulator mode:
 * no API key in its environment, a temp home and a temp working directory (so no
 * switchyard.yaml is picked up). Every child is tracked so the runner can kill leftovers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { HttpClient } from "./http-client.js";
import { sleep } from "./stats.js";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "bin", "switchyard.js");
const DIST_ENTRY = join(ROOT, "dist", "main.js");

/** Children still alive and their temp dirs; both cleaned up by {@link killAllChildren}. */
const live = new Set<ChildProcess>();
/** Children started in their own process group (npm start): killed with the whole group. */
const groups = new WeakSet<ChildProcess>();
const tempDirs = new Set<string>();

/** A spawned gateway. */
export interface GatewayChild {
  child: ChildProcess;
  pid: number;
  url: string;
  /** Its home folder (removed by `kill`). */
  home: string;
  /** When `spawn()` was called (performance.now()). */
  spawnedAtMs: number;
  /** The last 4 KB of stderr, for error messages. */
  stderrTail(): string;
  /** SIGKILLs the child (if alive), waits for its exit, removes its temp dirs; never throws. */
  kill(): Promise<void>;
}

/** Throws a clear error when `npm run build` has not been run. */
export function assertBuilt(): void {
  if (!existsSync(DIST_ENTRY)) {
    throw new Error(`${DIST_ENTRY} is missing: run \`npm run build\` first (npm run bench does)`);
  }
}

/** A free TCP port on 127.0.0.1 (bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Options for {@link spawnGateway}. */
export interface SpawnGatewayOptions {
  /** Written as `switchyard.yaml` in the child's working directory; default none (all defaults). */
  configYaml?: string;
  /**
   * Start it as a user does with `npm start` (npm, then the launcher's staleness check, then the
   * daemon) instead of `node bin/switchyard.js gateway`. Runs in the package folder; `configYaml`
   * is ignored. Default false.
   */
  viaNpmStart?: boolean;
  /** Fills the fresh home before the spawn (e.g. a database with jobs). */
  prepareHome?(home: string): Promise<void>;
  /** Use this home instead of a fresh one (a restart); it is left in place by `kill`. */
  home?: string;
  /**
   * Start it under a parent that never reaps it (`sh` that becomes `sleep`), as a container init
   * that does not reap: once SIGKILLed it stays a zombie. `pid` is the gateway's own. Default false.
   */
  unreaped?: boolean;
}

/** Spawns the built gateway on a free port with a fresh home; returns at once (not yet ready). */
export async function spawnGateway(options: SpawnGatewayOptions = {}): Promise<GatewayChild> {
  assertBuilt();
  const port = await freePort();
  const home = options.home ?? mkdtempSync(join(tmpdir(), "sy-bench-home-"));
  const cwd = mkdtempSync(join(tmpdir(), "sy-bench-cwd-"));
  if (options.home === undefined) tempDirs.add(home);
  tempDirs.add(cwd);
  await options.prepareHome?.(home);
  if (options.configYaml !== undefined) writeFileSync(join(cwd, "switchyard.yaml"), options.configYaml);
  const spawnedAtMs = performance.now();
  // Only PATH and HOME: no model API key, so the built-in simulator answers.
  const env = { PATH: process.env.PATH, HOME: process.env.HOME };
  const flags = ["--home", home, "--port", String(port)];
  const child = options.viaNpmStart
    ? // Its own process group: npm's child (the daemon) is killed with it.
      spawn("npm", ["start", "--silent", "--", ...flags], {
        cwd: ROOT,
        env,
        stdio: ["ignore", "ignore", "pipe"],
        detached: true,
      })
    : options.unreaped
      ? // Its own group too: the sleeping parent and the gateway (or its zombie) go together.
        spawn(
          "sh",
          ["-c", '"$0" "$@" & echo "$!"; exec sleep 3600', process.execPath, BIN, "gateway", ...flags],
          {
            cwd,
            env,
            stdio: ["ignore", "pipe", "pipe"],
            detached: true,
          },
        )
      : spawn(process.execPath, [BIN, "gateway", ...flags], {
          cwd,
          env,
          stdio: ["ignore", "ignore", "pipe"],
        });
  const group = options.viaNpmStart === true || options.unreaped === true;
  const gatewayPid = options.unreaped
    ? await new Promise<number>((resolvePid, reject) => {
        child.stdout?.once("data", (d: Buffer) => resolvePid(Number(d.toString().trim())));
        child.once("exit", () => reject(new Error("the gateway's parent exited before naming it")));
      })
    : (child.pid ?? -1);
  if (group) groups.add(child);
  live.add(child);
  let tail = "";
  child.stderr?.on("data", (d: Buffer) => {
    tail = (tail + d.toString()).slice(-4096);
  });
  const exited = new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) done();
    else child.once("exit", () => done());
  });
  exited.then(() => live.delete(child));
  return {
    child,
    pid: gatewayPid,
    url: `http://127.0.0.1:${port}`,
    home,
    spawnedAtMs,
    stderrTail: () => tail,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        if (group && child.pid) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      }
      await Promise.race([exited, sleep(5_000)]);
      for (const dir of options.home === undefined ? [home, cwd] : [cwd]) {
        rmSync(dir, { recursive: true, force: true });
        tempDirs.delete(dir);
      }
    },
  };
}

/**
 * Polls `GET /readyz` every `intervalMs` until it answers 200; resolves with the milliseconds
 * from spawn. Rejects when the child exits or after `timeoutMs` from spawn.
 */
export async function waitReady(
  gw: GatewayChild,
  client: HttpClient,
  intervalMs = 5,
  timeoutMs = 20_000,
): Promise<number> {
  for (;;) {
    const elapsedMs = performance.now() - gw.spawnedAtMs;
    if (gw.child.exitCode !== null || gw.child.signalCode !== null) {
      throw new Error(`gateway exited (${gw.child.exitCode ?? gw.child.signalCode}):\n${gw.stderrTail()}`);
    }
    if (elapsedMs > timeoutMs)
      throw new Error(`gateway not ready after ${timeoutMs} ms:\n${gw.stderrTail()}`);
    try {
      const res = await client.get(`${gw.url}/readyz`);
      if (res.status === 200) return performance.now() - gw.spawnedAtMs;
    } catch {
      // Not listening yet.
    }
    await sleep(intervalMs);
  }
}

/** Resident set size of a process in MB (VmRSS from /proc/<pid>/status). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!m?.[1]) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

/** SIGKILLs every child still alive and removes their temp dirs (synchronous: safe on `exit`). */
export function killAllChildren(): void {
  for (const child of live) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    if (groups.has(child) && child.pid) process.kill(-child.pid, "SIGKILL");
    else child.kill("SIGKILL");
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}
