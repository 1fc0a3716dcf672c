/**
 * `switchyard status` shows the heartbeat: off, or on with its next beat, and SKIPPED while
 * HEARTBEAT.md holds only its template header (which skips every beat without a model call).
 * The real command against a real in-process gateway on a manual clock.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { type TestGateway, startTestGateway } from "../helpers/test-gateway.js";
import { removeTempDirs, runCli } from "./cli-process.js";

afterAll(removeTempDirs);

const EVERY_MS = 1_800_000;

async function withGateway(
  raw: Record<string, unknown>,
  use: (gw: TestGateway, clock: ManualClock) => Promise<void>,
) {
  const clock = new ManualClock(Date.now());
  const gw = await startTestGateway(raw, { clock });
  try {
    await use(gw, clock);
  } finally {
    await gw.stop();
  }
}

describe("switchyard status: the heartbeat", () => {
  it("says beats are skipped while HEARTBEAT.md is the template, and when the next one is", async () => {
    await withGateway({}, async (gw, clock) => {
      const checklist = join(gw.running.workspaceDir, "HEARTBEAT.md");
      const json = await runCli(["status", "--url", gw.url, "--json"]);
      expect(JSON.parse(json.out).heartbeat).toEqual({
        on: true,
        everyMs: EVERY_MS,
        nextAt: clock.now() + EVERY_MS,
        skipped: "empty_checklist",
        checklist,
      });
      const text = await runCli(["status", "--url", gw.url]);
      expect(text.out).toMatch(
        new RegExp(
          `^heartbeat every 30 min; SKIPPED: ${checklist.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} has nothing to act on \\(only its template header\\): add a line to check; next beat \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\(in \\d+ min\\)$`,
          "m",
        ),
      );
      writeFileSync(checklist, "# Checks\n- Remind me of the dentist.\n");
      const running = await runCli(["status", "--url", gw.url]);
      expect(running.out).toMatch(/^heartbeat every 30 min; next beat \S+ \S+ \(in \d+ min\)$/m);
    });
  });

  it("says when it is off", async () => {
    await withGateway({ heartbeat: { everyMs: 0 } }, async (gw) => {
      const text = await runCli(["status", "--url", gw.url]);
      expect(text.out).toMatch(/^heartbeat off \(heartbeat\.everyMs: 0\)$/m);
      const json = JSON.parse((await runCli(["status", "--url", gw.url, "--json"])).out);
      expect(json.heartbeat).toMatchObject({ on: false, nextAt: null, skipped: null });
    });
  });
});
