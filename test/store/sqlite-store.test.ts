import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/types.js";
import { toStoreError } from "../../src/store/sqlite/errors.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../src/store/types.js";
import { StoreError } from "../../src/store/store-error.js";
import { runStoreContract } from "../contract/store-contract.js";

const root = mkdtempSync(join(tmpdir(), "switchyard-store-"));
let fileSeq = 0;
const freshPath = (name = "store") => join(root, `${name}-${++fileSeq}`, "switchyard.db");

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Where each file store of the contract suite lives, so a second handle can open it. */
const storePaths = new WeakMap<Store, string>();

// Two connections on one file are two processes as far as the store can tell: the ownership
// cases of the suite run across them.
runStoreContract(
  "sqlite file",
  () => {
    const path = freshPath();
    const store = openSqliteStore({ path });
    storePaths.set(store, path);
    return store;
  },
  {
    openPeer: (first) => {
      const path = storePaths.get(first);
      if (!path) throw new Error("openPeer: not a store this suite opened");
      return openSqliteStore({ path });
    },
  },
);
runStoreContract("sqlite :memory:", () => openSqliteStore({ path: ":memory:" }));

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

function message(platformMessageId: string): InboundMessage {
  return {
    channel: "console",
    accountId: "default",
    chatId: "local",
    senderId: "me",
    senderName: "Me",
    isDirect: true,
    mentionsBot: true,
    text: "hi",
    attachments: [],
    platformMessageId,
    receivedAt: 1,
  };
}

/** The StoreError a call threw (sync) or rejected with (async). */
async function storeErrorOf(fn: () => unknown): Promise<StoreError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    return err as StoreError;
  }
  throw new Error("expected a StoreError, nothing was thrown");
}

describe("openSqliteStore", () => {
  it("creates the folder, uses WAL and migrates to the newest schema", () => {
    const path = freshPath();
    const store = openSqliteStore({ path });
    expect(store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    store.close();
    store.close(); // idempotent
    const raw = new BetterSqlite3(path, { readonly: true });
    try {
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(raw.pragma("user_version", { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    } finally {
      raw.close();
    }
  });

  it("numbers migrations 1..N without gaps", () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(LATEST_SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  it("v4 re-keys existing inbox rows with their chat, so redeliveries are still recognised", async () => {
    const path = freshPath();
    mkdirSync(join(path, ".."), { recursive: true });
    const raw = new BetterSqlite3(path);
    for (const m of MIGRATIONS.filter((m) => m.version <= 3)) raw.exec(m.sql);
    raw.pragma("user_version = 3");
    raw
      .prepare(
        `INSERT INTO inbox (dedupe_key, session_key, message, state, received_at, updated_at)
         VALUES ('console:default:m1', 'console:me', ?, 'answered', 1, 1)`,
      )
      .run(JSON.stringify(message("m1")));
    raw.close();

    const store = openSqliteStore({ path });
    try {
      const again = await store.inbox.receive(message("m1"), "console:me", 2);
      expect(again.duplicate).toBe(true);
      expect(again.record.dedupeKey).toBe("console:default:local:m1");
    } finally {
      await store.close();
    }
  });

  it("v5 gives rows left running or sending no owner and an expired lease, and keeps mailbox positions", async () => {
    const path = freshPath();
    mkdirSync(join(path, ".."), { recursive: true });
    const raw = new BetterSqlite3(path);
    for (const m of MIGRATIONS.filter((m) => m.version <= 4)) raw.exec(m.sql);
    raw.pragma("user_version = 4");
    const inbox = raw.prepare(
      `INSERT INTO inbox (dedupe_key, session_key, message, state, attempts, run_id, received_at, updated_at)
       VALUES (?, 'console:me', ?, ?, 1, 'run-old', 1, 1)`,
    );
    inbox.run("console:default:local:m1", JSON.stringify(message("m1")), "running");
    inbox.run("console:default:local:m2", JSON.stringify(message("m2")), "queued");
    const outbox = raw.prepare(
      `INSERT INTO outbox (session_key, channel, account_id, chat_id, recipient_id, text, seq, kind, state,
         next_attempt_at, created_at, updated_at)
       VALUES ('console:me', ?, 'default', 'local', ?, ?, 0, 'reply', ?, 1, 1, 1)`,
    );
    outbox.run("telegram", "me", "mid-send", "sending");
    outbox.run("http", "ann", "for ann 1", "sent");
    outbox.run("http", null, "for nobody", "sent");
    outbox.run("http", "ann", "for ann 2", "sent");
    outbox.run("http", "bob", "for bob", "sent");
    raw.close();

    const store = openSqliteStore({ path });
    try {
      expect(await store.inbox.get(1)).toMatchObject({ state: "running", owner: null, leaseUntil: 0 });
      expect(await store.inbox.get(2)).toMatchObject({ state: "queued", owner: null, leaseUntil: null });
      expect(await store.outbox.get(1)).toMatchObject({ state: "sending", owner: null, leaseUntil: 0 });
      // Taken over at the next start, at any time after the upgrade.
      expect((await store.inbox.requeueExpired(2)).map((r) => r.id)).toEqual([1]);
      expect((await store.outbox.resetExpired(2)).map((r) => r.id)).toEqual([1]);
      // A client that kept `after` = an outbox id from before reads on from the same place.
      const ann = await store.outbox.listMailbox("http", "ann", 0, 10);
      expect(ann.map((r) => [r.text, r.mailboxCursor])).toEqual([
        ["for ann 1", 2],
        ["for ann 2", 4],
      ]);
      expect(await store.outbox.listMailbox("http", "ann", 4, 10)).toEqual([]);
      expect((await store.outbox.get(3))?.mailboxCursor).toBeNull();
      const { record } = await store.inbox.receive(
        { ...message("m3"), channel: "http" },
        "http:ann",
        3,
        "queued",
      );
      const lease = await store.leases.acquireSession("http:ann", "gw_test", 3, 60_000);
      if (!lease) throw new Error("the session lease was refused");
      const [claimed] = await store.inbox.claim("http:ann", "ses", "run-new", { all: false, lease }, 3);
      const target = { channel: "http", accountId: "default", chatId: "ann" } as const;
      const reply = {
        target,
        text: "new",
        seq: 0,
        kind: "reply" as const,
        recipientId: "ann",
        delivered: true,
      };
      const run = {
        runId: "run-new",
        sessionKey: "http:ann",
        trigger: "user" as const,
        channel: "http",
        provider: "openai",
        model: "m",
        startedAt: 3,
        durationMs: 1,
        outcome: "answered" as const,
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
        toolCalls: 0,
        modelCalls: 1,
        errorKind: null,
        error: null,
        attempts: [],
        calls: [],
      };
      const committed = await store.commitTurn(
        {
          sessionKey: "http:ann",
          sessionId: "ses",
          runId: "run-new",
          inboxIds: [claimed?.id ?? record.id],
          inboxState: "answered",
          events: [],
          outbox: [reply],
          run,
          lease,
        },
        4,
      );
      expect(committed).toBe(true);
      expect(
        (await store.outbox.listMailbox("http", "ann", 4, 10)).map((r) => [r.text, r.mailboxCursor]),
      ).toEqual([["new", 5]]);
      expect((await store.outbox.listMailbox("http", "bob", 0, 10)).map((r) => r.mailboxCursor)).toEqual([5]);
    } finally {
      await store.close();
    }
  });

  it("v6 reads runs from before with no attempts and sessions with no model, and starts usage calls empty", async () => {
    const path = freshPath();
    mkdirSync(join(path, ".."), { recursive: true });
    const raw = new BetterSqlite3(path);
    for (const m of MIGRATIONS.filter((m) => m.version <= 5)) raw.exec(m.sql);
    raw.pragma("user_version = 5");
    raw
      .prepare(
        `INSERT INTO runs (run_id, session_key, run_trigger, channel, provider, model, started_at, duration_ms,
           outcome, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, tool_calls, model_calls,
           error_kind, error, committed_at)
         VALUES ('run-old', 'console:me', 'user', 'console', 'openai', 'm', 1, 2, 'answered', 3, 4, 0, 0, 0, 1,
           NULL, NULL, 5)`,
      )
      .run();
    raw
      .prepare(
        "INSERT INTO sessions (session_key, session_id, last_target, created_at, updated_at) VALUES ('console:me', 'ses-1', NULL, 1, 1)",
      )
      .run();
    raw.close();

    const store = openSqliteStore({ path });
    try {
      expect(await store.runs.get("run-old")).toMatchObject({ runId: "run-old", attempts: [], calls: [] });
      expect(await store.sessions.get("console:me")).toMatchObject({ sessionId: "ses-1", model: null });
      expect(await store.usage.totalsSince(0)).toEqual({ calls: 0, tokens: 0, costUsd: 0 });
      expect(await store.authProfiles.list()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("v15 reads sessions from before as normal mode; a mode survives close and reopen; an unknown mode is refused", async () => {
    const path = freshPath();
    mkdirSync(join(path, ".."), { recursive: true });
    const raw = new BetterSqlite3(path);
    for (const m of MIGRATIONS.filter((m) => m.version <= 14)) raw.exec(m.sql);
    raw.pragma("user_version = 14");
    raw
      .prepare(
        "INSERT INTO sessions (session_key, session_id, last_target, created_at, updated_at) VALUES ('console:me', 'ses-1', NULL, 1, 1)",
      )
      .run();
    raw.close();

    const first = openSqliteStore({ path });
    expect(await first.sessions.get("console:me")).toMatchObject({ sessionId: "ses-1", mode: "normal" });
    expect(await first.sessions.setMode("console:me", "plan", 2)).toBe(true);
    const bogus = "drafting" as unknown as Parameters<typeof first.sessions.setMode>[1];
    await expect(first.sessions.setMode("console:me", bogus, 3)).rejects.toThrow(StoreError);
    first.close();

    const second = openSqliteStore({ path });
    try {
      expect(await second.sessions.get("console:me")).toMatchObject({ mode: "plan", updatedAt: 2 });
    } finally {
      second.close();
    }
  });

  it("keeps data across close and reopen", async () => {
    const path = freshPath();
    const first = openSqliteStore({ path });
    const { record } = await first.inbox.receive(message("m1"), "console:me", 10);
    await first.inbox.markQueued(record.id, 11);
    await first.sessions.ensure("console:me", "ses-1", null, 12);
    first.close();

    const second = openSqliteStore({ path });
    try {
      expect(second.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      expect(await second.inbox.get(record.id)).toMatchObject({ state: "queued", updatedAt: 11 });
      expect((await second.inbox.receive(message("m1"), "console:me", 13)).duplicate).toBe(true);
      expect((await second.sessions.get("console:me"))?.sessionId).toBe("ses-1");
    } finally {
      second.close();
    }
  });

  it("refuses a database whose schema is newer than this code", async () => {
    const path = freshPath();
    mkdirSync(join(path, ".."), { recursive: true });
    const raw = new BetterSqlite3(path);
    raw.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 3}`);
    raw.close();
    const err = await storeErrorOf(() => openSqliteStore({ path }));
    expect(err.code).toBe("schema_too_new");
    expect(err.message).toBe(
      `database ${path} has schema version ${LATEST_SCHEMA_VERSION + 3} but this switchyard knows up to ${LATEST_SCHEMA_VERSION}; upgrade switchyard or restore a backup`,
    );
  });

  it("reports a file that is not a database as corrupt", async () => {
    const path = freshPath();
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, "this is not a database\n".repeat(500));
    const err = await storeErrorOf(() => openSqliteStore({ path }));
    expect(err.code).toBe("corrupt");
    expect(err.message).toBe(
      `database ${path} is not a valid switchyard database or is damaged; move it aside and restart to create a fresh one`,
    );
    expect(err.cause).toBeInstanceOf(Error);
  });

  it("with readonly: true reads, and refuses writes as read_only", async () => {
    const path = freshPath();
    const writer = openSqliteStore({ path });
    const { record } = await writer.inbox.receive(message("m1"), "k", 1);
    writer.close();

    const reader = openSqliteStore({ path, readonly: true });
    try {
      expect((await reader.inbox.get(record.id))?.state).toBe("received");
      const err = await storeErrorOf(() => reader.inbox.receive(message("m2"), "k", 2));
      expect(err.code).toBe("read_only");
      expect(err.message).toContain(path);
      expect(await reader.inbox.countByState()).toMatchObject({ received: 1 });
    } finally {
      reader.close();
    }
  });

  it("with readonly: true refuses a database that needs a migration", async () => {
    const path = freshPath();
    mkdirSync(join(path, ".."), { recursive: true });
    new BetterSqlite3(path).close(); // a valid, empty database at schema version 0
    const err = await storeErrorOf(() => openSqliteStore({ path, readonly: true }));
    expect(err.code).toBe("read_only");
  });

  // Root ignores file permissions: as root (CI), the write is tried by a child running as nobody.
  it("reports a database in a read-only folder as read_only", async () => {
    const path = freshPath();
    openSqliteStore({ path }).close();
    const dir = join(path, "..");
    chmodSync(path, 0o444);
    chmodSync(dir, 0o555);
    try {
      if (isRoot) {
        chmodSync(root, 0o755); // nobody must reach the folder
        const probe = spawnSync(
          process.execPath,
          ["--import", "tsx", "test/helpers/store-write-probe.ts", path],
          {
            cwd: join(import.meta.dirname, "../.."),
            uid: 65534,
            gid: 65534,
            env: { PATH: process.env.PATH, HOME: tmpdir() },
            encoding: "utf8",
            timeout: 60_000,
          },
        );
        expect(probe.stderr).toBe("");
        expect(probe.stdout.trim()).toBe("read_only");
        return;
      }
      const err = await storeErrorOf(async () => {
        const store = openSqliteStore({ path });
        try {
          await store.inbox.receive(message("m1"), "k", 1);
        } finally {
          store.close();
        }
      });
      expect(err.code).toBe("read_only");
    } finally {
      chmodSync(dir, 0o755);
      chmodSync(path, 0o644);
    }
  });

  it("reports a database another connection holds the write lock on as locked", async () => {
    const path = freshPath();
    const store = openSqliteStore({ path, busyTimeoutMs: 20 });
    const other = new BetterSqlite3(path);
    try {
      other.exec("BEGIN IMMEDIATE");
      const started = performance.now();
      const err = await storeErrorOf(() => store.inbox.receive(message("m1"), "k", 1));
      expect(err.code).toBe("locked");
      expect(err.message).toBe(`database ${path} is locked by another process (is another gateway running?)`);
      expect(performance.now() - started).toBeLessThan(2_000);
      other.exec("ROLLBACK");
      expect((await store.inbox.receive(message("m1"), "k", 1)).duplicate).toBe(false);
    } finally {
      other.close();
      store.close();
    }
  });

  it("opens :memory: without touching the disk", () => {
    const store = openSqliteStore({ path: ":memory:" });
    expect(store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    store.close();
    expect(existsSync(":memory:")).toBe(false);
  });

  it("rejects invalid options, naming the field and the value", () => {
    expect(() => openSqliteStore({ path: "" })).toThrow(/store path .* got ""/);
    expect(() => openSqliteStore({ path: ":memory:", busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs .* got -1/);
    expect(() => openSqliteStore({ path: ":memory:", busyTimeoutMs: 1.5 })).toThrow(TypeError);
    expect(() => openSqliteStore({ path: ":memory:", readonly: true })).toThrow(/readonly/);
  });

  it("fails calls on a closed store with a StoreError", async () => {
    const store = openSqliteStore({ path: ":memory:" });
    store.close();
    const err = await storeErrorOf(() => store.inbox.countByState());
    expect(err.code).toBe("io");
  });
});

describe("toStoreError", () => {
  const sqliteError = (code: string) => new BetterSqlite3.SqliteError(`sqlite says ${code}`, code);

  it.each([
    ["SQLITE_BUSY", "locked"],
    ["SQLITE_BUSY_SNAPSHOT", "locked"],
    ["SQLITE_LOCKED", "locked"],
    ["SQLITE_CORRUPT", "corrupt"],
    ["SQLITE_NOTADB", "corrupt"],
    ["SQLITE_READONLY", "read_only"],
    ["SQLITE_READONLY_DBMOVED", "read_only"],
    ["SQLITE_FULL", "disk_full"],
    ["SQLITE_IOERR_WRITE", "io"],
    ["SQLITE_CANTOPEN", "io"],
    ["SQLITE_BUSYX", "io"],
  ] as const)("maps %s to %s", (code, expected) => {
    const cause = sqliteError(code);
    const path = join(root, "table", "switchyard.db");
    const err = toStoreError(cause, path);
    expect(err.code).toBe(expected);
    expect(err.cause).toBe(cause);
    expect(err.message).toContain(path);
  });

  it("says the disk is full in plain words", () => {
    expect(toStoreError(sqliteError("SQLITE_FULL"), "/x.db").message).toContain("disk is full");
  });

  it("maps file-system errors and passes StoreErrors through", () => {
    const eacces = Object.assign(new Error("permission denied"), { code: "EACCES" });
    expect(toStoreError(eacces, "/x.db").code).toBe("read_only");
    const enospc = Object.assign(new Error("no space"), { code: "ENOSPC" });
    expect(toStoreError(enospc, "/x.db").code).toBe("disk_full");
    const own = new StoreError("locked", "already converted");
    expect(toStoreError(own, "/x.db")).toBe(own);
    expect(toStoreError("a string", "/x.db")).toMatchObject({
      code: "io",
      message: "database /x.db failed: a string",
    });
  });
});
