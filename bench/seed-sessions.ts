/**
 * Fills a gateway home's SQLite store with `count` sessions the way a gateway writes them: per
 * session one message received and queued, claimed under the session's lease (which writes its
 * user event), and one turn committed (the assistant's answer, a run with two model calls, so
 * two usage rows billed today), then the lease released. Times are the last few seconds.
 */
import { join } from "node:path";
import type { InboundMessage } from "../src/channels/types.js";
import { sessionKeyFor } from "../src/gateway/session-key.js";
import { openSqliteStore } from "../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../src/store/types.js";

const OWNER = "gw_bench_seed";

/** Writes the sessions into `<home>/switchyard.db`; returns their keys. */
export async function seedSessions(home: string, count: number, now = Date.now()): Promise<string[]> {
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  const keys: string[] = [];
  try {
    for (let i = 0; i < count; i++) keys.push(await seedOne(store, i, now - (count - i)));
    const stored = await store.sessions.count();
    if (stored !== count) throw new Error(`the home holds ${stored} sessions, expected ${count}`);
    return keys;
  } finally {
    await store.close();
  }
}

async function seedOne(store: Store, i: number, at: number): Promise<string> {
  const message: InboundMessage = {
    channel: "http",
    accountId: "default",
    chatId: `user-${i}`,
    senderId: `user-${i}`,
    senderName: `User ${i}`,
    isDirect: true,
    mentionsBot: true,
    text: `Hello, this is message one of user ${i}.`,
    attachments: [],
    platformMessageId: `seed-${i}`,
    receivedAt: at,
  };
  const sessionKey = sessionKeyFor(message, "main", "per-channel-peer");
  const sessionId = `ses-seed-${i}`;
  const runId = `run-seed-${i}`;
  const target = { channel: "http", accountId: "default", chatId: message.chatId } as const;
  await store.sessions.ensure(sessionKey, sessionId, target, at);
  await store.inbox.receive(message, sessionKey, at, "queued");
  const lease = await store.leases.acquireSession(sessionKey, OWNER, at, 60_000);
  if (!lease) throw new Error(`seed: could not lease ${sessionKey}`);
  const fence = { owner: OWNER, fence: lease.fence };
  const claimed = await store.inbox.claim(sessionKey, sessionId, runId, { all: false, lease: fence }, at);
  const usage = { inputTokens: 1_200, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const call = {
    at,
    provider: "anthropic",
    model: "claude-bench",
    profileId: "default",
    usage,
    costUsd: 0.004,
  };
  const ok = await store.commitTurn(
    {
      sessionKey,
      sessionId,
      runId,
      inboxIds: claimed.map((c) => c.id),
      inboxState: "answered",
      events: [{ type: "assistant", text: `Hello User ${i}, how can I help?`, toolCalls: [] }],
      outbox: [{ target, text: `Hello User ${i}, how can I help?`, seq: 0, kind: "reply", delivered: true }],
      run: {
        runId,
        sessionKey,
        trigger: "user",
        channel: "http",
        provider: "anthropic",
        model: "claude-bench",
        startedAt: at,
        durationMs: 900,
        outcome: "answered",
        usage: { ...usage, inputTokens: 2 * usage.inputTokens, outputTokens: 2 * usage.outputTokens },
        toolCalls: 0,
        modelCalls: 2,
        errorKind: null,
        error: null,
        attempts: [],
        calls: [call, call],
      },
      lease: fence,
    },
    at,
  );
  if (!ok || claimed.length !== 1) throw new Error(`seed: the turn of ${sessionKey} was not committed`);
  await store.leases.releaseSession(sessionKey, OWNER, lease.fence, at);
  return sessionKey;
}
