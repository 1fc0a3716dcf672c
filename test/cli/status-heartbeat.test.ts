/**
 * `switchyard status` shows the heartbeat: skipped while HEARTBEAT.md holds only its template
 * header (the reason named), on once it has a checklist item, off with heartbeat.everyMs: 0, and
 * the next beat; offline it reads the configuration and HEARTBEAT.md. The line's wording is
 * checked on its own (heartbeatCondition, heartbeatLine).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { heartbeatLine } from "../../src/cli/status.js";
import { heartbeatCondition } from "../../src/harness/heartbeat.js";
import { spawnGateway } from "../helpers/gateway-process.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

const TEMPLATE = "# HEARTBEAT.md\n# Checklist for the periodic heartbeat.\n<!-- a comment -->\n- \n";

describe("the heartbeat in switchyard status", () => {
  it("running: SKIPPED with the template's header only, on with a checklist item, next beat either way", async () => {
    const home = tempDir();
    const gw = await spawnGateway(["--home", home, "--port", "0"]);
    try {
      const skipped = await runCli(["status", "--url", gw.url]);
      expect(skipped.code).toBe(0);
      expect(skipped.out).toMatch(
        /^heartbeat SKIPPED: HEARTBEAT\.md has nothing to act on \(only headers, comments or empty items\): add a checklist item; every 30 min; next beat \d\d:\d\d:\d\d \(in (30|29) min\)$/m,
      );
      writeFileSync(join(home, "workspace", "HEARTBEAT.md"), `${TEMPLATE}- Tell me when a deploy fails.\n`);
      const on = await runCli(["status", "--url", gw.url]);
      expect(on.out).toMatch(/^heartbeat on, every 30 min; next beat \d\d:\d\d:\d\d \(in (30|29) min\)$/m);
      const json = JSON.parse((await runCli(["status", "--url", gw.url, "--json"])).out) as {
        heartbeat: { state: string; everyMs: number; nextBeatAt: number };
      };
      expect(json.heartbeat).toMatchObject({ state: "on", everyMs: 1_800_000 });
      expect(json.heartbeat.nextBeatAt).toBeGreaterThan(Date.now());
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
  });

  it("running with heartbeat.everyMs: 0: off, and why", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "switchyard.yaml"), "heartbeat:\n  everyMs: 0\n");
    const gw = await spawnGateway([
      "--config",
      join(dir, "switchyard.yaml"),
      "--home",
      tempDir(),
      "--port",
      "0",
    ]);
    try {
      const r = await runCli(["status", "--url", gw.url]);
      expect(r.out).toMatch(/^heartbeat off \(heartbeat\.everyMs is 0\)$/m);
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
  });

  it("offline: read from the configuration and HEARTBEAT.md", async () => {
    const home = tempDir();
    mkdirSync(join(home, "workspace"), { recursive: true });
    writeFileSync(join(home, "workspace", "HEARTBEAT.md"), TEMPLATE);
    const r = await runCli(["status", "--home", home, "--port", "1"]);
    expect(r.code).toBe(1);
    // No database yet: the heartbeat line still says what a gateway would do.
    expect(r.out).toMatch(/^heartbeat SKIPPED: HEARTBEAT\.md has nothing to act on .*; every 30 min$/m);
  });

  it("words each condition", () => {
    expect(heartbeatCondition({ everyMs: 0, checklist: "- x" })).toEqual({
      state: "off",
      reason: "heartbeat.everyMs is 0",
    });
    expect(heartbeatCondition({ everyMs: 1, checklist: undefined }).reason).toMatch(/no HEARTBEAT\.md/);
    expect(heartbeatCondition({ everyMs: 1, checklist: "- x", active: false }).reason).toBe(
      "outside heartbeat.activeHours",
    );
    expect(heartbeatCondition({ everyMs: 1, checklist: "- x", spendPaused: true }).reason).toMatch(
      /spend cap/,
    );
    expect(heartbeatCondition({ everyMs: 1, checklist: "- check the build" })).toEqual({ state: "on" });
    const now = new Date(2026, 10, 29, 9, 0, 0).getTime();
    expect(
      heartbeatLine(
        {
          state: "on",
          everyMs: 5_400_000,
          nextBeatAt: now + 720_000,
          lastBeat: { at: now - 60_000, outcome: "skipped_busy" },
        },
        now,
      ),
    ).toBe("heartbeat on, every 1 h 30 min; next beat 09:12:00 (in 12 min); last 08:59:00 skipped busy");
  });
});
