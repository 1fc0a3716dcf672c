/**
 * An assignment's owner, in the chat it came from: what they are told, through the outbox like
 * any reply (kind `notice`) — finished work items (at most one message per `reportEveryMinutes`,
 * batched), a question and its one reminder, one message at the end with the outcome, the
 * summary and where the outputs are — and their answers (their next message in that chat).
 */
import { contractPaths } from "../../harness/assignments/contract.js";
import { firstLine, projectDir } from "../../harness/assignments/project-files.js";
import type { ChannelDirectory } from "../../gateway/channel-directory.js";
import type { GatewayEvents } from "../../gateway/events.js";
import { replyRows } from "../../gateway/replies.js";
import type { ChatTarget } from "../../channels/types.js";
import { queueRun, recordAnswer } from "../../harness/assignments/assignments.js";
import type { Assignment, PendingQuestion } from "../../store/repos/assignment-repo.js";
import type { Store } from "../../store/types.js";
import type { Clock } from "../../util/clock.js";

/** What the owner's messages need. */
export interface OwnerMessagesOptions {
  store: Pick<Store, "assignments" | "outbox" | "wakes">;
  channels: ChannelDirectory;
  clock: Clock;
  reportEveryMinutes: number;
  /** The event bus, once built: rows written here go out now. */
  events(): Pick<GatewayEvents, "emit"> | undefined;
  /** Pokes the scheduler so a wake due now runs now. */
  poke(dueNow?: boolean): void;
}

/** Owns what passes between assignments and their owners (see the file header). */
export class OwnerMessages {
  readonly #o: OwnerMessagesOptions;

  constructor(options: OwnerMessagesOptions) {
    this.#o = options;
  }

  /** The end: one message with the outcome, the summary and where the outputs are. */
  async end(a: Assignment, summary: string | undefined): Promise<void> {
    const done = a.items.filter((i) => i.status === "done").length;
    const outputs = [`${projectDir(a.id)}/`, ...contractPaths(a.contract)];
    const text =
      a.state === "done"
        ? `✅ Task ${a.id} is done: ${firstLine(a.goal, 80)}\n${summary ?? ""}\n${done}/${a.items.length} work items done, ${a.checkpoint.runs} runs. Outputs: ${outputs.join(", ")}`
        : `⚠️ Task ${a.id} stopped (${a.state}): ${a.stateReason ?? "no reason given"}. ${done}/${a.items.length} work items done after ${a.checkpoint.runs} runs. Details: switchyard task show ${a.id}`;
    await this.notify(a, text);
    // After the message: a crash between the two sends it again at the next start, never not at all.
    const now = this.#o.clock.now();
    Object.assign(a.checkpoint, { unreported: [], reportedAt: now, endNotified: true });
    await this.#o.store.assignments.saveWork(a.id, { checkpoint: a.checkpoint }, now);
  }

  /** Tells the owner which items were finished, at most once per reportEveryMinutes (batched). */
  async report(a: Assignment): Promise<void> {
    const cp = a.checkpoint;
    const now = this.#o.clock.now();
    if (cp.unreported.length === 0) return;
    if (cp.reportedAt !== null && now - cp.reportedAt < this.#o.reportEveryMinutes * 60_000) return;
    const done = a.items.filter((i) => i.status === "done").length;
    const titles = cp.unreported.map((t) => `"${firstLine(t, 60)}"`).join(", ");
    cp.unreported = [];
    cp.reportedAt = now;
    await this.#o.store.assignments.saveWork(a.id, { checkpoint: cp }, now);
    await this.notify(
      a,
      `📋 Task ${a.id}: done ${titles} — ${done} of ${a.items.length} work items finished.`,
    );
  }

  /** A message to the owner's chat (none when the assignment has no owner). */
  async notify(a: Assignment, text: string): Promise<void> {
    if (!a.owner) return;
    // The chat id names the person in a direct chat (the HTTP mailbox is keyed by it).
    const rows = replyRows(this.#o.channels.channelFor(a.owner), a.owner, text, {
      kind: "notice",
      recipientId: a.owner.chatId,
    });
    await this.#o.store.outbox.insert(rows, a.sessionKey, this.#o.clock.now());
    this.#o.events()?.emit({ type: "replies_committed" });
  }

  /** A pending question at its reminder or expiry: remind once, then go on without an answer. */
  async questionDue(a: Assignment): Promise<Assignment | undefined> {
    const { store, clock } = this.#o;
    const q = a.question;
    const now = clock.now();
    if (!q) return undefined;
    if (now >= q.expiresAt) {
      const hours = Math.round((q.expiresAt - q.askedAt) / 3_600_000);
      const answer = `(No answer from the owner within ${hours} h. Decide without it, note the assumption in notes.md, or end the run.)`;
      const question = { ...q, answer, expired: true };
      if (
        !(await store.assignments.setState(a.id, "active", "the question expired", now, {
          from: ["requires_action"],
          work: { question },
        }))
      )
        return undefined;
      await this.notify(
        a,
        `⌛ Task ${a.id}: no answer to "${firstLine(q.text, 80)}" within ${hours} h; it goes on without one.`,
      );
      return { ...a, state: "active", question };
    }
    if (now >= q.remindAt && !q.reminded) {
      // Only while it still waits: an answer that came meanwhile is not overwritten.
      const work = { question: { ...q, reminded: true } };
      if (
        !(await store.assignments.setState(a.id, "requires_action", a.stateReason, now, {
          from: ["requires_action"],
          work,
        }))
      )
        return undefined;
      await this.notify(
        a,
        `🔔 Reminder — task ${a.id} is waiting for you: ${q.text}\n(Reply here, or: switchyard task answer ${a.id} "…")`,
      );
      await queueRun(store, a, q.expiresAt, "the question expires", now);
      return undefined;
    }
    await queueRun(store, a, q.reminded ? q.expiresAt : q.remindAt, "the question's reminder", now);
    return undefined;
  }

  /** The assignments waiting on a question in this chat that `senderId` may answer, oldest first. */
  async #waitingFor(target: ChatTarget, senderId: string): Promise<Assignment[]> {
    const waiting = await this.#o.store.assignments.waitingOn(target);
    return waiting.filter((a) => a.requestedBy === null || a.requestedBy === senderId);
  }

  /** True when an assignment waits on a question in this chat that this sender may answer. */
  async waiting(target: ChatTarget, senderId: string): Promise<boolean> {
    return (await this.#waitingFor(target, senderId)).length > 0;
  }

  /**
   * A message in a chat an assignment waits on, from the person who started it (or anyone, for
   * one started without a sender): the answer to the oldest question. The reply to send, or
   * undefined when nothing was waiting after all.
   */
  async answer(
    target: ChatTarget,
    senderId: string,
    text: string,
    inboxId?: number,
  ): Promise<string | undefined> {
    const { store, clock } = this.#o;
    const [waiting] = await this.#waitingFor(target, senderId);
    if (!waiting?.question || text.trim() === "") {
      // Routed again after a crash between the answer and the message's verdict: it was the answer.
      const taken = inboxId === undefined ? undefined : await store.assignments.answeredBy(inboxId);
      return taken ? passedOn(taken) : undefined;
    }
    const answer = text.trim().slice(0, 4_000);
    const question = {
      ...waiting.question,
      answer,
      ...(inboxId === undefined ? {} : { answeredBy: inboxId }),
    };
    if (!(await recordAnswer(store, waiting, question, clock.now()))) return undefined;
    this.#o.poke(true);
    return passedOn(waiting);
  }

  /** The question a paused run asks, in the owner's chat; marked sent once it is in the outbox. */
  async ask(a: Assignment, q: PendingQuestion, again = false): Promise<void> {
    await this.notify(
      a,
      `❓ Task ${a.id} needs you${again ? " (asked again after a restart)" : ""}: ${q.text}\n(Your next message here is the answer; or: switchyard task answer ${a.id} "…")`,
    );
    const question = { ...q, sent: true };
    await this.#o.store.assignments.setState(a.id, "requires_action", a.stateReason, this.#o.clock.now(), {
      from: ["requires_action"],
      work: { question },
    });
  }
}

/** The reply to an owner's message taken as an answer. */
function passedOn(a: Assignment): string {
  return `↪️ Passed to task ${a.id}; it goes on now.`;
}
