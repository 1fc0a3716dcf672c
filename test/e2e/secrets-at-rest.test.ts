/**
 * Secrets never reach the disk: a provider error that echoes the API key is redacted before it
 * is stored (inbox and run errors, the failure notice in the transcript and the outbox), and
 * the home folder, the database and its WAL files are owner-only.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

const KEY = "sk-ant-api03-SECRETSECRETSECRET0123456789";

describe("secrets at rest", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  const parent = mkdtempSync(join(tmpdir(), "sy-secrets-"));
  const home = join(parent, "fresh-home");
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    const config = simulatorConfig(sim, "anthropic");
    gw = await startTestGateway(
      { ...config, providers: { anthropic: { apiKey: KEY, baseUrl: sim.url } } },
      { home },
    );
  });
  afterAll(async () => {
    await gw.stop();
    await sim.close();
    rmSync(parent, { recursive: true, force: true });
  });

  it("stores a provider error that echoes the key only redacted", async () => {
    sim.script({ error: { status: 400, message: `invalid request for key ${KEY}` } });
    const r = await gw.chat("ann", "hello");
    expect(r.body.state).toBe("failed");
    expect(JSON.stringify(r.body)).not.toContain("SECRETSECRET");
    const db = new BetterSqlite3(join(home, "switchyard.db"), { readonly: true });
    try {
      const everything = ["inbox", "runs", "transcript", "outbox"]
        .map((table) => JSON.stringify(db.prepare(`SELECT * FROM ${table}`).all()))
        .join("\n");
      expect(everything).toContain("invalid request for key");
      expect(everything).not.toContain("SECRETSECRET");
      expect(everything).toContain("[REDACTED]");
    } finally {
      db.close();
    }
  });

  it("creates the home folder 0700 and the database files 0600", () => {
    const mode = (p: string) => statSync(p).mode & 0o777;
    expect(mode(home)).toBe(0o700);
    expect(mode(join(home, "switchyard.db"))).toBe(0o600);
    expect(mode(join(home, "switchyard.db-wal"))).toBe(0o600);
  });
});
