/**
 * `tools.exec.approval: ask` in chat, end to end over the HTTP channel: a command the guard
 * flags is not run but filed; the model relays its id; the same sender's `/approve <id>` runs the
 * exact command once in that session, `/deny <id>`, another sender, a second approval and an
 * expired request run nothing. The flagged command deletes a folder outside the workspace
 * (unsandboxed), so whether it ran is whether the folder is gone.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

const GATEWAY_ENV = { PATH: process.env.PATH };

/** The last message the model was sent, as JSON. */
function lastMessage(sim: ModelSimulator): string {
  const body = sim.requests.at(-1)?.body as { messages?: unknown[] } | undefined;
  return JSON.stringify(body?.messages?.at(-1) ?? null);
}

function config(sim: ModelSimulator, exec: Record<string, unknown> = {}) {
  return {
    ...simulatorConfig(sim, "anthropic"),
    tools: { exec: { enabled: true, sandbox: "none", approval: "ask", ...exec } },
  };
}

/** A folder outside the workspace, and the flagged command that deletes it. */
function victim(): { dir: string; command: string } {
  const dir = mkdtempSync("/var/tmp/switchyard-victim-");
  return { dir, command: `rm -rf ${dir}` };
}

/** Has the model call exec with `command` in a turn of `sender`; returns the approval id it was given. */
async function flag(gw: TestGateway, sim: ModelSimulator, sender: string, command: string): Promise<string> {
  sim.script({ toolCalls: [{ name: "exec", args: { command } }] }, { text: "asked" });
  await gw.chat(sender, "clean up that folder");
  const shown = lastMessage(sim);
  expect(shown).toContain("Not run yet: the command guard flagged it (rm-recursive-outside-workspace)");
  const id = /\/approve (ap-[0-9a-f]{8})/.exec(shown)?.[1];
  expect(id).toBeDefined();
  return id as string;
}

/** The person's answer as a turn; returns what the model read for it. */
async function answer(gw: TestGateway, sim: ModelSimulator, sender: string, text: string): Promise<string> {
  sim.script({ text: "noted" });
  const r = await gw.chat(sender, text);
  expect(r.body.replies?.[0]?.text).toBe("noted");
  return lastMessage(sim);
}

describe("exec approval by asking, in chat", () => {
  let sim: ModelSimulator;
  const made: string[] = [];
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
  });
  afterAll(async () => {
    await sim.close();
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => sim.clearScript());

  describe("with the system clock", () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(config(sim), { env: GATEWAY_ENV });
    });
    afterAll(async () => {
      await gw.stop();
    });

    it("a flagged command waits; the same sender's /approve runs it once, a second /approve runs nothing", async () => {
      const v = victim();
      made.push(v.dir);
      const id = await flag(gw, sim, "alice", v.command);
      expect(existsSync(v.dir)).toBe(true);

      const approved = await answer(gw, sim, "alice", `/approve ${id}`);
      expect(approved).toContain(
        `[exec approval ${id}] The person approved it, and \`${v.command}\` ran once.`,
      );
      expect(approved).toContain("exit code 0");
      expect(existsSync(v.dir)).toBe(false);

      const again = await answer(gw, sim, "alice", `/approve ${id}`);
      expect(again).toContain(
        `[exec approval ${id}] No request with this id waits for this sender in this chat`,
      );
    });

    it("/deny runs nothing, and a later /approve of the same id finds nothing", async () => {
      const v = victim();
      made.push(v.dir);
      const id = await flag(gw, sim, "alice", v.command);
      const denied = await answer(gw, sim, "alice", `/deny ${id}`);
      expect(denied).toContain(`[exec approval ${id}] The person denied it: \`${v.command}\` did not run.`);
      const late = await answer(gw, sim, "alice", `/approve ${id}`);
      expect(late).toContain("No request with this id");
      expect(existsSync(v.dir)).toBe(true);
    });

    it("only the sender who was asked may approve: another sender's /approve runs nothing", async () => {
      const v = victim();
      made.push(v.dir);
      const id = await flag(gw, sim, "alice", v.command);
      const other = await answer(gw, sim, "mallory", `/approve ${id}`);
      expect(other).toContain("No request with this id waits for this sender in this chat");
      expect(existsSync(v.dir)).toBe(true);
      // Still waiting for alice.
      await answer(gw, sim, "alice", `/approve ${id}`);
      expect(existsSync(v.dir)).toBe(false);
    });

    it("the model cannot approve: a /approve in a tool call's command is itself just a command", async () => {
      const v = victim();
      made.push(v.dir);
      const id = await flag(gw, sim, "alice", v.command);
      sim.script({ toolCalls: [{ name: "exec", args: { command: `echo /approve ${id}` } }] }, { text: "hm" });
      await gw.chat("alice", "go ahead");
      expect(existsSync(v.dir)).toBe(true);
    });
  });

  it("an approval after the expiry runs nothing", async () => {
    const clock = new ManualClock(Date.now());
    const gw = await startTestGateway(config(sim), { env: GATEWAY_ENV, clock });
    try {
      const v = victim();
      made.push(v.dir);
      const id = await flag(gw, sim, "alice", v.command);
      clock.advance(10 * 60_000 + 1);
      const late = await answer(gw, sim, "alice", `/approve ${id}`);
      expect(late).toContain(
        `[exec approval ${id}] It expired before the approval came: \`${v.command}\` did not run.`,
      );
      expect(existsSync(v.dir)).toBe(true);
    } finally {
      await gw.stop();
    }
  });

  it("approval blocked (the default) refuses the flagged command with the guard's reason", async () => {
    const gw = await startTestGateway(config(sim, { approval: "blocked" }), { env: GATEWAY_ENV });
    try {
      const v = victim();
      made.push(v.dir);
      sim.script({ toolCalls: [{ name: "exec", args: { command: v.command } }] }, { text: "refused" });
      await gw.chat("alice", "clean up");
      expect(lastMessage(sim)).toContain("Blocked by the command guard (rm-recursive-outside-workspace)");
      expect(lastMessage(sim)).not.toContain("/approve");
      expect(existsSync(v.dir)).toBe(true);
    } finally {
      await gw.stop();
    }
  });
});
