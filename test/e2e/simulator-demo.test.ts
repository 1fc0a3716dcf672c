/**
 * The README's first example: a gateway with no model API key answers on its built-in simulator,
 * whose demo script shows what the gateway does — a reminder is scheduled (and arrives), a fact
 * lands in MEMORY.md, and `/task` ends done with the file it names — every reply saying it is
 * simulated. Both of the simulator's protocols (the primary model's).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { type TestGateway, startTestGateway } from "../helpers/test-gateway.js";
import { until, untilAdvancing } from "../helpers/until.js";

const MODELS = [
  ["anthropic", "anthropic/claude-sonnet-5-5"],
  ["openai", "openai/gpt-4o"],
] as const;

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

async function mailbox(url: string, sender: string): Promise<string[]> {
  const r = await fetch(`${url}/v1/chat/replies?sender=${sender}&after=0`);
  return ((await r.json()) as { replies: Array<{ text: string }> }).replies.map((x) => x.text);
}

describe.each(MODELS)("the simulator's demo script (%s, no API key)", (_name, model) => {
  it('"remind me in 2 minutes" schedules a reminder that arrives; "remember that" writes MEMORY.md', async () => {
    const clock = new ManualClock(Date.now());
    gw = await startTestGateway({ agent: { model }, heartbeat: { everyMs: 0 } }, { clock });
    const { store, workspaceDir } = gw.running;

    const set = await gw.chat("ann", "remind me in 2 minutes to stretch");
    expect(set.body.replies?.map((r) => r.text)).toEqual([
      expect.stringMatching(
        /^Simulated reply \(no model API key is configured\): reminder set with cron_add — in 2 minutes \(\d{4}-.*Z\), to stretch\.$/,
      ),
    ]);
    const job = await store.cron.byName("main", "reminder-stretch");
    expect(job).toMatchObject({ source: "agent", nextRunAt: clock.now() + 120_000 });
    await untilAdvancing(
      clock,
      async () => (await mailbox(gw?.url ?? "", "ann")).some((t) => t.includes("time to stretch")),
      "the reminder in ann's mailbox",
    );

    // Private memory is the owner's: memory_write is offered in the console (a private chat),
    // not to an HTTP sender (tools policy).
    const res = await fetch(`${gw.url}/v1/console`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sender: "ann", text: "remember that my cat is called Tom" }),
    });
    const noted = (await res.json()) as { replies?: Array<{ text: string }> };
    expect(noted.replies?.[0]?.text).toBe(
      'Simulated reply (no model API key is configured): noted in MEMORY.md with memory_write — "My cat is called Tom."',
    );
    expect(readFileSync(path.join(workspaceDir, "MEMORY.md"), "utf8")).toContain("My cat is called Tom.");

    // Anything else is still the echo.
    expect((await gw.chat("ann", "hi")).body.replies?.[0]?.text).toBe(
      'Simulated reply (no model API key is configured): you said "hi".',
    );
  });

  it("/task Write a two-line poem into poem.md ends done, with poem.md written", async () => {
    gw = await startTestGateway({ agent: { model }, heartbeat: { everyMs: 0 } });
    const { store, workspaceDir } = gw.running;
    const started = await gw.chat("bob", "/task Write a two-line poem into poem.md");
    const id = /Task (t[0-9a-z]+) started/.exec(started.body.replies?.[0]?.text ?? "")?.[1] ?? "";
    expect(id).not.toBe("");
    await until(
      async () => (await store.assignments.get(id))?.state === "done",
      "the assignment done",
      20_000,
    );
    const a = await store.assignments.get(id);
    expect(a?.items).toMatchObject([{ id: 1, status: "done" }]);
    expect(a?.checkpoint.summary).toMatch(/^Simulated reply .*wrote poem\.md/);
    expect(readFileSync(path.join(workspaceDir, "poem.md"), "utf8")).toBe(
      "Simulated line 1 of 2.\nSimulated line 2 of 2.\n",
    );
    expect(existsSync(path.join(workspaceDir, "poem.md"))).toBe(true);
    await until(
      async () => (await mailbox(gw?.url ?? "", "bob")).some((t) => t.startsWith("✅")),
      "the report",
    );
  });
});
