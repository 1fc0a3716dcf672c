/**
 * The command line as a person meets it: exit codes and plain-words messages for bad
 * configuration, bad flags and broken state; doctor and status.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

const ROOT = resolve(import.meta.dirname, "../..");
// An absolute loader URL: the CLI runs from temp folders that have no node_modules.
const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "sy-cli-"));
  dirs.push(d);
  return d;
}

function cli(args: string[], cwd = tmp(), env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, ["--import", TSX, join(ROOT, "test/helpers/cli-entry.ts"), ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: cwd, ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("switchyard CLI", () => {
  it("exits 2 naming the key path, the value and what was expected", () => {
    const dir = tmp();
    writeFileSync(join(dir, "switchyard.yaml"), "gateway:\n  port: 70000\n  bogus: true\n");
    const r = cli(["gateway", "--home", join(dir, "home")], dir);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`switchyard: bad configuration in ${join(dir, "switchyard.yaml")}:`);
    expect(r.err).toContain("gateway.port: found 70000, expected at most 65535");
    expect(r.err).toContain("gateway.bogus: unknown key");
    expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("exits 2 for a missing --config file, a bad flag and an unknown command", () => {
    expect(cli(["gateway", "--config", "nope.yaml"]).err).toMatch(/file not found: .*nope\.yaml/);
    const badPort = cli(["gateway", "--port", "http"]);
    expect(badPort.code).toBe(2);
    expect(badPort.err).toContain('--port: found "http", expected a whole number from 0 to 65535');
    const unknown = cli(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown command "frobnicate"');
  });

  it("prints its version with --version and version", () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    for (const args of [["--version"], ["version"], ["status", "--version"]]) {
      const r = cli(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.out).toBe(`switchyard ${version}\n`);
    }
  });

  it("says what --port expects for a negative number, given apart or joined", () => {
    for (const args of [
      ["gateway", "--port", "-1"],
      ["gateway", "--port=-1"],
      ["status", "--port", "-1", "--json"],
    ]) {
      const r = cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err).toContain('switchyard: --port: found "-1", expected a whole number from 0 to 65535');
      expect(r.err).not.toContain("ambiguous");
    }
  });

  it("reports a corrupt database in plain words, not a stack trace", () => {
    const home = tmp();
    writeFileSync(join(home, "switchyard.db"), "this is not a database".repeat(100));
    const r = cli(["gateway", "--home", home, "--port", "0"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/switchyard gateway: .*switchyard\.db.*(not a valid switchyard database|damaged)/);
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it("doctor says what is configured and what is missing", () => {
    const home = tmp();
    const r = cli(["doctor", "--home", home, "--port", "1"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/ok\s+config\s+no switchyard\.yaml found; using defaults/);
    expect(r.out).toMatch(/ok\s+home\s+/);
    expect(r.out).toMatch(/warn\s+database\s+no database at .* yet/);
    expect(r.out).toMatch(/warn\s+provider\s+no API key for anthropic: replies will be SIMULATED/);
    expect(r.out).toMatch(/ok\s+channels\s+http, console\n/);
    expect(r.out).toMatch(/ok\s+http\s+listens at http:\/\/127\.0\.0\.1:1\/v1\/chat/);
  });

  it("doctor fails on a bad configuration", () => {
    const dir = tmp();
    writeFileSync(join(dir, "switchyard.yaml"), "lanes:\n  maxConcurrent: 0\n");
    const r = cli(["doctor", "--home", join(dir, "home")], dir);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/FAIL\s+config\s+lanes\.maxConcurrent: found 0, expected at least 1/);
  });

  it("status reads the database when no gateway is running", () => {
    const home = tmp();
    cli(["pairing", "approve", "telegram", "X", "--home", home]); // creates the database
    const r = cli(["status", "--home", home, "--port", "1"]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("no gateway answers at http://127.0.0.1:1");
    expect(r.out).toMatch(/outbox\s+pending 0, sending 0, sent 0, dead 0, expired 0/);
  });
});

describe("switchyard pairing", () => {
  it("lists pending codes and approves one, once", async () => {
    const home = tmp();
    const { openSqliteStore } = await import("../../src/store/sqlite/open-sqlite-store.js");
    const store = openSqliteStore({ path: join(home, "switchyard.db") });
    await store.pairing.request(
      { channel: "telegram", accountId: "default", senderId: "42", senderName: "Ann", code: "ABCD2345" },
      { ttlMs: 3_600_000, maxPending: 3 },
      Date.now(),
    );
    store.close();
    const list = cli(["pairing", "list", "--home", home]);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/pending\s+telegram ABCD2345\s+Ann \(id 42\), expires in \d+ min/);
    const ok = cli(["pairing", "approve", "telegram", "abcd2345", "--home", home]);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("approved Ann (id 42) on telegram");
    const again = cli(["pairing", "approve", "telegram", "ABCD2345", "--home", home]);
    expect(again.code).toBe(2);
    expect(again.err).toContain("no pending telegram request with code ABCD2345");
    expect(cli(["pairing", "list", "--home", home]).out).toMatch(/approved\s+telegram Ann \(id 42\)/);
  });
});

describe("switchyard chat", () => {
  it("sends each line to the running gateway and prints the streamed reply", async () => {
    const sim = new ModelSimulator();
    await sim.start();
    const gw = await startTestGateway(simulatorConfig(sim, "anthropic"));
    try {
      sim.script({ text: "Hello Ann, nice to meet you." });
      const child = spawn(
        process.execPath,
        [
          "--import",
          TSX,
          join(ROOT, "test/helpers/cli-entry.ts"),
          "chat",
          "--url",
          gw.url,
          "--sender",
          "ann",
        ],
        { cwd: tmp(), env: { PATH: process.env.PATH }, stdio: ["pipe", "pipe", "pipe"] },
      );
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
      });
      child.stdin.write("hi there\n");
      await until(() => out.includes("nice to meet you"), "the agent's answer", 15_000);
      child.stdin.end();
      const code = await new Promise<number | null>((r) => child.once("exit", r));
      expect(code).toBe(0);
      expect(out).toContain(`Connected to ${gw.url} as "ann"`);
      expect(out).toContain("agent> Hello Ann, nice to meet you.");
      const session = await gw.running.store.sessions.get("agent:main:console:dm:ann");
      expect(session).toBeDefined();
    } finally {
      await gw.stop();
      await sim.close();
    }
  });
});
