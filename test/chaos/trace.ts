/**
 * With --keep-home, the run leaves `chaos-trace.json` beside the gateway's database and log: every
 * kill, restart, message, bot write (text cut to 40 characters), model stream, figure and final
 * chat, on the driver's clock, to line up with the gateway's log when a verdict needs explaining.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GatewayLife } from "./gateway-runner.js";
import type { Timeline } from "./timeline.js";
import type { BotWrite, ChatPlatform, ChatView, KillRecord, ModelStream, RestartFigure } from "./types.js";

/** Collects the platform's bot writes for the trace; returns them (filled as the run goes). */
export function recordWrites(platform: ChatPlatform): BotWrite[] {
  const writes: BotWrite[] = [];
  platform.onWrite((w) => writes.push({ ...w, text: w.text.slice(0, 40) }));
  return writes;
}

/** Writes `<home>/chaos-trace.json`. */
export function writeTrace(
  home: string,
  run: {
    flags: object;
    kills: KillRecord[];
    restarts: GatewayLife[];
    timeline: Timeline;
    writes: BotWrite[];
    streams: ModelStream[];
    figures: RestartFigure[];
    chats: ChatView[];
  },
): void {
  const { restarts, timeline, ...rest } = run;
  const trace = {
    ...rest,
    restarts: restarts.map((l) => ({
      index: l.index,
      spawnedAtMs: l.spawnedAtMs,
      listeningAtMs: l.listeningAtMs,
    })),
    sent: timeline.sent,
    completions: timeline.completions,
  };
  writeFileSync(join(home, "chaos-trace.json"), JSON.stringify(trace, null, 1));
}
