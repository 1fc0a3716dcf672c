/**
 * The outbox ordering property: random replies, dispatches, clock moves and restarts replayed
 * against a model of which rows claimDue may return.
 */
import fc from "fast-check";
import { expect } from "vitest";
import type { ChatTarget } from "../../../src/channels/types.js";
import type { Store } from "../../../src/store/types.js";
import { chat, seedReply, T0 } from "./fixtures.js";

type ModelOutcome = "sent" | "retry" | "dead" | "hold";

/** Replies, dispatch rounds with their outcomes, clock moves and restarts. */
export type OutboxOp =
  | { type: "reply"; chat: number; thread: boolean; chunks: number }
  | { type: "dispatch"; limit: number; outcomes: ModelOutcome[] }
  | { type: "advance"; ms: number }
  | { type: "restart" };

/** One random step of the ordering property. */
export const outboxOp: fc.Arbitrary<OutboxOp> = fc.oneof(
  fc.record({
    type: fc.constant("reply" as const),
    chat: fc.integer({ min: 0, max: 2 }),
    thread: fc.boolean(),
    chunks: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({
    type: fc.constant("dispatch" as const),
    limit: fc.integer({ min: 1, max: 6 }),
    outcomes: fc.array(fc.constantFrom("sent" as const, "retry" as const, "dead" as const, "hold" as const), {
      maxLength: 6,
    }),
  }),
  fc.record({ type: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 2_000 }) }),
  fc.constant({ type: "restart" as const }),
);

interface ModelRow {
  id: number;
  chat: string;
  state: "pending" | "sending" | "sent" | "dead";
  nextAttemptAt: number;
}

/** Two processes sharing the outbox: A on the suite's store, B on `peer`. */
export interface OrderingProcesses {
  /** Process B's handle onto the same database. */
  peer: Store;
  /** The lease of every claim; a restart moves the clock past it and takes over what is left. */
  ttlMs: number;
}

/** The one channel account every reply of the property goes to. */
const HOSTED = [{ channel: "telegram", accountId: "default" }] as const;

/**
 * Replays random replies, dispatches (with sent / retry / dead / still-sending outcomes),
 * clock moves and restarts against a model, checking every claimDue answer exactly: it is
 * the set of chats' first unfinished rows that are pending and due (up to the limit), and
 * every chat's rows are sent in id order. Ends by draining everything.
 *
 * With `processes`, dispatches alternate between A and B, each claiming as its own owner for
 * the hosted account and reporting outcomes as that owner, and a restart is a takeover of
 * expired leases (the clock moved past the TTL). Without, claims carry no lease (one process),
 * so a restart's takeover resets every sending row at once.
 */
export async function checkClaimOrdering(
  store: Store,
  ops: readonly OutboxOp[],
  processes?: OrderingProcesses,
): Promise<void> {
  let now = T0;
  let dispatches = 0;
  const claimants = processes
    ? [
        { store, owner: "gw_a" },
        { store: processes.peer, owner: "gw_b" },
      ]
    : [{ store, owner: undefined }];
  const rows = new Map<number, ModelRow>();
  const sentOrder = new Map<string, number[]>();
  const chatKey = (t: ChatTarget) => `${t.chatId}|${t.threadId ?? ""}`;

  const eligible = (): number[] => {
    const byChat = new Map<string, ModelRow>();
    for (const row of [...rows.values()].sort((a, b) => a.id - b.id)) {
      if (row.state === "sent" || row.state === "dead" || byChat.has(row.chat)) continue;
      byChat.set(row.chat, row);
    }
    return [...byChat.values()]
      .filter((r) => r.state === "pending" && r.nextAttemptAt <= now)
      .map((r) => r.id);
  };

  /** Earliest nextAttemptAt among chats' first unfinished rows that are pending. */
  const nextDue = (): number | undefined => {
    const firsts = new Map<string, ModelRow>();
    for (const row of [...rows.values()].sort((a, b) => a.id - b.id)) {
      if (row.state === "sent" || row.state === "dead" || firsts.has(row.chat)) continue;
      firsts.set(row.chat, row);
    }
    const due = [...firsts.values()].filter((r) => r.state === "pending").map((r) => r.nextAttemptAt);
    return due.length > 0 ? Math.min(...due) : undefined;
  };

  /** Every sending row back to pending: a restart of one process, or a takeover after the TTL. */
  const restart = async () => {
    let reset: Array<{ id: number }>;
    if (processes) {
      now += processes.ttlMs;
      reset = await (dispatches % 2 === 0 ? processes.peer : store).outbox.resetExpired(now);
    } else {
      reset = await store.outbox.resetExpired(now);
    }
    const sending = [...rows.values()].filter((r) => r.state === "sending");
    expect(reset.map((r) => r.id).sort((a, b) => a - b)).toEqual(
      sending.map((r) => r.id).sort((a, b) => a - b),
    );
    for (const r of sending) r.state = "pending";
  };

  const dispatch = async (limit: number, outcomes: readonly ModelOutcome[]) => {
    const { store, owner } = claimants[dispatches++ % claimants.length]!;
    const hosted = owner ? { hosted: HOSTED } : undefined;
    expect(await store.outbox.nextDueAt(hosted)).toBe(nextDue());
    const expected = eligible();
    const claim = owner && processes ? { owner, ttlMs: processes.ttlMs, hosted: HOSTED } : undefined;
    const claimed = await store.outbox.claimDue(now, limit, claim);
    const ids = claimed.map((r) => r.id);
    expect(ids.every((id) => expected.includes(id))).toBe(true);
    expect(ids.length).toBe(Math.min(limit, expected.length));
    for (const [i, record] of claimed.entries()) {
      const row = rows.get(record.id)!;
      expect(record.state).toBe("sending");
      expect(record.owner).toBe(owner ?? null);
      expect(chatKey(record.target)).toBe(row.chat);
      row.state = "sending";
      const outcome = outcomes[i] ?? "sent";
      if (outcome === "sent") {
        await store.outbox.markSent(row.id, `p-${row.id}`, now);
        row.state = "sent";
        sentOrder.set(row.chat, [...(sentOrder.get(row.chat) ?? []), row.id]);
      } else if (outcome === "retry") {
        row.nextAttemptAt = now + 500;
        await store.outbox.markRetry(row.id, "transient", row.nextAttemptAt, now, owner);
        row.state = "pending";
      } else if (outcome === "dead") {
        await store.outbox.markDead(row.id, "permanent", now, owner);
        row.state = "dead";
      }
    }
  };

  for (const op of ops) {
    if (op.type === "reply") {
      const target = chat(`c${op.chat}`, op.thread ? "t" : undefined);
      const texts = Array.from({ length: op.chunks }, (_, i) => `chunk ${i}`);
      for (const r of await seedReply(store, target, texts, now)) {
        rows.set(r.id, { id: r.id, chat: chatKey(target), state: "pending", nextAttemptAt: now });
      }
    } else if (op.type === "dispatch") {
      await dispatch(op.limit, op.outcomes);
    } else if (op.type === "advance") {
      now += op.ms;
    } else {
      await restart();
    }
  }

  // Drain: everything unfinished goes out eventually, still in order.
  await restart();
  for (let round = 0; round < 200 && [...rows.values()].some((r) => r.state === "pending"); round++) {
    now += 500;
    await dispatch(100, []);
  }
  expect([...rows.values()].every((r) => r.state === "sent" || r.state === "dead")).toBe(true);
  for (const ids of sentOrder.values()) expect(ids).toEqual([...ids].sort((a, b) => a - b));
  const counts = await store.outbox.countByState();
  expect(counts.sent).toBe([...rows.values()].filter((r) => r.state === "sent").length);
}
