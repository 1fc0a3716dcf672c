/**
 * Waiting callers (an HTTP request) and the answers to their messages. An answer is settled
 * from the turn events of this process at once, and from the store otherwise: while anyone
 * waits, the finished state of the awaited rows is read back every `pollMs`, so a message
 * answered by another gateway process on the same database still reaches its request.
 */
import type { ChatAnswer, ChannelName, MailboxEntry } from "../channels/types.js";
import type { Store } from "../store/types.js";
import type { Clock, TimerHandle } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { GatewayEvents } from "./events.js";

/** The failure a waiting request gets when its turn could not be saved. */
export const UNSAVED_TEXT =
  "⚠️ Sorry, I couldn't save my answer (the gateway's database is failing); I'll answer after it restarts.";

export interface AnswerWaitersOptions {
  store: Store;
  events: GatewayEvents;
  clock: Clock;
  logger: Logger;
  /** How often awaited rows are read back from the store; default 1_000 ms. */
  pollMs?: number;
}

/** Owns the waiters and settles them (see the file header). */
export class AnswerWaiters {
  readonly #o: AnswerWaitersOptions;
  readonly #waiters = new Map<number, Array<(answer: ChatAnswer) => void>>();
  #poll: TimerHandle | undefined;

  constructor(options: AnswerWaitersOptions) {
    this.#o = options;
    options.events.on((event) => {
      if (event.type === "turn_committed") {
        for (const inboxId of event.inboxIds) {
          this.#settle({ inboxId, state: event.state, replies: [...event.replies], usage: event.usage });
        }
      } else if (event.type === "turn_unsaved") {
        for (const inboxId of event.inboxIds)
          this.#settle({ inboxId, state: "failed", replies: [UNSAVED_TEXT] });
      } else if (event.type === "message_rejected") {
        this.#settle({ inboxId: event.inboxId, state: "rejected", replies: [...event.replies] });
      }
    });
  }

  /** Resolves when the inbox row is finished; rejects with the signal's reason if it aborts first. */
  async waitForAnswer(inboxId: number, signal?: AbortSignal): Promise<ChatAnswer> {
    const pending = new Promise<ChatAnswer>((resolve, reject) => {
      const waiter = (answer: ChatAnswer) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(answer);
      };
      const onAbort = () => {
        this.#remove(inboxId, waiter);
        reject(signal?.reason ?? new Error("aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.set(inboxId, [...(this.#waiters.get(inboxId) ?? []), waiter]);
    });
    this.#schedulePoll();
    // Finished before we registered (or by another process)?
    await this.#readBack([inboxId]);
    return pending;
  }

  /**
   * Replies delivered on `channel` to `recipientId` after mailbox cursor `after` (the HTTP
   * mailbox); each reply's `id` is its cursor, in delivery order, never skipping one.
   */
  async listReplies(channel: ChannelName, recipientId: string, after: number): Promise<MailboxEntry[]> {
    const { store } = this.#o;
    const rows = await store.outbox.listMailbox(channel, recipientId, after, 100);
    const runIds = [...new Set(rows.flatMap((r) => (r.runId ? [r.runId] : [])))];
    const runs = await Promise.all(runIds.map((id) => store.runs.get(id)));
    const triggers = new Map(runs.flatMap((run) => (run ? [[run.runId, run.trigger] as const] : [])));
    return rows.map((r) => ({
      id: r.mailboxCursor,
      text: r.text,
      createdAt: r.createdAt,
      ...(r.replyTo ? { replyTo: r.replyTo } : {}),
      origin: (r.runId && triggers.get(r.runId)) || runlessOrigin(r.sessionKey),
    }));
  }

  /** The last cursor of one recipient's mailbox (0 when empty). */
  mailboxEnd(channel: ChannelName, recipientId: string): Promise<number> {
    return this.#o.store.outbox.mailboxEnd(channel, recipientId);
  }

  /** Calls `listener` on every reply commit of this process (see AnswerSource.onReplies). */
  onReplies(listener: () => void): () => void {
    return this.#o.events.on((event) => {
      if (event.type === "replies_committed" || event.type === "turn_committed") listener();
    });
  }

  /** Waiters still open (for tests and status). */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Stops the store poll (the waiters stay; they settle on events or their own abort). */
  stop(): void {
    this.#o.clock.clearTimeout(this.#poll);
    this.#poll = undefined;
  }

  #settle(answer: ChatAnswer): void {
    const list = this.#waiters.get(answer.inboxId);
    if (!list) return;
    this.#waiters.delete(answer.inboxId);
    for (const w of list) w(answer);
  }

  #remove(inboxId: number, waiter: (answer: ChatAnswer) => void): void {
    const rest = (this.#waiters.get(inboxId) ?? []).filter((w) => w !== waiter);
    if (rest.length > 0) this.#waiters.set(inboxId, rest);
    else this.#waiters.delete(inboxId);
  }

  /** Settles every awaited row the store shows finished. */
  async #readBack(ids: readonly number[]): Promise<void> {
    const { store } = this.#o;
    for (const inboxId of ids) {
      if (!this.#waiters.has(inboxId)) continue;
      const record = await store.inbox.get(inboxId);
      if (!record) this.#settle({ inboxId, state: "rejected", replies: [] });
      else if (record.state === "answered" || record.state === "failed") {
        const [rows, run] = await Promise.all([
          store.outbox.listForInbox(inboxId),
          record.runId ? store.runs.get(record.runId) : undefined,
        ]);
        this.#settle({
          inboxId,
          state: record.state,
          replies: rows.map((r) => r.text),
          ...(run ? { usage: run.usage } : {}),
        });
      } else if (record.state === "rejected") {
        const rows = await store.outbox.listForInbox(inboxId);
        this.#settle({ inboxId, state: "rejected", replies: rows.map((r) => r.text) });
      }
    }
  }

  #schedulePoll(): void {
    if (this.#poll || this.#waiters.size === 0) return;
    this.#poll = this.#o.clock.setTimeout(
      () => {
        this.#poll = undefined;
        this.#readBack([...this.#waiters.keys()])
          .catch((err: unknown) => this.#o.logger.warn({ err }, "could not read awaited answers back"))
          .finally(() => this.#schedulePoll());
      },
      this.#o.pollMs ?? 1_000,
      { unref: true },
    );
  }
}

/**
 * Who wrote a mailbox row that no run wrote, by its session (`agent:<id>:cron:<job>`,
 * `agent:<id>:task:<id>`): a job's notice, an assignment's report, else the gateway itself.
 */
function runlessOrigin(sessionKey: string): string {
  const kind = sessionKey.split(":")[2];
  return kind === "cron" ? "cron" : kind === "task" ? "assignment" : "gateway";
}
