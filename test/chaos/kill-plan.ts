/**
 * Which kills a run makes, decided up front from the seed: about half at a random moment (a
 * uniform delay after "listening on"), half aimed, rotating through the aimed moments that apply
 * to the channel from a seeded starting point, in a seeded order.
 */
import type { KillMoment } from "./types.js";

/** The aimed moments every channel has; a platform adds its own (`ChatPlatform.ownMoments`). */
export const COMMON_MOMENTS: readonly KillMoment[] = [
  "mid-stream",
  "preview-posted",
  "reply-stored",
  "reply-held",
];

/** Bounds of a random kill's delay after "listening on", in ms. */
export const RANDOM_DELAY_MS = { min: 100, max: 3_000 } as const;

/** Bounds of how many text chunks a `mid-stream` kill lets through first. */
export const MID_STREAM_CHUNKS = { min: 1, max: 12 } as const;

/** One planned kill. */
export interface PlannedKill {
  moment: KillMoment;
  /** For `random`: the delay after "listening on", in ms. */
  delayMs: number;
  /** For `mid-stream`: kill once an answer streamed this many chunks. */
  chunks: number;
}

/** A seeded generator of numbers in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A whole number in [min, max]. */
export function between(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/**
 * `count` kills: ⌊count/2⌋ random and the rest aimed (rotating through `aimed` from a seeded
 * start), shuffled together.
 */
export function planKills(count: number, aimed: readonly KillMoment[], random: () => number): PlannedKill[] {
  const moments: KillMoment[] = [];
  const randoms = aimed.length === 0 ? count : Math.floor(count / 2);
  for (let i = 0; i < randoms; i++) moments.push("random");
  const start = between(random, 0, Math.max(0, aimed.length - 1));
  for (let i = 0; moments.length < count; i++) moments.push(aimed[(start + i) % aimed.length] as KillMoment);
  for (let i = moments.length - 1; i > 0; i--) {
    const j = between(random, 0, i);
    [moments[i], moments[j]] = [moments[j] as KillMoment, moments[i] as KillMoment];
  }
  return moments.map((moment) => ({
    moment,
    delayMs: between(random, RANDOM_DELAY_MS.min, RANDOM_DELAY_MS.max),
    chunks: between(random, MID_STREAM_CHUNKS.min, MID_STREAM_CHUNKS.max),
  }));
}
