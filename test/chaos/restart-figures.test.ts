/**
 * A restart's figure: from its spawn (and from "listening on") to the inherited chat's first
 * answer, minus the model's streaming in that chat since then (also when the stream's end reached
 * the tap after the answer was stored, and when a recovered turn called the model before
 * "listening on"); censored at the next kill when no answer came.
 */
import { describe, expect, it } from "vitest";
import { restartFigures } from "./restart-figures.js";
import type { KillRecord } from "./types.js";

const kill = (atMs: number, chatsMidTurn: number[]): KillRecord => ({ atMs, moment: "random", chatsMidTurn });

describe("restart figures", () => {
  it("subtracts the chat's model streaming since the spawn, even when the stream ended after the answer", () => {
    const figures = restartFigures({
      kills: [kill(1_000, [1, 2])],
      restartSpawnedAtMs: [1_100],
      restartListeningAtMs: [2_000],
      completions: [
        { chat: 1, tag: { chat: 1, seq: 1 }, atMs: 3_400 },
        { chat: 2, tag: { chat: 2, seq: 1 }, atMs: 32_000 },
      ],
      streams: [
        { chat: 1, seq: 1, startMs: 500, endMs: 900 }, // before the kill: not this restart's
        { chat: 1, seq: 1, startMs: 2_300, endMs: 3_420 }, // its last bytes after the answer was stored
        { chat: 2, seq: 1, startMs: 31_000, endMs: 31_980 },
      ],
      endMs: 40_000,
    });
    expect(figures).toEqual([
      { kill: 0, chat: 1, ms: 1_200, afterListeningMs: 300, censored: false },
      { kill: 0, chat: 2, ms: 29_920, afterListeningMs: 29_020, censored: false },
    ]);
  });

  it("counts a recovered turn's model call made before listening (the channels still starting)", () => {
    const figures = restartFigures({
      kills: [kill(1_000, [1])],
      restartSpawnedAtMs: [1_100],
      restartListeningAtMs: [2_000],
      completions: [{ chat: 1, tag: { chat: 1, seq: 1 }, atMs: 2_620 }],
      streams: [{ chat: 1, seq: 1, startMs: 1_400, endMs: 2_600 }],
      endMs: 9_000,
    });
    // 1 520 ms from spawn to answer, 1 200 of them the model's; after listening, 20 ms beyond its last 600.
    expect(figures).toEqual([{ kill: 0, chat: 1, ms: 320, afterListeningMs: 20, censored: false }]);
  });

  it("is censored at the next kill when no answer came, and skipped for a restart killed before it listened", () => {
    const figures = restartFigures({
      kills: [kill(1_000, [3]), kill(4_000, [3]), kill(4_500, [3])],
      restartSpawnedAtMs: [1_500, 4_100, 4_600],
      restartListeningAtMs: [2_000, undefined, 5_000],
      completions: [{ chat: 3, tag: { chat: 3, seq: 2 }, atMs: 6_000 }],
      streams: [{ chat: 3, seq: 2, startMs: 3_500 }], // cut by the kill at 4 000
      endMs: 9_000,
    });
    expect(figures).toEqual([
      { kill: 0, chat: 3, ms: 2_000, afterListeningMs: 1_500, censored: true },
      { kill: 2, chat: 3, ms: 1_400, afterListeningMs: 1_000, censored: false },
    ]);
  });
});
