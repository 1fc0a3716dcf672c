/**
 * "Only one poller at any time", judged from the getUpdates requests the PollRecorder saw.
 *
 * What is counted: an overlap is a getUpdates request Y arriving while a getUpdates request X of
 * ANOTHER process is still open (sent, not yet answered, its client still connected). Telegram
 * (and the fake) then ends X with 409 Conflict, so every overlap is one process knocking another
 * off the bot. An overlap is excused only when X's process could not have known better:
 * - X's process was SIGKILLed at or before Y arrived (its socket closes a moment later), or
 * - X's process was SIGSTOPped when Y arrived (a stopped process keeps its socket open, and its
 *   lease runs out while it sleeps: the node that takes over must poll, ending X's poll).
 * A process resumed by SIGCONT whose poll was ended that way is not counted; if it then polls
 * again while the new holder's poll is open, that overlap is counted (it is running again).
 */
import type { PollRecord } from "./poll-recorder.js";

/** What the driver did to one process (driver clock, ms). */
export interface LifeSignals {
  killedAtMs?: number;
  /** SIGSTOP → SIGCONT windows; an open window has no end. */
  stopped: Array<{ fromMs: number; toMs?: number }>;
}

/** Two processes' getUpdates open at once, not excused. */
export interface Overlap {
  /** The request already open. */
  older: { life: string; openMs: number };
  /** The request that arrived while it was open. */
  newer: { life: string; openMs: number };
}

/** Every unexcused overlap (see the file header), in arrival order of the newer request. */
export function pollerOverlaps(
  polls: readonly PollRecord[],
  lives: ReadonlyMap<string, LifeSignals>,
): Overlap[] {
  const overlaps: Overlap[] = [];
  for (const y of polls) {
    for (const x of polls) {
      if (x === y || x.life === y.life || x.openMs > y.openMs) continue;
      if (x.closeMs !== undefined && x.closeMs <= y.openMs) continue;
      if (x.openMs === y.openMs && polls.indexOf(x) > polls.indexOf(y)) continue;
      const signals = lives.get(x.life);
      const killed = signals?.killedAtMs !== undefined && signals.killedAtMs <= y.openMs;
      const stopped = signals?.stopped.some((w) => w.fromMs <= y.openMs && (w.toMs ?? Infinity) >= y.openMs);
      if (killed || stopped) continue;
      overlaps.push({ older: { life: x.life, openMs: x.openMs }, newer: { life: y.life, openMs: y.openMs } });
    }
  }
  return overlaps;
}
