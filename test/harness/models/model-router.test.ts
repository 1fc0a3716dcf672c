/**
 * The model router through the real SDK adapters against the model simulator, with faults
 * scripted per API key and a manual clock: rotation to the next auth profile, cooldowns by kind
 * (exactly the server's retry-after), fallback to another provider, the wait when everything
 * is cooling, session stickiness and the retry of the primary, strict `/model` choices, the
 * note to a model that takes over, and the caps.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { AuthProfiles } from "../../../src/harness/models/auth-profiles.js";
import { DEFAULT_COOLDOWNS } from "../../../src/harness/models/cooldown.js";
import { ModelRouter, type RouterEvent } from "../../../src/harness/models/model-router.js";
import { PriceTable } from "../../../src/harness/models/prices.js";
import { UsageMeter } from "../../../src/harness/models/usage-meter.js";
import { AnthropicProvider } from "../../../src/harness/providers/anthropic.js";
import { OpenAIProvider } from "../../../src/harness/providers/openai.js";
import type { ModelProvider, ProviderEvent } from "../../../src/harness/providers/types.js";
import { openSqliteStore } from "../../../src/store/sqlite/open-sqlite-store.js";
import { ManualClock } from "../../../src/util/clock.js";
import { ModelSimulator } from "../../fakes/model-simulator.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

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

const KEYS: Record<string, string> = {
  "anthropic:a": "key-a",
  "anthropic:b": "key-b",
  "openai:default": "key-openai",
};

interface Setup {
  clock?: ManualClock;
  chain?: Array<{ ref: string; provider: string; model: string }>;
  profiles?: Record<string, string[]>;
  usage?: UsageMeter;
  authProfiles?: AuthProfiles;
  maxWaitMs?: number;
}

function router(setup: Setup = {}): { router: ModelRouter; clock: ManualClock; events: RouterEvent[] } {
  const clock = setup.clock ?? new ManualClock();
  const events: RouterEvent[] = [];
  const r = new ModelRouter({
    chain: setup.chain ?? [
      { ref: "anthropic/claude-a", provider: "anthropic", model: "claude-a" },
      { ref: "openai/gpt-b", provider: "openai", model: "gpt-b" },
    ],
    profiles: setup.profiles ?? { anthropic: ["a", "b"], openai: ["default"] },
    connect: (provider, profileId) => {
      const apiKey = KEYS[`${provider}:${profileId}`] ?? "key-unknown";
      return provider === "openai"
        ? new OpenAIProvider({ apiKey, baseUrl: `${sim.url}/v1` })
        : new AnthropicProvider({ apiKey, baseUrl: sim.url });
    },
    clock,
    ...(setup.usage ? { usage: setup.usage } : {}),
    ...(setup.authProfiles ? { authProfiles: setup.authProfiles } : {}),
    ...(setup.maxWaitMs !== undefined ? { maxWaitMs: setup.maxWaitMs } : {}),
    onEvent: (e) => events.push(e),
  });
  return { router: r, clock, events };
}

const HISTORY_CALL = {
  system: "You are a test.",
  messages: [
    { role: "user" as const, content: "first" },
    { role: "assistant" as const, content: "answered by the primary", toolCalls: [] },
    { role: "user" as const, content: "second" },
  ],
  tools: [],
  maxTokens: 64,
};
const CALL = {
  system: "You are a test.",
  messages: [{ role: "user" as const, content: "hi" }],
  tools: [],
  maxTokens: 64,
};

async function collect(
  stream: AsyncIterable<ProviderEvent>,
  onEvent?: (e: ProviderEvent) => void,
): Promise<ProviderEvent[]> {
  const out: ProviderEvent[] = [];
  for await (const e of stream) {
    out.push(e);
    onEvent?.(e);
  }
  return out;
}

const text = (events: ProviderEvent[]) =>
  events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("");
const attempts = (events: ProviderEvent[]) =>
  events.flatMap((e) => (e.type === "attempt" ? [`${e.provider}:${e.profileId}`] : []));
const ctx = (sessionKey = "s1", extra: Record<string, unknown> = {}) => ({
  sessionKey,
  origin: "human" as const,
  runTokens: 0,
  ...extra,
});

describe("ModelRouter", () => {
  it("a 429 with retry-after on profile A: the same call completes on B, and A cools exactly that long", async () => {
    const { router: r, clock } = router();
    sim.scriptFor("key-a", { error: { status: 429, retryAfterSeconds: 7 } });
    sim.scriptFor("key-b", { text: "from b" });
    const events = await collect(r.stream(CALL, new AbortController().signal, ctx()));
    expect(attempts(events)).toEqual(["anthropic:a", "anthropic:b"]);
    expect(events.find((e) => e.type === "attempt_failed")).toMatchObject({ error: { kind: "rate_limit" } });
    expect(text(events)).toBe("from b");
    expect(r.authProfiles.coolingUntil("anthropic", "a") - clock.now()).toBe(7_000);
    expect(sim.requests.map((q) => q.apiKey)).toEqual(["key-a", "key-b"]);
    // The session sticks to B while it is healthy, even after A has cooled down.
    clock.advance(7_000);
    sim.scriptFor("key-b", { text: "b again" });
    expect(text(await collect(r.stream(CALL, new AbortController().signal, ctx())))).toBe("b again");
  });

  it("every profile of the primary overloaded: the fallback on the other provider answers, every attempt recorded", async () => {
    const { router: r, events: routed } = router();
    sim.scriptFor("key-a", { error: { status: 529 } });
    sim.scriptFor("key-b", { error: { status: 529 } });
    sim.scriptFor("key-openai", { text: "from openai" });
    const events = await collect(r.stream(HISTORY_CALL, new AbortController().signal, ctx()));
    expect(attempts(events)).toEqual(["anthropic:a", "anthropic:b", "openai:default"]);
    expect(text(events)).toBe("from openai");
    expect(routed.filter((e) => e.type === "failover")).toEqual([
      { type: "failover", from: "anthropic/claude-a", to: "openai/gpt-b" },
    ]);
    expect(routed.filter((e) => e.type === "call").map((e) => (e.type === "call" ? e.outcome : ""))).toEqual([
      "overloaded",
      "overloaded",
      "ok",
    ]);
    // The model that takes over is told, once.
    const openaiBody = sim.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
    expect(JSON.stringify(openaiBody.messages[0])).toMatch(
      /earlier replies .* came from the model anthropic\/claude-a/,
    );
  });

  it("after a fallback the session stays there, and tries the primary again after fallbackRetryPrimaryMs", async () => {
    const { router: r, clock } = router();
    sim.scriptFor("key-a", { error: { status: 529 } });
    sim.scriptFor("key-b", { error: { status: 529 } });
    sim.scriptFor("key-openai", { text: "fallback" }, { text: "still fallback" });
    await collect(r.stream(CALL, new AbortController().signal, ctx()));
    clock.advance(60_000); // the primary's profiles are healthy again
    expect(text(await collect(r.stream(CALL, new AbortController().signal, ctx())))).toBe("still fallback");
    expect(r.currentRef("s1")).toBe("openai/gpt-b");
    clock.advance(600_000);
    sim.scriptFor("key-a", { text: "primary again" });
    expect(text(await collect(r.stream(CALL, new AbortController().signal, ctx())))).toBe("primary again");
    expect(r.currentRef("s1")).toBe("anthropic/claude-a");
  });

  it("a rejected key cools for 5 minutes, then longer; an invalid request cools nothing and does not fail over", async () => {
    const { router: r, clock } = router({ profiles: { anthropic: ["a"], openai: ["default"] } });
    sim.scriptFor("key-a", { error: { status: 401 } });
    sim.scriptFor("key-openai", { text: "ok" });
    await collect(r.stream(CALL, new AbortController().signal, ctx()));
    expect(r.authProfiles.coolingUntil("anthropic", "a") - clock.now()).toBe(300_000);
    clock.advance(300_000);
    sim.scriptFor("key-a", { error: { status: 401 } });
    sim.scriptFor("key-openai", { text: "ok" });
    await collect(r.stream(CALL, new AbortController().signal, ctx("s2")));
    expect(r.authProfiles.coolingUntil("anthropic", "a") - clock.now()).toBe(1_200_000);

    const { router: r2 } = router();
    sim.scriptFor("key-a", { error: { status: 400, message: "messages: bad shape" } });
    const events = await collect(r2.stream(CALL, new AbortController().signal, ctx()));
    expect(attempts(events)).toEqual(["anthropic:a"]);
    expect(events.at(-1)).toMatchObject({ type: "error", error: { kind: "invalid_request" } });
    expect(r2.authProfiles.coolingUntil("anthropic", "a")).toBe(0);
  });

  it("everything cooling: waits for the profile that frees soonest (no call in flight), then answers", async () => {
    const { router: r, clock } = router({
      chain: [{ ref: "anthropic/claude-a", provider: "anthropic", model: "claude-a" }],
      profiles: { anthropic: ["a", "b"] },
    });
    sim.scriptFor("key-a", { error: { status: 429, retryAfterSeconds: 20 } }, { text: "a after the wait" });
    sim.scriptFor("key-b", { error: { status: 429, retryAfterSeconds: 45 } });
    const seen: ProviderEvent[] = [];
    const done = collect(r.stream(CALL, new AbortController().signal, ctx()), (e) => seen.push(e));
    await vi.waitFor(() => expect(seen.some((e) => e.type === "retry_wait")).toBe(true));
    const wait = seen.find((e) => e.type === "retry_wait");
    expect(wait).toMatchObject({ waitMs: 20_000 });
    expect(sim.requests).toHaveLength(2);
    await clock.advanceAsync(20_000);
    const events = await done;
    expect(text(events)).toBe("a after the wait");
    expect(events.filter((e) => e.type === "attempt").at(-1)).toMatchObject({
      profileId: "a",
      waitMs: 20_000,
    });
  });

  it("gives up with the reason when the wait would exceed maxWaitMs", async () => {
    const { router: r } = router({
      chain: [{ ref: "anthropic/claude-a", provider: "anthropic", model: "claude-a" }],
      profiles: { anthropic: ["a"] },
      maxWaitMs: 10_000,
    });
    sim.scriptFor("key-a", { error: { status: 429, retryAfterSeconds: 60 } });
    const events = await collect(r.stream(CALL, new AbortController().signal, ctx()));
    expect(events.at(-1)).toMatchObject({
      type: "error",
      error: {
        kind: "rate_limit",
        message: expect.stringMatching(
          /every auth profile of anthropic\/claude-a is cooling down \(the first frees in 60 s\)/,
        ),
      },
    });
  });

  it("a stream that dies half-way is announced as failed before the next attempt streams the answer", async () => {
    const { router: r } = router();
    sim.scriptFor("key-a", { dropAfterChunks: 2, text: "Hello there, this is a long answer" });
    sim.scriptFor("key-b", { text: "Hello there, this is a long answer" });
    const events = await collect(r.stream(CALL, new AbortController().signal, ctx()));
    const failedAt = events.findIndex((e) => e.type === "attempt_failed");
    expect(failedAt).toBeGreaterThan(0);
    expect(text(events.slice(failedAt))).toBe("Hello there, this is a long answer");
  });

  it("a model chosen with /model is strict: it fails visibly instead of falling back", async () => {
    const { router: r } = router({ profiles: { anthropic: ["a"], openai: ["default"] }, maxWaitMs: 0 });
    sim.scriptFor("key-openai", { error: { status: 503 } });
    const events = await collect(
      r.stream(CALL, new AbortController().signal, ctx("s1", { modelOverride: "openai/gpt-b" })),
    );
    expect(attempts(events)).toEqual(["openai:default"]);
    expect(events.at(-1)).toMatchObject({ type: "error" });
    expect(r.refusal("ollama/x")).toMatch(
      /provider "ollama" is not configured \(configured: anthropic, openai\)/,
    );
    expect(r.refusal("openai/gpt-x")).toBeUndefined();
  });

  it("a cap stops the call before it is made; background work pauses at the daily spend cap, people go on", async () => {
    const clock = new ManualClock();
    const usage = new UsageMeter({
      prices: new PriceTable({ "anthropic/claude-a": { input: 1_000_000, output: 0 } }),
      limits: { maxTokensPerRun: 1_000, dailySpendUsd: 1, dailySpendHardUsd: 1_000_000 },
      clock,
    });
    const { router: r } = router({ clock, usage });
    const runCap = await collect(
      r.stream(CALL, new AbortController().signal, ctx("s1", { runTokens: 1_000 })),
    );
    expect(runCap).toEqual([
      {
        type: "error",
        error: expect.objectContaining({
          kind: "budget",
          message: expect.stringMatching(/limits\.maxTokensPerRun/),
        }),
      },
    ]);
    sim.scriptFor("key-a", {
      text: "priced",
      usage: { inputTokens: 2, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    const events = await collect(r.stream(CALL, new AbortController().signal, ctx()));
    expect(events.find((e) => e.type === "usage")).toMatchObject({ costUsd: 2 });
    expect(usage.today().spendUsd).toBe(2);
    const background = await collect(
      r.stream(CALL, new AbortController().signal, { ...ctx("hb"), origin: "heartbeat" }),
    );
    expect(background.at(-1)).toMatchObject({
      type: "error",
      error: { kind: "budget", message: expect.stringMatching(/background work is paused/) },
    });
    sim.scriptFor("key-b", { text: "a person still gets an answer" });
    sim.scriptFor("key-a", { text: "a person still gets an answer" });
    expect(text(await collect(r.stream(CALL, new AbortController().signal, ctx("s2"))))).toBe(
      "a person still gets an answer",
    );
  });
});

describe("ModelRouter.prepare", () => {
  /** A provider that counts its prepares; `stream` is never called here. */
  const counting = (prepared: string[], id: string): ModelProvider => ({
    id,
    simulated: true,
    stream: () => {
      throw new Error("not called");
    },
    prepare: async () => {
      prepared.push(id);
    },
  });

  it("loads the primary model's provider (its first profile) and no other", async () => {
    const prepared: string[] = [];
    const connected: string[] = [];
    const r = new ModelRouter({
      chain: [
        { ref: "anthropic/claude-a", provider: "anthropic", model: "claude-a" },
        { ref: "openai/gpt-b", provider: "openai", model: "gpt-b" },
      ],
      profiles: { anthropic: ["a", "b"], openai: ["default"] },
      connect: (provider, profileId) => {
        connected.push(`${provider}:${profileId}`);
        return counting(prepared, `${provider}:${profileId}`);
      },
    });
    await r.prepare();
    expect(prepared).toEqual(["anthropic:a"]);
    expect(connected).toEqual(["anthropic:a"]); // the adapter is the one the first call will use
  });

  it("never rejects: a provider that cannot connect reports it on its call", async () => {
    const r = new ModelRouter({
      chain: [{ ref: "anthropic/claude-a", provider: "anthropic", model: "claude-a" }],
      profiles: { anthropic: ["a"] },
      connect: () => {
        throw new Error("no auth profile anthropic:a");
      },
    });
    await expect(r.prepare()).resolves.toBeUndefined();
  });

  it("loads the real SDK ahead of the first call (the OpenAI and Anthropic providers)", async () => {
    for (const provider of [
      new OpenAIProvider({ apiKey: "k", baseUrl: "http://127.0.0.1:9/v1" }),
      new AnthropicProvider({ apiKey: "k", baseUrl: "http://127.0.0.1:9" }),
    ]) {
      await expect(provider.prepare()).resolves.toBeUndefined();
    }
  });
});

describe("AuthProfiles", () => {
  it("orders profiles: not cooling, fewest failures, least recently used; the sticky one first while healthy", () => {
    const clock = new ManualClock();
    const p = new AuthProfiles({ cooldowns: DEFAULT_COOLDOWNS, clock });
    p.succeeded("x", "a");
    clock.advance(10);
    p.succeeded("x", "b");
    expect(p.order("x", ["a", "b", "c"])).toEqual(["c", "a", "b"]);
    expect(p.order("x", ["a", "b", "c"], "b")).toEqual(["b", "c", "a"]);
    p.failed(
      "x",
      "c",
      Object.assign(new Error("slow"), { kind: "overloaded" as const, retryAfterMs: undefined }) as never,
    );
    expect(p.order("x", ["a", "b", "c"])).toEqual(["a", "b", "c"]);
  });

  it("cooldowns survive a restart, and a reset from the CLI reaches a running gateway at its next sync", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-auth-"));
    try {
      const clock = new ManualClock();
      const store = openSqliteStore({ path: join(dir, "db.sqlite") });
      const first = new AuthProfiles({ cooldowns: DEFAULT_COOLDOWNS, clock, repo: store.authProfiles });
      await first.load();
      const { ProviderError } = await import("../../../src/harness/providers/provider-error.js");
      first.failed("anthropic", "a", new ProviderError("billing", "out of credit"));
      await first.close();

      const second = new AuthProfiles({ cooldowns: DEFAULT_COOLDOWNS, clock, repo: store.authProfiles });
      await second.load();
      expect(second.coolingUntil("anthropic", "a") - clock.now()).toBe(18_000_000);
      clock.advance(1);
      await store.authProfiles.reset("anthropic", "a", clock.now());
      await second.sync();
      expect(second.coolingUntil("anthropic", "a")).toBe(0);
      await second.close();
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
