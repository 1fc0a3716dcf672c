/**
 * The checkpoint worker: with it, commits only append to the WAL and the worker copies it back,
 * so the log stays small while the writer works in bursts; close() waits for it to finish.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/types.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { SAFETY_AUTOCHECKPOINT_PAGES } from "../../src/store/sqlite/wal-checkpointer.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const message = (i: number): InboundMessage => ({
  channel: "http",
  accountId: "default",
  chatId: "c",
  senderId: "s",
  senderName: "S",
  isDirect: true,
  mentionsBot: true,
  text: `message ${i} ${"x".repeat(400)}`,
  attachments: [],
  platformMessageId: `p${i}`,
  receivedAt: i,
});

const walPages = (path: string) => statSync(`${path}-wal`).size / 4096;

describe("WalCheckpointer", () => {
  it("keeps the WAL small across bursts of commits, and hands the writer a high safety net", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-wal-"));
    dirs.push(dir);
    const path = join(dir, "switchyard.db");
    const store = openSqliteStore({ path, checkpointInWorker: true });
    let largest = 0;
    for (let burst = 0; burst < 12; burst++) {
      for (let i = 0; i < 100; i++) await store.inbox.receive(message(burst * 100 + i), "k", 1);
      largest = Math.max(largest, walPages(path));
      await new Promise((r) => setTimeout(r, 300)); // the worker's interval is 250 ms
    }
    // 1,200 commits of several pages each: had the worker not checkpointed, the log would have
    // grown to the writer's safety net (4,000 pages) and beyond.
    expect(largest).toBeLessThan(3_000);
    const peek = new BetterSqlite3(path, { readonly: true });
    expect(peek.pragma("wal_autocheckpoint", { simple: true })).toBe(1000); // a new connection's default
    peek.close();
    expect(SAFETY_AUTOCHECKPOINT_PAGES).toBeGreaterThan(1000);
    await store.close();
    expect((await openCount(path)).inbox).toBe(1_200);
  });

  it("is not started for an in-memory store, and close() is idempotent", async () => {
    const store = openSqliteStore({ path: ":memory:", checkpointInWorker: true });
    await store.close();
    await store.close();
  });
});

async function openCount(path: string): Promise<{ inbox: number }> {
  const store = openSqliteStore({ path });
  const counts = await store.inbox.countByState();
  await store.close();
  return { inbox: Object.values(counts).reduce((a, b) => a + b, 0) };
}
