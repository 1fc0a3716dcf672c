/**
 * The run's user traffic: M messages at a steady pace, numbered per chat (`c3 m1`, `c3 m2`, …):
 * first one to each chat in turn (every conversation exists before the first kill), then each to
 * a chat picked at random (seeded). A chat's next message does not wait for the answer to its
 * last one: the gateway must keep each chat's order itself.
 */
import { userText } from "./answers.js";
import { between } from "./kill-plan.js";
import type { Timeline } from "./timeline.js";
import type { ChatPlatform } from "./types.js";
import { delay } from "./waits.js";

export interface TrafficOptions {
  platform: ChatPlatform;
  timeline: Timeline;
  messages: number;
  chats: number;
  /** Time between two messages, in ms. */
  paceMs: number;
  random: () => number;
  now: () => number;
  /** Ends the traffic early (the run is being torn down). */
  signal: AbortSignal;
}

/** Least and most time between two messages, in ms. */
export const PACE_MS = { min: 50, max: 1_500 } as const;

/** The pace that spreads `messages` over about `spanMs`, within PACE_MS. */
export function paceFor(messages: number, spanMs: number): number {
  return Math.min(PACE_MS.max, Math.max(PACE_MS.min, Math.round(spanMs / Math.max(1, messages))));
}

/** Sends every message, one per `paceMs`; resolves after the last one. */
export async function runTraffic(o: TrafficOptions): Promise<void> {
  const counts = new Array<number>(o.chats + 1).fill(0);
  const start = o.now();
  for (let i = 0; i < o.messages; i++) {
    // Paced against the start, so a slow send does not stretch the run.
    const dueMs = start + i * o.paceMs;
    if (dueMs > o.now()) await delay(dueMs - o.now(), o.signal);
    const chat = i < o.chats ? i + 1 : between(o.random, 1, o.chats);
    counts[chat] = (counts[chat] ?? 0) + 1;
    const tag = { chat, seq: counts[chat] as number };
    const text = userText(tag);
    o.timeline.recordSent({ ...tag, text, atMs: o.now() });
    o.platform.send(chat, text);
  }
}
