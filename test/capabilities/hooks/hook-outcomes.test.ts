/**
 * HookOutcomes: every run counted and timed; the last outcome per hook written to
 * `<home>/hooks-last.json` at most once a second (fake clock) and on flush; a restart reads them
 * back; a missing or broken file reads as none.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  HOOK_OUTCOMES_FILE,
  HookOutcomes,
  hookMetrics,
  readHookOutcomes,
} from "../../../src/capabilities/hooks/hook-outcomes.js";
import { ManualClock } from "../../../src/util/clock.js";
import { silentLogger } from "../../../src/util/logger.js";
import { until } from "../../helpers/until.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

function home(): string {
  const h = mkdtempSync(join(tmpdir(), "sy-hook-outcomes-"));
  homes.push(h);
  return h;
}

describe("HookOutcomes", () => {
  it("counts and times each run, writes the last outcomes at most once a second, and flushes", async () => {
    const dir = home();
    const clock = new ManualClock();
    const metrics = hookMetrics();
    const outcomes = new HookOutcomes({ home: dir, metrics, clock, logger: silentLogger() });
    const file = join(dir, HOOK_OUTCOMES_FILE);
    outcomes.record("beforeToolCall", "beforeToolCall[0]", {
      command: "./a.sh",
      verdict: "block",
      at: 1,
      durationMs: 12,
      reason: "x".repeat(1000),
    });
    // The first write is due at once (nothing was written in the last second).
    await clock.advanceAsync(0);
    await until(() => existsSync(file), "first write");
    outcomes.record("beforeToolCall", "beforeToolCall[0]", {
      command: "./a.sh",
      verdict: "allow",
      at: 2,
      durationMs: 3,
    });
    await clock.advanceAsync(500);
    expect(readHookOutcomes(dir)["beforeToolCall[0]"]?.verdict).toBe("block");
    expect(readHookOutcomes(dir)["beforeToolCall[0]"]?.reason).toHaveLength(300);
    await clock.advanceAsync(500);
    await until(() => readHookOutcomes(dir)["beforeToolCall[0]"]?.verdict === "allow", "debounced write");

    outcomes.record("afterReply", "afterReply[0]", {
      command: "./b.sh",
      verdict: "ignored",
      at: 3,
      durationMs: 1,
    });
    await outcomes.flush();
    expect(readHookOutcomes(dir)["afterReply[0]"]).toEqual({
      command: "./b.sh",
      verdict: "ignored",
      at: 3,
      durationMs: 1,
    });
    expect(metrics.runs.get({ event: "beforeToolCall", hook: "beforeToolCall[0]", verdict: "block" })).toBe(
      1,
    );
    expect(metrics.runs.get({ event: "beforeToolCall", hook: "beforeToolCall[0]", verdict: "allow" })).toBe(
      1,
    );
    expect(metrics.duration.render()).toContain(
      'switchyard_hook_duration_seconds_count{event="beforeToolCall"} 2',
    );

    // A restart starts from the saved outcomes.
    const again = new HookOutcomes({ home: dir, metrics: hookMetrics(), clock, logger: silentLogger() });
    again.record("beforeStop", "beforeStop[0]", {
      command: "./c.sh",
      verdict: "allow",
      at: 4,
      durationMs: 1,
    });
    await again.flush();
    expect(Object.keys(readHookOutcomes(dir)).sort()).toEqual([
      "afterReply[0]",
      "beforeStop[0]",
      "beforeToolCall[0]",
    ]);
  });

  it("reads a missing, broken or foreign file as no outcomes", () => {
    const dir = home();
    expect(readHookOutcomes(dir)).toEqual({});
    writeFileSync(join(dir, HOOK_OUTCOMES_FILE), "{not json");
    expect(readHookOutcomes(dir)).toEqual({});
    writeFileSync(join(dir, HOOK_OUTCOMES_FILE), JSON.stringify({ a: { command: 1 }, b: [] }));
    expect(readHookOutcomes(dir)).toEqual({});
    expect(readFileSync(join(dir, HOOK_OUTCOMES_FILE), "utf8")).toContain("command");
  });
});
