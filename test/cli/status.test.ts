/**
 * `switchyard status`, online (a spawned gateway in simulator mode) and offline (the database):
 * both say whether replies are simulated and list undelivered (dead) replies.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnGateway } from "../helpers/gateway-process.js";
import { removeTempDirs, runCli, seedDeadReply, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

describe("switchyard status", () => {
  it("shows a running simulated gateway: the SIMULATED notice and the dead replies", async () => {
    const home = tempDir();
    await seedDeadReply(home, "Your report is ready", "permanent: bot was blocked by the user");
    const gw = await spawnGateway(["--home", home, "--port", "0"]);
    try {
      const r = await runCli(["status", "--url", gw.url]);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`gateway   ${gw.url} — ready`);
      expect(r.out).toMatch(
        /model\s+anthropic\/claude-sonnet-5-5\s+\*\* SIMULATED replies: no API key configured \*\*/,
      );
      expect(r.out).toMatch(/outbox\s+.*dead 1/);
      expect(r.out).toContain("undelivered replies (dead):");
      expect(r.out).toMatch(
        /#\d+ telegram:42 after \d+ attempts — permanent: bot was blocked by the user — "Your report is ready"/,
      );
      const json = await runCli(["status", "--url", gw.url, "--json"]);
      const body = JSON.parse(json.out) as { simulated: boolean; deadReplies: Array<{ text: string }> };
      expect(body.simulated).toBe(true);
      expect(body.deadReplies.map((d) => d.text)).toEqual(["Your report is ready"]);
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
  });

  it("offline, says replies would be simulated without a key, and lists dead replies", async () => {
    const home = tempDir();
    await seedDeadReply(home, "Late answer", "permanent: chat not found");
    const r = await runCli(["status", "--home", home, "--port", "1"]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("no gateway answers at http://127.0.0.1:1");
    expect(r.out).toMatch(/model\s+anthropic\/claude-sonnet-5-5\s+\*\* replies would be SIMULATED/);
    expect(r.out).toContain("undelivered replies (dead):");
    expect(r.out).toMatch(/#\d+ telegram:42 after \d+ attempts — permanent: chat not found — "Late answer"/);
  });

  it("offline, does not claim simulation when a provider key is configured", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "switchyard.yaml"), "agent:\n  model: openai/gpt-test\n");
    const home = join(dir, "home");
    await runCli(["doctor", "--home", home, "--port", "1"], { cwd: dir }); // creates the database
    const r = await runCli(["status", "--home", home, "--port", "1"], {
      cwd: dir,
      env: { OPENAI_API_KEY: "sk-test-key-for-status" },
    });
    expect(r.out).toMatch(/model\s+openai\/gpt-test\n/);
    expect(r.out).not.toContain("SIMULATED");
  });
});
