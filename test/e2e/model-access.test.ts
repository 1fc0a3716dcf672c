/**
 * Model access end to end: a real gateway, the real Anthropic and OpenAI SDKs, the model
 * simulator with faults scripted per API key. A 429 on one auth profile is answered from the
 * next; a primary whose every profile is overloaded falls back to the other provider and the run
 * records both attempts; cooldowns survive a restart; a wait for cooling profiles gives the model
 * slot back (another person's message runs meanwhile) and tells the person once; the daily
 * spend cap pauses a heartbeat storm but not a person; /model and /status.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

let sim: ModelSimulator;
beforeAll(async () => {
  sim = new ModelSimulator();
  await sim.start();
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.clearScript();
  sim.requests.length = 0;
});
const open: TestGateway[] = [];
afterEach(async () => {
  for (const gw of open.splice(0)) await gw.stop();
});

function configFor(extra: Record<string, unknown> = {}) {
  return {
    agent: { model: "anthropic/claude-test", fallbacks: ["openai/gpt-test"] },
    providers: {
      anthropic: {
        baseUrl: sim.url,
        profiles: [
          { id: "work", apiKey: "sk-ant-work-0001" },
          { id: "personal", apiKey: "sk-ant-personal-0002" },
        ],
      },
      openai: { baseUrl: `${sim.url}/v1`, apiKey: "sk-openai-0003" },
    },
    heartbeat: { everyMs: 0 },
    ...extra,
  };
}

async function start(raw: Record<string, unknown>, options: Parameters<typeof startTestGateway>[1] = {}) {
  const gw = await startTestGateway(raw, options);
  open.push(gw);
  return gw;
}

describe("model access", () => {
  it("a 429 on one profile is answered from the next; the run records both attempts; the cooldown survives a restart", async () => {
    const gw = await start(configFor());
    sim.scriptFor("sk-ant-work-0001", { error: { status: 429, retryAfterSeconds: 600 } });
    sim.scriptFor("sk-ant-personal-0002", { text: "answered by personal" });
    const res = await gw.chat("ann", "hello");
    expect(res.body.replies?.map((r) => r.text)).toEqual(["answered by personal"]);
    const [run] = await gw.running.store.runs.recent(1);
    expect(run?.attempts.map((a) => [a.profileId, a.outcome])).toEqual([
      ["work", "rate_limit"],
      ["personal", "ok"],
    ]);
    expect(run?.calls.length ?? 0).toBeGreaterThanOrEqual(0);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /switchyard_model_calls_total\{[^}]*outcome="rate_limit"[^}]*profile="work"[^}]*\} 1/,
    );
    expect(metrics).toMatch(
      /switchyard_auth_profile_cooldown_seconds_total\{[^}]*kind="rate_limit"[^}]*\} 600/,
    );

    // A restart in the same home: the work profile is still cooling, so personal answers first.
    const home = gw.home;
    open.splice(open.indexOf(gw), 1);
    await gw.running.stop();
    const again = await start(configFor(), { home });
    sim.requests.length = 0;
    sim.scriptFor("sk-ant-personal-0002", { text: "still personal" });
    expect((await again.chat("bob", "hi")).body.replies?.map((r) => r.text)).toEqual(["still personal"]);
    expect(sim.requests.map((q) => q.apiKey)).toEqual(["sk-ant-personal-0002"]);
    const stored = await again.running.store.authProfiles.list();
    expect(stored.find((s) => s.profileId === "work")).toMatchObject({ cooldownReason: "rate_limit" });
  });

  it("a stream that dies half-way is not shown twice: the client of an OpenAI-style stream reads the answer once", async () => {
    const gw = await start(configFor());
    const answer = "The quick brown fox jumps over the lazy dog, twice over, for good measure.";
    sim.scriptFor("sk-ant-work-0001", { dropAfterChunks: 3, text: answer });
    sim.scriptFor("sk-ant-personal-0002", { text: answer });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ stream: true, user: "ann", messages: [{ role: "user", content: "tell me" }] }),
    });
    let content = "";
    for (const line of (await res.text()).split("\n")) {
      if (!line.startsWith("data: {")) continue;
      const chunk = JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string } }> };
      content += chunk.choices[0]?.delta.content ?? "";
    }
    expect(content).toBe(answer);
    const [run] = await gw.running.store.runs.recent(1);
    expect(run?.attempts.map((a) => a.outcome)).toEqual(["network", "ok"]);
  });

  it("every profile of the primary overloaded: the fallback on the other provider answers", async () => {
    const gw = await start(configFor());
    sim.scriptFor("sk-ant-work-0001", { error: { status: 529 } });
    sim.scriptFor("sk-ant-personal-0002", { error: { status: 529 } });
    sim.scriptFor("sk-openai-0003", { text: "answered by openai" });
    const res = await gw.chat("ann", "hello");
    expect(res.body.replies?.map((r) => r.text)).toEqual(["answered by openai"]);
    const [run] = await gw.running.store.runs.recent(1);
    expect(run).toMatchObject({ provider: "openai", model: "gpt-test" });
    expect(run?.attempts.map((a) => `${a.provider}:${a.profileId}:${a.outcome}`)).toEqual([
      "anthropic:work:overloaded",
      "anthropic:personal:overloaded",
      "openai:default:ok",
    ]);
    // /model lists the chain and the model in use; an unconfigured one is refused in one line.
    const listed = await gw.chat("ann", "/model");
    expect(listed.body.replies?.[0]?.text).toMatch(
      /In use here: openai\/gpt-test\nChain: anthropic\/claude-test → openai\/gpt-test/,
    );
    const refused = await gw.chat("ann", "/model ollama/llama3");
    expect(refused.body.replies?.[0]?.text).toBe(
      'Cannot use ollama/llama3: provider "ollama" is not configured (configured: anthropic, openai).',
    );
  });

  it("the whole chain failing names every model tried and how, not only the last", async () => {
    const gw = await start(configFor({ providers: { ...configFor().providers, maxWaitMs: 0 } }));
    sim.scriptFor("sk-ant-work-0001", { error: { status: 429, retryAfterSeconds: 600 } });
    sim.scriptFor("sk-ant-personal-0002", { error: { status: 429, retryAfterSeconds: 600 } });
    sim.scriptFor("sk-openai-0003", { dropAfterChunks: 0, text: "never sent" });
    const res = await gw.chat("ann", "hello");
    expect(res.body.state).toBe("failed");
    expect(res.body.replies?.map((r) => r.text)).toEqual([
      "⚠️ Sorry, I couldn't answer: no model answered (anthropic/claude-test rate-limited; openai/gpt-test could not be reached).",
    ]);
  });

  it("a chosen /model does not fall back: it fails visibly", async () => {
    const gw = await start(configFor({ providers: { ...configFor().providers, maxWaitMs: 0 } }));
    expect((await gw.chat("ann", "/model anthropic/claude-other")).body.replies?.[0]?.text).toMatch(
      /now uses anthropic\/claude-other only/,
    );
    sim.scriptFor("sk-ant-work-0001", { error: { status: 529 } });
    sim.scriptFor("sk-ant-personal-0002", { error: { status: 529 } });
    sim.scriptFor("sk-openai-0003", { text: "must not be used" });
    const res = await gw.chat("ann", "hello");
    expect(res.body.state).toBe("failed");
    expect(res.body.replies?.[0]?.text).toMatch(/overloaded/);
    expect(sim.requests.map((q) => q.apiKey)).not.toContain("sk-openai-0003");
  });

  it("while every profile cools, the model slot is free: another person's message is answered meanwhile", async () => {
    const clock = new ManualClock(Date.now());
    const gw = await start(
      {
        agent: { model: "anthropic/claude-test" },
        providers: {
          anthropic: { baseUrl: sim.url, profiles: [{ id: "only", apiKey: "sk-ant-only-0004" }] },
          openai: { baseUrl: `${sim.url}/v1`, apiKey: "sk-openai-0003" },
        },
        lanes: { maxConcurrent: 1, reservedForHuman: 0 },
        heartbeat: { everyMs: 0 },
      },
      { clock },
    );
    // Bob's conversation uses the other provider; one model slot in the whole gateway.
    expect((await gw.chat("bob", "/model openai/gpt-test")).body.replies?.[0]?.text).toMatch(
      /now uses openai\/gpt-test/,
    );
    sim.scriptFor(
      "sk-ant-only-0004",
      { error: { status: 429, retryAfterSeconds: 30 } },
      { text: "ann, after the wait" },
    );
    sim.scriptFor("sk-openai-0003", { text: "bob, meanwhile" });
    const first = gw.chat("ann", "first");
    await until(
      () => sim.requests.length === 1 && clock.pendingTimers > 0,
      "ann's turn waiting for the cooling profile",
    );
    // Bob is answered while ann's turn still waits: it gave its slot back.
    expect((await gw.chat("bob", "second")).body.replies?.map((r) => r.text)).toEqual(["bob, meanwhile"]);
    expect((await gw.running.store.inbox.countByState()).running).toBe(1);
    await clock.advanceAsync(30_000);
    expect((await first).body.replies?.map((r) => r.text)).toEqual(["ann, after the wait"]);
    const [run] = await gw.running.store.runs.recent(1);
    expect(run?.attempts.map((x) => [x.outcome, x.waitMs])).toEqual([
      ["rate_limit", 0],
      ["ok", 30_000],
    ]);
  });

  it("the daily spend cap pauses a heartbeat storm, not a person; /status shows the spend", async () => {
    const gw = await start(
      configFor({
        limits: { dailySpendUsd: 0.000001 },
        prices: { "anthropic/claude-test": { input: 1, output: 1 } },
        heartbeat: { everyMs: 1_800_000 },
      }),
    );
    writeFileSync(join(gw.running.workspaceDir, "HEARTBEAT.md"), "- check the inbox\n");
    sim.scriptFor("sk-ant-work-0001", {
      text: "spent",
      usage: { inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    expect((await gw.chat("ann", "hello")).body.state).toBe("answered");
    const calls = sim.requests.length;
    for (let i = 0; i < 5; i++) expect(await gw.running.heartbeat?.beat()).toBe("skipped_idle");
    expect(sim.requests.length).toBe(calls);
    sim.scriptFor("sk-ant-personal-0002", { text: "people go on" });
    sim.scriptFor("sk-ant-work-0001", { text: "people go on" });
    expect((await gw.chat("bob", "still there?")).body.replies?.map((r) => r.text)).toEqual(["people go on"]);
    const status = await gw.chat("ann", "/status");
    expect(status.body.replies?.[0]?.text).toMatch(
      /Today \(UTC\): \$0\.0\d, \d[\d,]* tokens; caps: background pauses at \$0\.00/,
    );
  });
});
