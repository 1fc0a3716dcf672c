/**
 * No key anywhere: a gateway process whose provider answers with errors that quote the key (as
 * OpenAI's "Incorrect API key provided: sk-…" does) never writes that key to its log, its stored
 * errors and notices, `status` or `auth status`; a rejected key cools its profile for minutes and
 * `doctor` warns about it.
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { removeTempDirs, runCli, tempDir } from "../cli/cli-process.js";
import { spawnGateway } from "../helpers/gateway-process.js";

const KEY_A = "sk-ant-api03-SECRETWORK-0123456789abcdef";
const KEY_B = "sk-ant-api03-SECRETHOME-0123456789abcdef";

let sim: ModelSimulator;
beforeAll(async () => {
  sim = new ModelSimulator();
  await sim.start();
});
afterAll(async () => {
  await sim.close();
  removeTempDirs();
});

describe("keys stay secret", () => {
  it("appear in no log line, stored error, notice, status or auth status; doctor warns about the rejected key", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    const config = join(dir, "switchyard.yaml");
    writeFileSync(
      config,
      [
        "agent:",
        "  model: anthropic/claude-test",
        "providers:",
        "  anthropic:",
        `    baseUrl: ${sim.url}`,
        "    profiles:",
        `      - { id: work, apiKey: "${KEY_A}" }`,
        `      - { id: home, apiKey: "${KEY_B}" }`,
        "logging:",
        "  level: debug",
        "",
      ].join("\n"),
    );
    sim.scriptFor(KEY_A, { error: { status: 401, message: `invalid x-api-key: ${KEY_A}` } });
    sim.scriptFor(KEY_B, { error: { status: 401, message: `invalid x-api-key: ${KEY_B}` } });
    const gw = await spawnGateway(["--config", config, "--home", home, "--port", "0"]);
    let stdout = "";
    try {
      const res = await fetch(`${gw.url}/v1/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sender: "ann", text: "hello" }),
      });
      const body = (await res.json()) as { state: string; replies: Array<{ text: string }> };
      expect(body.state).toBe("failed");
      expect(JSON.stringify(body)).not.toContain("SECRET");
      const status = await runCli(["status", "--json", "--home", home]);
      expect(status.out + status.err).not.toContain("SECRET");
      const plain = await runCli(["status", "--home", home]);
      expect(plain.out).toMatch(
        /auth\s+anthropic:work cooling 5 min more \(auth, 1 failures in a row\) — WARNING: the key was rejected/,
      );
      const auth = await runCli(["auth", "status", "--home", home, "--config", config]);
      expect(auth.out).toMatch(/work/);
      expect(auth.out + auth.err).not.toContain("SECRET");
      const doctor = await runCli(["doctor", "--home", home, "--config", config]);
      expect(doctor.out).toMatch(/warn\s+auth\s+anthropic:work had its key rejected; cooling until/);
      expect(doctor.out + doctor.err).not.toContain("SECRET");
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
      stdout = gw.output();
    }
    expect(stdout).toMatch(/auth profile cooling down/);
    expect(stdout).not.toContain("SECRET");
    for (const file of readdirSync(join(home, "logs"))) {
      expect(readFileSync(join(home, "logs", file), "utf8")).not.toContain("SECRET");
    }
    const db = new Database(join(home, "switchyard.db"), { readonly: true });
    try {
      const rows = [
        ...db.prepare("SELECT error, attempts FROM runs").all(),
        ...db.prepare("SELECT error FROM inbox").all(),
        ...db.prepare("SELECT text FROM outbox").all(),
        ...db.prepare("SELECT payload FROM transcript").all(),
        ...db.prepare("SELECT * FROM auth_profiles").all(),
      ];
      expect(rows.length).toBeGreaterThan(0);
      expect(JSON.stringify(rows)).not.toContain("SECRET");
    } finally {
      db.close();
    }
  });
});
