/**
 * Scripts per API key: the official SDKs (no retries of their own) against the simulator, one
 * key rate-limited with the server's requested wait, another answering, and the request log
 * naming the key each attempt used.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";

const sim = new ModelSimulator({ chunkChars: 4 });
beforeAll(() => sim.start());
afterAll(() => sim.close());
afterEach(() => sim.clearScript());

const openai = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${sim.url}/v1`, maxRetries: 0 });
const anthropic = (apiKey: string) => new Anthropic({ apiKey, baseURL: sim.url, maxRetries: 0 });

async function openaiText(apiKey: string): Promise<string> {
  const stream = await openai(apiKey).chat.completions.create({
    model: "gpt-test",
    messages: [{ role: "user", content: "hi" }],
    stream: true,
  });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  return text;
}

async function anthropicText(client: Anthropic): Promise<string> {
  const message = await client.messages
    .stream({ model: "claude-test", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
    .finalMessage();
  return message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
}

/** The keys of the requests received since `before`, in order. */
const keysSince = (before: number) => sim.requests.slice(before).map((r) => r.apiKey);

describe("scriptFor: a script per API key", () => {
  it("openai: key A is rate-limited with retry-after, key B answers; the log names each key", async () => {
    sim.scriptFor("key-a", { error: { status: 429, retryAfterSeconds: 2 } });
    sim.scriptFor("key-b", { text: "answered by B" });
    const before = sim.requests.length;
    const failed = await openaiText("key-a").catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OpenAI.RateLimitError);
    expect((failed as InstanceType<typeof OpenAI.RateLimitError>).headers.get("retry-after")).toBe("2");
    expect(await openaiText("key-b")).toBe("answered by B");
    expect(keysSince(before)).toEqual(["key-a", "key-b"]);
  });

  it("anthropic: key A is rate-limited with retry-after, key B answers; the log names each key", async () => {
    sim.scriptFor("key-a", { error: { status: 429, retryAfterSeconds: 1 } });
    sim.scriptFor("key-b", { text: "answered by B" });
    const before = sim.requests.length;
    const failed = await anthropicText(anthropic("key-a")).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Anthropic.RateLimitError);
    const error = failed as InstanceType<typeof Anthropic.RateLimitError>;
    expect(error.headers.get("retry-after")).toBe("1");
    expect(error.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(await anthropicText(anthropic("key-b"))).toBe("answered by B");
    expect(keysSince(before)).toEqual(["key-a", "key-b"]);
  });

  it("sends retry-after-ms when the error asks for it", async () => {
    sim.scriptFor("key-a", { error: { status: 429, retryAfterMs: 1500, retryAfterSeconds: 2 } });
    const failed = (await openaiText("key-a").catch((e: unknown) => e)) as InstanceType<
      typeof OpenAI.RateLimitError
    >;
    expect(failed.headers.get("retry-after-ms")).toBe("1500");
    expect(failed.headers.get("retry-after")).toBe("2");
  });

  it("takes a key's own turns before the shared script, then falls through to it and the responder", async () => {
    sim.script({ text: "shared one" });
    sim.scriptFor("key-a", { text: "own one" }, { text: "own two" });
    expect(await openaiText("key-a")).toBe("own one");
    expect(await anthropicText(anthropic("key-b"))).toBe("shared one"); // no script of its own
    expect(await anthropicText(anthropic("key-a"))).toBe("own two"); // across protocols
    expect(await openaiText("key-a")).toMatch(/^Simulated reply/); // both scripts are used up
  });

  it("reads the key from x-api-key or from a bearer token, whichever the client sends", async () => {
    sim.scriptFor("header-key", { text: "via x-api-key" });
    const res = await fetch(`${sim.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "header-key" },
      body: JSON.stringify({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }] }),
    });
    expect(await res.json()).toMatchObject({ content: [{ type: "text", text: "via x-api-key" }] });
    expect(sim.requests.at(-1)?.apiKey).toBe("header-key");
    sim.scriptFor("oauth-token", { text: "via bearer" });
    const client = new Anthropic({ authToken: "oauth-token", apiKey: null, baseURL: sim.url, maxRetries: 0 });
    expect(await anthropicText(client)).toBe("via bearer");
    expect(sim.requests.at(-1)?.apiKey).toBe("oauth-token");
  });

  it("clearScript drops the per-key turns too", async () => {
    sim.scriptFor("key-a", { text: "never sent" });
    sim.clearScript();
    expect(await openaiText("key-a")).toMatch(/^Simulated reply/);
  });

  it("refuses an empty key", () => {
    expect(() => sim.scriptFor("", { text: "x" })).toThrow(/apiKey/);
  });
});
