/**
 * The checkpoint worker and the writer's safety net, observed in the WAL-index header (the
 * `-shm` file; SQLite's WAL file format, §2.2): `mxFrame` frames are in the log and
 * `nBackfill` of them are copied back. With `checkpointInWorker` the writer checkpoints only once
 * the log passes SAFETY_AUTOCHECKPOINT_PAGES; below that the worker does it, so commits only
 * append. Nothing here waits for time: each step waits for the header to show the checkpoint.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { endianness, tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/types.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { SAFETY_AUTOCHECKPOINT_PAGES, WalCheckpointer } from "../../src/store/sqlite/wal-checkpointer.js";
import { until } from "../helpers/until.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "sy-wal-"));
  dirs.push(dir);
  return join(dir, "switchyard.db");
}

const message = (i: number, text = `message ${i} ${"x".repeat(400)}`): InboundMessage => ({
  channel: "http",
  accountId: "default",
  chatId: "c",
  senderId: "s",
  senderName: "S",
  isDirect: true,
  mentionsBot: true,
  text,
  attachments: [],
  platformMessageId: `p${i}`,
  receivedAt: i,
});

/** Frames in the WAL and frames copied back to the database, from the WAL-index header. */
function walIndex(path: string): { mxFrame: number; nBackfill: number } {
  const shm = readFileSync(`${path}-shm`);
  // The WAL-index is in the host's byte order.
  const u32 = (offset: number) =>
    endianness() === "LE" ? shm.readUInt32LE(offset) : shm.readUInt32BE(offset);
  return { mxFrame: u32(16), nBackfill: u32(96) };
}

const checkpointed = (path: string) => {
  const { mxFrame, nBackfill } = walIndex(path);
  return nBackfill === mxFrame;
};

const walPages = (path: string) => statSync(`${path}-wal`).size / 4096;

describe("WalCheckpointer", () => {
  it("leaves a commit below the safety net to the worker: the writer only appends", async () => {
    const path = dbPath();
    const store = openSqliteStore({ path, checkpointInWorker: true });
    await until(() => checkpointed(path), "the worker's first checkpoint");
    // One commit of about SAFETY - 400 pages: far past SQLite's default of 1,000.
    await store.inbox.receive(message(1, "x".repeat((SAFETY_AUTOCHECKPOINT_PAGES - 400) * 4_000)), "k", 1);
    // Read in the same tick as the commit: the worker cannot have copied thousands of pages yet.
    const afterCommit = walIndex(path);
    expect(afterCommit.mxFrame).toBeGreaterThan(1_000);
    expect(afterCommit.mxFrame).toBeLessThan(SAFETY_AUTOCHECKPOINT_PAGES);
    expect(afterCommit.mxFrame - afterCommit.nBackfill).toBeGreaterThan(1_000); // not checkpointed
    // No further commit: only the worker can copy the log back.
    await until(() => checkpointed(path), "the worker's checkpoint");
    await store.close();
  });

  it("has the writer checkpoint itself once a commit takes the log past SAFETY_AUTOCHECKPOINT_PAGES", async () => {
    const path = dbPath();
    const store = openSqliteStore({ path, checkpointInWorker: true });
    // The worker has copied the migrations back and sits idle until the next commit, so it holds
    // no checkpoint lock that would make the writer's own checkpoint give way.
    await until(() => checkpointed(path), "the worker's first checkpoint");
    await store.inbox.receive(message(1, "x".repeat((SAFETY_AUTOCHECKPOINT_PAGES + 200) * 4_096)), "k", 1);
    const afterCommit = walIndex(path);
    expect(afterCommit.mxFrame).toBeGreaterThan(SAFETY_AUTOCHECKPOINT_PAGES);
    // Copied back inside the commit itself: a worker starting after it could not have copied
    // these thousands of pages by the time the same tick reads the header.
    expect(afterCommit.nBackfill).toBe(afterCommit.mxFrame);
    await store.close();
  });

  it("keeps the WAL small across bursts of commits", async () => {
    const path = dbPath();
    const store = openSqliteStore({ path, checkpointInWorker: true });
    let largest = 0;
    for (let burst = 0; burst < 12; burst++) {
      for (let i = 0; i < 100; i++) await store.inbox.receive(message(burst * 100 + i), "k", 1);
      largest = Math.max(largest, walPages(path));
      await until(() => checkpointed(path), `the worker's checkpoint after burst ${burst}`);
    }
    // 1,200 commits of several pages each: the log is reused after every checkpoint, so it stays
    // about one burst long; without the worker it would grow to the safety net (4,000 pages).
    expect(largest).toBeLessThan(1_000);
    await store.close();
    expect((await openCount(path)).inbox).toBe(1_200);
  });

  it("checkpoints once more when stopped", async () => {
    const path = dbPath();
    const db = new BetterSqlite3(path);
    db.pragma("journal_mode = WAL");
    db.pragma("wal_autocheckpoint = 0"); // this writer never checkpoints
    db.exec("CREATE TABLE t (x TEXT)");
    // An interval no test outlives: only stop() can checkpoint.
    const checkpointer = new WalCheckpointer({ path, intervalMs: 3_600_000 });
    db.prepare("INSERT INTO t VALUES (?)").run("y".repeat(100_000));
    expect(checkpointed(path)).toBe(false);
    await checkpointer.stop();
    expect(checkpointed(path)).toBe(true);
    await checkpointer.stop(); // idempotent
    db.close();
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
