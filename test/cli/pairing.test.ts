/**
 * `switchyard pairing list`: pending codes and approved senders, as text or `--json`; read-only
 * (a home without a database gets empty lists and no database).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

/** A home with one pending request (Bea, code EFGH2345) and one approved sender (Ann, id 42). */
async function seeded(): Promise<string> {
  const home = tempDir();
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  const now = Date.now();
  const options = { ttlMs: 3_600_000, maxPending: 3 };
  const base = { channel: "telegram", accountId: "default" };
  await store.pairing.request({ ...base, senderId: "42", senderName: "Ann", code: "ABCD2345" }, options, now);
  await store.pairing.approve("telegram", "ABCD2345", now);
  await store.pairing.request({ ...base, senderId: "43", senderName: "Bea", code: "EFGH2345" }, options, now);
  await store.close();
  return home;
}

describe("switchyard pairing list", () => {
  it("prints pending codes and approved senders as JSON with --json", async () => {
    const home = await seeded();
    const r = await runCli(["pairing", "list", "--json", "--home", home]);
    expect([r.code, r.err]).toEqual([0, ""]);
    const body = JSON.parse(r.out) as { pending: unknown[]; approved: unknown[] };
    expect(body.pending).toEqual([
      expect.objectContaining({ channel: "telegram", senderId: "43", senderName: "Bea", code: "EFGH2345" }),
    ]);
    expect(body.approved).toEqual([
      expect.objectContaining({ channel: "telegram", senderId: "42", senderName: "Ann" }),
    ]);
  });

  it("lists approved senders with how to revoke them; reads nothing into being", async () => {
    const home = await seeded();
    const r = await runCli(["pairing", "list", "--home", home]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^pending\s+telegram EFGH2345\s+Bea \(id 43\)/m);
    expect(r.out).toMatch(
      /^approved\s+telegram Ann \(id 42\) on \S+ — revoke: switchyard pairing revoke telegram 42$/m,
    );
    const empty = join(tempDir(), "home");
    const none = await runCli(["pairing", "--home", empty]);
    expect([none.code, none.out]).toEqual([0, "no pending pairing requests\nno approved senders yet\n"]);
    expect(existsSync(empty)).toBe(false);
  });
});
