/**
 * A throwaway PostgreSQL cluster for tests: `initdb` in a temporary folder, `pg_ctl start` on a
 * free loopback port (the socket in that folder too), stopped and deleted by `stop()`. Runs the
 * server as the `postgres` user when the tests run as root (initdb refuses root). The binaries
 * come from `pg_config --bindir`, the Debian layout, or PATH; `.ci/run` installs PostgreSQL when
 * it is missing, so a test never skips for want of it.
 *
 * `fsync=off`: the server itself is never killed by a test (gateways are), so durability of the
 * cluster's own files does not matter and every commit is cheaper.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** A running throwaway cluster. */
export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  port: number;
  /** A fresh, empty database on the cluster; its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server (fast shutdown: clients are disconnected) and keeps its data: the server went away. */
  pause(): Promise<void>;
  /** Starts a paused server again on the same port, with its data. */
  resume(): Promise<void>;
  /** Stops the server and deletes its folder; idempotent. */
  stop(): Promise<void>;
}

let dbSeq = 0;

/** The folder holding initdb and pg_ctl. */
export function postgresBinDir(): string {
  const fromConfig = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  const candidates = [
    fromConfig.status === 0 ? fromConfig.stdout.trim() : "",
    ...["17", "16", "15", "14", "13"].map((v) => `/usr/lib/postgresql/${v}/bin`),
  ];
  for (const dir of candidates) if (dir && existsSync(join(dir, "initdb"))) return dir;
  const which = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" });
  if (which.status === 0) return which.stdout.trim().replace(/\/initdb$/, "");
  throw new Error(
    "PostgreSQL is not installed (no initdb found): .ci/run installs it; here run `apt-get install -y postgresql`",
  );
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** Runs a PostgreSQL binary, as `postgres` when we are root. */
function runPg(bin: string, args: string[]): void {
  const [file, argv] = isRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  execFileSync(file, argv, { stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
}

/** Starts a throwaway cluster (about 1–2 s). */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(join(tmpdir(), "switchyard-pg-"));
  if (isRoot) execFileSync("chown", ["postgres:postgres", dir]);
  chmodSync(dir, 0o700);
  const data = join(dir, "data");
  runPg(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  let port = 0;
  const start = () =>
    runPg(join(bin, "pg_ctl"), [
      "-D",
      data,
      "-l",
      join(dir, "server.log"),
      "-w",
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
      "start",
    ]);
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      start();
      break;
    } catch (err) {
      if (attempt >= 2) throw err; // the port was taken between the probe and the start
    }
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let stopped = false;
  // A test process that ends without stop() (a crash, a timeout) must not leave a server behind.
  const onExit = () => {
    if (stopped) return;
    stopped = true;
    try {
      runPg(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
    } catch {
      // Already gone.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  return {
    url,
    port,
    async createDatabase(name = `t${process.pid}_${++dbSeq}`) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async pause() {
      runPg(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"]);
    },
    async resume() {
      start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off("exit", onExit);
      try {
        runPg(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
