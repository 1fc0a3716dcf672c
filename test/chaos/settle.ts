/**
 * The run's two waits on the conversations: before the first kill, for each chat's first answer
 * (the chaos starts on conversations the gateway knows); at the end, for the last answers, bounded
 * in time and ended early by quiet, but never before a dead process's lease could have run out.
 */
import type { Timeline } from "./timeline.js";
import { delay, firstEvent, WaitAborted } from "./waits.js";

/** The end: up to 60 s + 2 s per message, or until nothing changed for 15 s… */
export const SETTLE_BASE_MS = 60_000;
export const SETTLE_PER_MESSAGE_MS = 2_000;
export const QUIET_MS = 15_000;
/**
 * …but not before the gateway's default lease TTL (30 s) and a margin have passed since the last
 * kill: a conversation waiting for a dead process's lease is a stall to report, not a loss.
 */
export const LEASE_GRACE_MS = 35_000;

/**
 * Resolves true once the first message of each of chats 1…`chats` has its complete answer, false
 * after `limitMs`. A brand-new conversation whose first message comes while the gateway is down is
 * beyond any gateway on Discord (no redelivery, and a bot cannot list DMs it has never seen).
 * Rejects with WaitAborted when `signal` aborts.
 */
export async function firstRoundAnswered(
  timeline: Timeline,
  chats: number,
  limitMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  if (timeline.firstRoundAnswered(chats)) return true;
  try {
    return await firstEvent<void, true>(
      (l) => timeline.onChange(l),
      () => (timeline.firstRoundAnswered(chats) ? true : undefined),
      AbortSignal.any([signal, AbortSignal.timeout(limitMs)]),
    );
  } catch (error) {
    if (signal.aborted || !(error instanceof WaitAborted)) throw error;
    return false;
  }
}

/**
 * Waits until every sent message has its complete answer, or nothing changed for QUIET_MS (and
 * LEASE_GRACE_MS passed since `lastKillAtMs`), or SETTLE_BASE_MS + SETTLE_PER_MESSAGE_MS × the
 * messages sent. Rejects with WaitAborted when `signal` aborts.
 */
export async function lastAnswers(
  timeline: Timeline,
  now: () => number,
  lastKillAtMs: number | undefined,
  signal: AbortSignal,
): Promise<void> {
  const endBy = now() + SETTLE_BASE_MS + SETTLE_PER_MESSAGE_MS * timeline.sent.length;
  const graceUntil = (lastKillAtMs ?? 0) + LEASE_GRACE_MS;
  while (!timeline.allAnswered) {
    const wakeAt = Math.min(endBy, Math.max(timeline.lastChangeMs + QUIET_MS, graceUntil));
    if (now() >= wakeAt) return;
    // Woken by the next change or the deadline, whichever is first; the other wait is ended.
    const step = new AbortController();
    const stepSignal = AbortSignal.any([signal, step.signal]);
    try {
      await Promise.race([
        firstEvent<void, true>(
          (l) => timeline.onChange(l),
          () => true,
          stepSignal,
        ),
        delay(wakeAt - now(), stepSignal),
      ]);
    } finally {
      step.abort();
    }
    if (signal.aborted) throw new WaitAborted(signal.reason);
  }
}
