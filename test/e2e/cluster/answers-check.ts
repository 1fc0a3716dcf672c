/**
 * The verdict on what the chats show after the Telegram cluster run. A message is lost without
 * its answer in its chat; answered out of order when the first copies of two answers stand in
 * the wrong order; duplicated with more than one copy. One kind of duplicate is Telegram's own
 * limit, not the gateway's (Telegram has no way to look a sent message up): the process that
 * posted the first copy was SIGKILLed or SIGSTOPped (past its lease) within WINDOW_MS of Telegram
 * storing it, so it may not have recorded that it was sent before it lost the row; whoever sends
 * the row next sends it again. Those are counted apart (as the chaos verdict does); every other
 * duplicate, and any bot text that is no expected answer (an error notice, two messages answered
 * as one), is a failure.
 */
import type { SentRecord } from "./poll-recorder.js";
import type { LifeSignals } from "./pollers.js";

/** A kill this soon after the post (or before its answer came back) may have lost its record. */
export const WINDOW_MS = 1_000;

/** What the verdict found. */
export interface AnswerVerdict {
  lost: string[];
  outOfOrder: string[];
  /** Extra copies the gateway should not have sent, with who sent each copy when. */
  duplicated: string[];
  /** Bot texts that are no expected answer. */
  unexpected: string[];
  /** Extra copies within Telegram's window (see the file header). */
  telegramWindow: string[];
}

/**
 * Judges each chat: `shown(chat)` is its bot texts in chat order, `expected(chat)` the answers
 * in the order sent; `sent` is who posted what, `signals` when each process was killed.
 */
export function judgeAnswers(
  chats: number,
  shown: (chat: number) => string[],
  expected: (chat: number) => string[],
  sent: readonly SentRecord[],
  signals: ReadonlyMap<string, LifeSignals>,
): AnswerVerdict {
  const verdict: AnswerVerdict = {
    lost: [],
    outOfOrder: [],
    duplicated: [],
    unexpected: [],
    telegramWindow: [],
  };
  for (let chat = 1; chat <= chats; chat++) {
    const texts = shown(chat);
    const want = expected(chat);
    const rank = new Map(want.map((t, i) => [t, i]));
    let last = -1;
    const seen = new Set<string>();
    for (const text of texts) {
      const at = rank.get(text);
      if (at === undefined) {
        verdict.unexpected.push(`chat ${chat}: ${JSON.stringify(text.slice(0, 120))}`);
        continue;
      }
      if (seen.has(text)) continue;
      seen.add(text);
      if (at < last)
        verdict.outOfOrder.push(`chat ${chat}: ${JSON.stringify(text)} after answer #${last + 1}`);
      last = Math.max(last, at);
    }
    for (const text of want) if (!seen.has(text)) verdict.lost.push(`chat ${chat}: ${JSON.stringify(text)}`);
    for (const text of seen) {
      const copies = texts.filter((t) => t === text).length;
      if (copies < 2) continue;
      const posts = sent.filter((s) => s.text === text);
      const who = posts.map((p) => `${p.life}@${p.atMs}ms`).join(", ");
      const first = posts[0];
      const life = first ? signals.get(first.life) : undefined;
      const frozenAt = [life?.killedAtMs, ...(life?.stopped.map((w) => w.fromMs) ?? [])].filter(
        (t): t is number =>
          t !== undefined &&
          first !== undefined &&
          t - first.atMs <= WINDOW_MS &&
          t >= first.atMs - WINDOW_MS,
      );
      const inWindow = frozenAt.length > 0;
      const line = `chat ${chat}: ${copies} copies of ${JSON.stringify(text)} (${who}; first sender killed/stopped at ${frozenAt.join(", ") || "no time near it"} ms)`;
      (inWindow ? verdict.telegramWindow : verdict.duplicated).push(line);
    }
  }
  return verdict;
}
