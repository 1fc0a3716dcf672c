/**
 * `switchyard logs`: the last lines across the current and rotated files, pretty-printed (plain
 * on a pipe), non-JSON lines as they are, and `-f` following the file across a rotation.
 */
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { spawnGateway } from "../helpers/gateway-process.js";
import { until } from "../helpers/until.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

const ROOT = resolve(import.meta.dirname, "../..");
const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const T = Date.UTC(2024, 0, 15, 12, 0, 0);

/** One pino JSON line as the gateway writes it. */
function line(msg: string, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ level: 30, time: T, pid: 1, hostname: "h", name: "gateway", msg, ...extra })}\n`;
}

function logsDir(home: string): string {
  const dir = join(home, "logs");
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe("switchyard logs", () => {
  it("says where it looked when there is no log file", async () => {
    const home = tempDir();
    const r = await runCli(["logs", "--home", home]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `switchyard logs: no log file at ${join(home, "logs", "switchyard.log")} (the gateway writes it once it has run)\n`,
    );
  });

  it("prints the last N lines across rotated files, pretty and without colors on a pipe", async () => {
    const home = tempDir();
    const dir = logsDir(home);
    writeFileSync(join(dir, "switchyard.log.2"), line("oldest"));
    writeFileSync(join(dir, "switchyard.log.1"), line("older") + line("old", { runId: "run-7" }));
    writeFileSync(join(dir, "switchyard.log"), `${line("started")}not json at all\n${line("ready")}`);
    const r = await runCli(["logs", "--last", "4", "--home", home]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).not.toContain("\u001b["); // no colors: stdout is a pipe
    expect(r.out).not.toContain("oldest");
    expect(r.out).not.toContain('"msg"');
    const order = [
      "INFO (gateway): old",
      'runId: "run-7"',
      "INFO (gateway): started",
      "not json at all",
      "ready",
    ];
    const at = order.map((text) => r.out.indexOf(text));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(r.out).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.000\] INFO \(gateway\): old$/m);

    const all = await runCli(["logs", "--home", home]);
    expect(all.out).toContain("oldest");
  });

  it("ends quietly with exit 0 when its reader goes away (logs | head)", async () => {
    const home = tempDir();
    writeFileSync(
      join(logsDir(home), "switchyard.log"),
      Array.from({ length: 20_000 }, (_, i) => line(`line ${i}`)).join(""),
    );
    const child = spawn(
      process.execPath,
      ["--import", TSX, join(ROOT, "test/helpers/cli-entry.ts"), "logs", "--last", "20000", "--home", home],
      {
        cwd: home,
        env: { PATH: process.env.PATH, HOME: home },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let err = "";
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    // The reader takes the first chunk and leaves, as `head` does.
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((done) => child.once("close", done));
    expect(err).toBe("");
    expect(code).toBe(0);
  });

  it("-f follows new lines, a line written in two parts, and the file across a rotation until signalled", async () => {
    const home = tempDir();
    const dir = logsDir(home);
    const file = join(dir, "switchyard.log");
    writeFileSync(file, line("before"));
    const child = spawn(
      process.execPath,
      ["--import", TSX, join(ROOT, "test/helpers/cli-entry.ts"), "logs", "-f", "--home", home],
      { cwd: home, env: { PATH: process.env.PATH, HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((done) => child.once("close", (code) => done(code)));
    try {
      await until(() => out.includes("INFO (gateway): before"), `the existing line (stderr: ${err})`);
      appendFileSync(file, line("appended"));
      await until(() => out.includes("appended"), "an appended line");
      appendFileSync(file, line("in two parts").slice(0, 30));
      appendFileSync(file, line("in two parts").slice(30));
      await until(() => out.includes("INFO (gateway): in two parts"), "a line written in two parts");
      // A rotation: the file is renamed (and gets one last line), a new one takes its place.
      renameSync(file, `${file}.1`);
      appendFileSync(`${file}.1`, line("last in the old file"));
      writeFileSync(file, "first in the new file, not json\n");
      await until(() => out.includes("first in the new file, not json"), "the new file after rotation");
      appendFileSync(file, line("second in the new file"));
      await until(() => out.includes("second in the new file"), "more lines in the new file");
      expect(out).toContain("last in the old file");
      expect(out.indexOf("last in the old file")).toBeLessThan(out.indexOf("first in the new file"));
      expect(out.match(/appended/g)).toHaveLength(1);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(err).toBe("");
  });

  it("shows what a running gateway logged to its file", async () => {
    const home = tempDir();
    const gw = await spawnGateway(["--home", home, "--port", "0"]);
    try {
      await until(
        async () => (await runCli(["logs", "--home", home])).out.includes(`url: "${gw.url}"`),
        "the gateway's start-up line",
      );
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
    const after = await runCli(["logs", "--last", "1", "--home", home]);
    expect(after.out).toContain("gateway stopped");
  });
});
