/**
 * What every part of the Store contract suite shares: the per-test store (and a second handle
 * onto its database, as another process would have), builders for messages, turns and replies,
 * and seeding helpers that write the way a gateway does: under a session lease (claims, appends
 * and commits are fenced). Times are offsets from T0; nothing here reads a clock.
 */
import { afterEach, beforeEach } from "vitest";
import type { ChatTarget, InboundMessage } from "../../../src/channels/types.js";
import type { InboxRecord } from "../../../src/store/repos/inbox-repo.js";
import type { SessionFence } from "../../../src/store/repos/lease-repo.js";
import type { OutboxInsert, OutboxRecord } from "../../../src/store/repos/outbox-repo.js";
import type { RunRecord } from "../../../src/store/repos/run-repo.js";
import type { TranscriptPayload } from "../../../src/store/repos/transcript-repo.js";
import type { CommitTurn, Store } from "../../../src/store/types.js";

/** Opens a fresh, empty store. */
export type OpenStore = () => Promise<Store> | Store;

/** How an implementation opens a second handle onto a store's database. */
export interface StoreContractOptions {
  /**
   * Opens another handle (another connection, as a second gateway process has) onto the
   * database `first` uses. Without it the suite uses `first` itself as the second process:
   * processes are told apart by their owner ids, so every case still runs, but only an
   * implementation that gives a real second handle proves the cases across connections.
   */
  openPeer?: (first: Store) => Promise<Store> | Store;
}

/** The running test's stores, for the parts of the suite (see useStoreContext). */
export interface StoreContext {
  /** The running test's store: fresh and empty when the test starts. */
  readonly store: Store;
  /** A fresh, empty store of its own (for property-test runs); the caller closes it. */
  makeStore(): Promise<Store>;
  /**
   * A second handle onto the running test's database (see StoreContractOptions.openPeer),
   * opened on first use and closed after the test.
   */
  peer(): Promise<Store>;
  /**
   * A second handle onto `first`'s database, or `first` itself without openPeer; the caller
   * closes it (unless it is `first`).
   */
  peerOf(first: Store): Promise<Store>;
}

/**
 * Registers hooks that open a fresh store before each test (and close it and any peer after)
 * in the current describe block, and returns the context the suite's parts read it from.
 */
export function useStoreContext(open: OpenStore, options: StoreContractOptions = {}): StoreContext {
  let current: Store | undefined;
  let peer: Store | undefined;
  beforeEach(async () => {
    current = await open();
  });
  afterEach(async () => {
    if (peer && peer !== current) await peer.close();
    peer = undefined;
    await current?.close();
    current = undefined;
  });
  return {
    get store(): Store {
      if (!current) throw new Error("the store is open only while a test runs");
      return current;
    },
    makeStore: async () => open(),
    async peer(): Promise<Store> {
      if (!current) throw new Error("the store is open only while a test runs");
      peer ??= options.openPeer ? await options.openPeer(current) : current;
      return peer;
    },
    peerOf: async (first) => (options.openPeer ? options.openPeer(first) : first),
  };
}

/** The suite's epoch: every time is an offset from it. */
export const T0 = Date.UTC(2024, 0, 15, 12, 0, 0);

let messageSeq = 0;

/** An inbound message with a fresh platform id unless one is given. */
export function inbound(over: Partial<InboundMessage> = {}): InboundMessage {
  messageSeq++;
  return {
    channel: "telegram",
    accountId: "default",
    chatId: "chat-1",
    senderId: "user-1",
    senderName: "Ada",
    isDirect: true,
    mentionsBot: true,
    text: `hello ${messageSeq}`,
    attachments: [],
    platformMessageId: `pm-${messageSeq}`,
    receivedAt: T0,
    ...over,
  };
}

/** A Telegram chat (and thread) target. */
export function chat(chatId = "chat-1", threadId?: string): ChatTarget {
  return { channel: "telegram", accountId: "default", chatId, ...(threadId ? { threadId } : {}) };
}

/** A run record with plausible figures; `over` replaces fields. */
export function runRecord(runId: string, over: Partial<RunRecord> = {}): RunRecord {
  return {
    runId,
    sessionKey: "s1",
    trigger: "user",
    channel: "telegram",
    provider: "openai",
    model: "gpt-test",
    startedAt: T0,
    durationMs: 1200,
    outcome: "answered",
    usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 1 },
    toolCalls: 2,
    modelCalls: 3,
    errorKind: null,
    error: null,
    attempts: [],
    calls: [],
    ...over,
  };
}

/** A reply chunk to chat-1 unless `over` says otherwise. */
export function reply(text: string, seq = 0, over: Partial<OutboxInsert> = {}): OutboxInsert {
  return { target: chat(), text, seq, kind: "reply", ...over };
}

/** receive + markQueued: a message that passed access control. */
export async function enqueue(
  store: Store,
  sessionKey: string,
  now = T0,
  over: Partial<InboundMessage> = {},
) {
  const { record } = await store.inbox.receive(inbound(over), sessionKey, now);
  await store.inbox.markQueued(record.id, now);
  return record;
}

/** A turn as `turn` builds it: everything but the session lease it commits under. */
export type TurnDraft = Omit<CommitTurn, "lease">;

/** A turn of session s1 (session id ses-1) answering `inboxIds` with one reply. */
export function turn(runId: string, inboxIds: number[], over: Partial<TurnDraft> = {}): TurnDraft {
  return {
    sessionKey: "s1",
    sessionId: "ses-1",
    runId,
    inboxIds,
    inboxState: "answered",
    events: [{ type: "assistant", text: "hi there", toolCalls: [] }],
    outbox: [reply("hi there")],
    run: runRecord(runId),
    ...over,
  };
}

/** The owner the seeding helpers hold session leases as (ownership cases use owners of their own). */
export const SEED_OWNER = "gw_seed";

/** The seeding helpers' lease TTL: longer than any case moves its clock. */
const SEED_TTL_MS = 24 * 3_600_000;

/**
 * A session lease to write under: acquired for `holder.owner` (default SEED_OWNER) until
 * `now + holder.ttlMs` (default a day), or extended under the same fence if that owner holds it
 * already. A new grant requeues the session's `running` rows whose lease expired, as it does for
 * a gateway. Throws if another owner holds the session.
 */
export async function seedLease(
  store: Store,
  sessionKey: string,
  now = T0,
  holder: { owner?: string; ttlMs?: number } = {},
): Promise<SessionFence> {
  const owner = holder.owner ?? SEED_OWNER;
  const lease = await store.leases.acquireSession(sessionKey, owner, now, holder.ttlMs ?? SEED_TTL_MS);
  if (!lease) throw new Error(`seedLease: ${owner} could not acquire ${sessionKey}`);
  return { owner, fence: lease.fence };
}

/** InboxRepo.claim under SEED_OWNER's lease of the session (see seedLease). */
export async function claimLeased(
  store: Store,
  sessionKey: string,
  sessionId: string,
  runId: string,
  options: { all: boolean },
  now = T0,
): Promise<InboxRecord[]> {
  const lease = await seedLease(store, sessionKey, now);
  return store.inbox.claim(sessionKey, sessionId, runId, { ...options, lease }, now);
}

/** Store.commitTurn of `draft` under SEED_OWNER's lease of its session (see seedLease). */
export async function commitLeased(store: Store, draft: TurnDraft, now: number): Promise<boolean> {
  const lease = await seedLease(store, draft.sessionKey, now);
  return store.commitTurn({ ...draft, lease }, now);
}

/**
 * TranscriptRepo.append under SEED_OWNER's lease of the session (see seedLease); throws if the
 * append is refused.
 */
export async function appendLeased(
  store: Store,
  sessionKey: string,
  sessionId: string,
  runId: string | null,
  payloads: TranscriptPayload[],
  now: number,
): Promise<void> {
  const lease = await seedLease(store, sessionKey, now);
  if (!(await store.transcript.append(sessionKey, sessionId, runId, payloads, now, lease))) {
    throw new Error(`appendLeased: the append to ${sessionKey} was refused`);
  }
}

let runSeq = 0;

/**
 * A whole turn for one message: enqueue, claim, commit `texts` as chunks to `target` (`over`
 * applied to each, e.g. `{ delivered: true }`), under SEED_OWNER's lease of the session, which
 * is released again. Returns the outbox rows.
 */
export async function seedReply(
  store: Store,
  target: ChatTarget,
  texts: string[],
  now: number,
  recipientId = "user-1",
  over: Partial<OutboxInsert> = {},
): Promise<OutboxRecord[]> {
  runSeq++;
  const sessionKey = `s:${target.chatId}:${target.threadId ?? ""}`;
  const runId = `run-seed-${runSeq}`;
  await enqueue(store, sessionKey, now, { chatId: target.chatId, threadId: target.threadId });
  const lease = await seedLease(store, sessionKey, now);
  const [claimed] = await store.inbox.claim(sessionKey, "ses", runId, { all: false, lease }, now);
  if (!claimed) throw new Error("seedReply: nothing claimed");
  const outbox = texts.map((text, seq) => ({
    target,
    text,
    seq,
    kind: "reply" as const,
    recipientId,
    ...over,
  }));
  const ok = await store.commitTurn(
    { ...turn(runId, [claimed.id], { sessionKey, outbox, run: runRecord(runId, { sessionKey }) }), lease },
    now,
  );
  if (!ok) throw new Error("seedReply: commit refused");
  await store.leases.releaseSession(sessionKey, lease.owner, lease.fence, now);
  return store.outbox.listForInbox(claimed.id);
}

/** Everything a refused commit must leave untouched. */
export async function snapshot(store: Store, sessionKey = "s1", sessionId = "ses-1") {
  return {
    inbox: await store.inbox.countByState(),
    outbox: await store.outbox.countByState(),
    transcript: await store.transcript.tail(sessionKey, sessionId, 1000),
    runs: await store.runs.recent(1000),
    usage: await store.usage.byDay(1000),
    calls: await store.usage.totalsSince(0),
  };
}
