/**
 * How long each restart kept the conversations it inherited waiting: for every kill, each chat
 * that had a turn in flight, the time from the restarted gateway's "listening on" line to that
 * chat's first answer completing, minus the model's own streaming time for that answer. Pure.
 */
import type { Completion } from "./timeline.js";
import type { KillRecord, ModelStream, RestartFigure } from "./types.js";

/** A restart whose figure is over this waited for something (a lease): a stall. */
export const STALL_MS = 2_000;

export interface RestartFiguresInput {
  kills: KillRecord[];
  /** "listening on" of the process started after kill i (undefined: killed before it printed it). */
  restartListeningAtMs: Array<number | undefined>;
  completions: Completion[];
  streams: ModelStream[];
  /** When the run stopped watching (driver clock). */
  endMs: number;
}

/**
 * One figure per (kill, chat mid-turn at that kill) whose restart printed "listening on". When
 * no answer completed in the chat before the next kill (or the end), the figure runs to that
 * point and is `censored` (a lower bound). The model's time is every stream of the chat that
 * started after "listening on", up to the cut-off (a chat's turns run one at a time; a stream's
 * last bytes may reach the tap's end a moment after the gateway already stored the answer).
 */
export function restartFigures(input: RestartFiguresInput): RestartFigure[] {
  const figures: RestartFigure[] = [];
  input.kills.forEach((kill, i) => {
    const listening = input.restartListeningAtMs[i];
    if (listening === undefined) return;
    const until = input.kills[i + 1]?.atMs ?? input.endMs;
    for (const chat of kill.chatsMidTurn) {
      const done = input.completions.find((c) => c.chat === chat && c.atMs >= listening && c.atMs <= until);
      const cutoff = done?.atMs ?? until;
      const modelMs = input.streams
        .filter((s) => s.chat === chat && s.startMs >= listening && s.startMs < cutoff)
        .reduce((sum, s) => sum + Math.min(s.endMs ?? cutoff, cutoff) - s.startMs, 0);
      figures.push({
        kill: i,
        chat,
        ms: Math.max(0, cutoff - listening - modelMs),
        censored: done === undefined,
      });
    }
  });
  return figures;
}
