/**
 * How long each restart kept the conversations it inherited waiting: for every kill, each chat
 * that had a turn in flight, the time from the restarted gateway's spawn to that chat's first
 * answer completing, minus the model's own streaming time for that answer (start-up included, as
 * a person waits it); and the same from its "listening on" line, which is what a lease wait
 * shows in. Pure.
 */
import type { Completion } from "./timeline.js";
import type { KillRecord, ModelStream, RestartFigure } from "./types.js";

/** A restart whose wait after "listening on" (model time excluded) is over this waited for something (a lease): a stall. */
export const STALL_MS = 2_000;

export interface RestartFiguresInput {
  kills: KillRecord[];
  /** When the process started after kill i was spawned. */
  restartSpawnedAtMs: number[];
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
 * started after the spawn, up to the cut-off (a chat's turns run one at a time; a stream's last
 * bytes may reach the tap's end a moment after the gateway already stored the answer). A
 * recovered turn calls the model during start-up, before the channels are up and "listening on"
 * is printed: for the wait after it, only the model's time after it counts.
 */
export function restartFigures(input: RestartFiguresInput): RestartFigure[] {
  const figures: RestartFigure[] = [];
  input.kills.forEach((kill, i) => {
    const listening = input.restartListeningAtMs[i];
    const spawned = input.restartSpawnedAtMs[i];
    if (listening === undefined || spawned === undefined) return;
    const until = input.kills[i + 1]?.atMs ?? input.endMs;
    for (const chat of kill.chatsMidTurn) {
      const done = input.completions.find((c) => c.chat === chat && c.atMs >= listening && c.atMs <= until);
      const cutoff = done?.atMs ?? until;
      const streams = input.streams.filter(
        (s) => s.chat === chat && s.startMs >= spawned && s.startMs < cutoff,
      );
      const modelSince = (from: number) =>
        streams.reduce(
          (sum, s) => sum + Math.max(0, Math.min(s.endMs ?? cutoff, cutoff) - Math.max(s.startMs, from)),
          0,
        );
      figures.push({
        kill: i,
        chat,
        ms: Math.max(0, cutoff - spawned - modelSince(spawned)),
        afterListeningMs: Math.max(0, cutoff - listening - modelSince(listening)),
        censored: done === undefined,
      });
    }
  });
  return figures;
}
