/**
 * What the cluster test counts as two pollers at once (cluster/pollers.ts): requests of running
 * processes overlapping, not those of a process already SIGKILLed or SIGSTOPped at the time.
 */
import { describe, expect, it } from "vitest";
import type { PollRecord } from "./poll-recorder.js";
import { type LifeSignals, pollerOverlaps } from "./pollers.js";

const poll = (life: string, openMs: number, closeMs?: number): PollRecord => ({
  life,
  openMs,
  closeMs,
  status: closeMs === undefined ? undefined : 200,
  updateIds: [],
});

describe("pollerOverlaps", () => {
  it("counts a getUpdates arriving while another running process's is open", () => {
    const lives = new Map<string, LifeSignals>([
      ["a", { stopped: [] }],
      ["b", { stopped: [] }],
    ]);
    expect(pollerOverlaps([poll("a", 0, 100), poll("b", 50, 200)], lives)).toEqual([
      { older: { life: "a", openMs: 0 }, newer: { life: "b", openMs: 50 } },
    ]);
  });

  it("ignores one process's own consecutive polls and polls that did not overlap", () => {
    const lives = new Map<string, LifeSignals>([
      ["a", { stopped: [] }],
      ["b", { stopped: [] }],
    ]);
    expect(pollerOverlaps([poll("a", 0, 100), poll("a", 100, 200), poll("b", 200, 300)], lives)).toEqual([]);
  });

  it("excuses an older poll of a process SIGKILLed before, or SIGSTOPped at, the newer one's arrival", () => {
    const lives = new Map<string, LifeSignals>([
      ["a", { killedAtMs: 40, stopped: [] }],
      ["b", { stopped: [{ fromMs: 300, toMs: 600 }] }],
      ["c", { stopped: [] }],
    ]);
    const polls = [poll("a", 0, 60), poll("c", 50, 100), poll("b", 200), poll("c", 400, 450), poll("c", 700)];
    // b's poll is still open at 700 and b runs again since 600: that one counts.
    expect(pollerOverlaps(polls, lives)).toEqual([
      { older: { life: "b", openMs: 200 }, newer: { life: "c", openMs: 700 } },
    ]);
  });
});
