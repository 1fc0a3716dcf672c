/**
 * The model simulator on the wire: raw HTTP for the exact frame formats, and the official SDKs'
 * own accumulating helpers to prove they parse what it sends.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defaultResponder, ModelSimulator } from "../fakes/model-simulator.js";

const sim = new ModelSimulator({ chunkChars: 4 });
beforeAll(() => sim.start());
afterAll(() => sim.close());
afterEach(() => sim.clearScript());

function post(path: string, body: unknown, headers: Record<string, string> = { authorization: "Bearer k" }) {
  return fetch(`${sim.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** Splits an SSE body into frames of { event, data }. */
function frames(body: string): Array<{ event: string | undefined; data: string }> {
  return body
    .split("\n\n")
    .filter((frame) => frame.trim() !== "")
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? "";
      return { event, data };
    });
}

const openaiBody = (extra: Record<string, unknown> = {}) => ({
  model: "gpt-test",
  messages: [{ role: "user", content: "hi" }],
  stream: true,
  ...extra,
});
const anthropicBody = (extra: Record<string, unknown> = {}) => ({
  model: "claude-test",
  max_tokens: 100,
  messages: [{ role: "user", content: "hi" }],
  stream: true,
  ...extra,
});

describe("OpenAI chat completions stream", () => {
  it("sends role chunk, content deltas, finish chunk, usage chunk (asked for), then [DONE]", async () => {
    sim.script({ text: "Hello world" });
    const res = await post("/v1/chat/completions", openaiBody({ stream_options: { include_usage: true } }));
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("x-request-id")).toMatch(/^req_sim_\d+$/);
    const data = frames(await res.text()).map((f) => f.data);
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks[0]).toMatchObject({
      object: "chat.completion.chunk",
      model: "gpt-test",
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
      usage: null,
    });
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(content).toBe("Hello world");
    expect(chunks.at(-2).choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
    expect(chunks.at(-1).usage.prompt_tokens_details).toEqual({ cached_tokens: 0, audio_tokens: 0 });
  });

  it("omits the usage chunk unless stream_options.include_usage is true", async () => {
    const data = frames(await (await post("/v1/chat/completions", openaiBody())).text()).map((f) => f.data);
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.every((c) => c.choices.length === 1 && c.usage === null)).toBe(true);
  });

  it("streams tool calls: id, type and name first, then argument fragments; the SDK helper reassembles", async () => {
    sim.script({
      toolCalls: [
        { name: "a", args: { x: 1, long: "abcdefghij" } },
        { name: "b", args: {} },
      ],
    });
    const raw = frames(await (await post("/v1/chat/completions", openaiBody())).text()).map((f) => f.data);
    const deltas = raw.slice(0, -1).flatMap((d) => JSON.parse(d).choices[0]?.delta.tool_calls ?? []) as Array<
      Record<string, unknown>
    >;
    expect(deltas[0]).toEqual({
      index: 0,
      id: expect.stringMatching(/^call_/),
      type: "function",
      function: { name: "a", arguments: "" },
    });
    expect(deltas.filter((d) => d.index === 0).length).toBeGreaterThan(2);
    expect(Object.keys(deltas[1] ?? {})).toEqual(["index", "function"]);

    sim.script({
      toolCalls: [
        { name: "a", args: { x: 1 } },
        { name: "b", args: { y: [2] } },
      ],
      text: "Calling.",
    });
    const client = new OpenAI({ apiKey: "k", baseURL: `${sim.url}/v1`, maxRetries: 0 });
    const final = await client.chat.completions
      .stream({
        model: "m",
        messages: [{ role: "user", content: "go" }],
        stream_options: { include_usage: true },
      })
      .finalChatCompletion();
    const message = final.choices[0]?.message;
    expect(message?.content).toBe("Calling.");
    expect(
      message?.tool_calls?.map((c) => (c.type === "function" ? [c.function.name, c.function.arguments] : [])),
    ).toEqual([
      ["a", '{"x":1}'],
      ["b", '{"y":[2]}'],
    ]);
    expect(final.choices[0]?.finish_reason).toBe("tool_calls");
    expect(final.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it("answers a non-stream request with a JSON completion", async () => {
    sim.script({ text: "plain", toolCalls: [{ name: "t", args: { q: "z" } }] });
    const client = new OpenAI({ apiKey: "k", baseURL: `${sim.url}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]?.message.content).toBe("plain");
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      function: { name: "t", arguments: '{"q":"z"}' },
    });
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it("sends an in-stream error object after the partial text, without [DONE]", async () => {
    sim.script({ text: "part", midStreamError: { type: "server_error", message: "boom" } });
    const data = frames(await (await post("/v1/chat/completions", openaiBody())).text()).map((f) => f.data);
    expect(JSON.parse(data.at(-1) ?? "")).toEqual({
      error: { message: "boom", type: "server_error", param: null, code: null },
    });
    expect(data).not.toContain("[DONE]");
  });
});

describe("Anthropic messages stream", () => {
  it("sends the exact named-event sequence with usage and a request-id header", async () => {
    sim.script({ text: "Check this", toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] });
    const res = await post("/v1/messages", anthropicBody(), { "x-api-key": "k" });
    expect(res.headers.get("request-id")).toMatch(/^req_sim_\d+$/);
    const events = frames(await res.text());
    for (const f of events) expect(JSON.parse(f.data).type).toBe(f.event);
    const names = events.map((f) => f.event);
    expect(names.slice(0, 3)).toEqual(["message_start", "ping", "content_block_start"]);
    expect(names.slice(-2)).toEqual(["message_delta", "message_stop"]);
    const start = JSON.parse(events[0]?.data ?? "");
    expect(start.message).toMatchObject({
      role: "assistant",
      model: "claude-test",
      content: [],
      stop_reason: null,
    });
    expect(Object.keys(start.message.usage)).toEqual(
      expect.arrayContaining([
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "cache_creation",
        "output_tokens",
      ]),
    );
    const jsonDeltas = events
      .map((f) => JSON.parse(f.data))
      .filter((e) => e.type === "content_block_delta" && e.delta.type === "input_json_delta");
    expect(jsonDeltas.length).toBeGreaterThan(2);
    expect(jsonDeltas.map((e) => e.delta.partial_json).join("")).toBe('{"city":"Paris"}');
    const delta = JSON.parse(events.at(-2)?.data ?? "");
    expect(delta.delta.stop_reason).toBe("tool_use");
    expect(delta.usage.output_tokens).toBeGreaterThan(0);
  });

  it("is parsed by the SDK's MessageStream helper, tool input included", async () => {
    sim.script({ text: "Hi.", toolCalls: [{ name: "t", args: { a: [1, 2], b: "c" } }] });
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const message = await client.messages
      .stream({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "go" }] })
      .finalMessage();
    expect(message.content.map((b) => b.type)).toEqual(["text", "tool_use"]);
    const tool = message.content[1];
    expect(tool?.type === "tool_use" && tool.input).toEqual({ a: [1, 2], b: "c" });
    expect(message.stop_reason).toBe("tool_use");
  });

  it("answers a non-stream request with a JSON message", async () => {
    sim.script({ text: "plain" });
    const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
    const message = await client.messages.create({
      model: "m",
      max_tokens: 5,
      messages: [{ role: "user", content: "x" }],
    });
    expect(message.content[0]).toMatchObject({ type: "text", text: "plain" });
    expect(message.stop_reason).toBe("end_turn");
  });

  it("sends event: error after the partial text", async () => {
    sim.script({ text: "part", midStreamError: { type: "overloaded_error", message: "Overloaded" } });
    const events = frames(await (await post("/v1/messages", anthropicBody())).text());
    expect(events.at(-1)).toEqual({
      event: "error",
      data: JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    });
  });
});

describe("errors", () => {
  it("answers OpenAI errors in its shape, with retry-after when given", async () => {
    sim.script({ error: { status: 429, retryAfterSeconds: 3 } });
    const res = await post("/v1/chat/completions", openaiBody());
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(await res.json()).toEqual({
      error: { message: expect.any(String), type: "requests", param: null, code: "rate_limit_exceeded" },
    });
    sim.script({ error: { status: 400, code: "context_length_exceeded" } });
    const overflow = (await (await post("/v1/chat/completions", openaiBody())).json()) as {
      error: { code: string };
    };
    expect(overflow.error.code).toBe("context_length_exceeded");
  });

  it("answers Anthropic errors in its shape", async () => {
    sim.script({ error: { status: 529 } }, { error: { status: 400, code: "context_length_exceeded" } });
    const overloaded = await post("/v1/messages", anthropicBody());
    expect(overloaded.status).toBe(529);
    expect(await overloaded.json()).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
      request_id: overloaded.headers.get("request-id"),
    });
    const overflow = (await (await post("/v1/messages", anthropicBody())).json()) as {
      error: { message: string };
    };
    expect(overflow.error.message).toBe("prompt is too long: 208310 tokens > 200000 maximum");
  });

  it("answers an unknown path with 404 in the protocol's shape", async () => {
    const openai = await post("/v1/embeddings", {});
    expect(openai.status).toBe(404);
    expect(((await openai.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
    const anthropic = await post("/v1/messages/count_tokens", {});
    expect(anthropic.status).toBe(404);
    expect(await anthropic.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });

  it("rejects a request without credentials with 401", async () => {
    const res = await post("/v1/messages", anthropicBody(), {});
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { type: "authentication_error" } });
  });

  it("drops the connection after the given number of chunks", async () => {
    sim.script({ dropAfterChunks: 2, text: "abcdefghijklmnop" });
    const res = await post("/v1/chat/completions", openaiBody());
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow(/terminated/);
  });
});

describe("script, recording and default replies", () => {
  it("consumes the script FIFO across both protocols and records every request first", async () => {
    const before = sim.requests.length;
    sim.script({ text: "one" }, { text: "two" });
    const first = await (await post("/v1/messages", anthropicBody({ stream: false }))).json();
    const second = await (await post("/v1/chat/completions", openaiBody({ stream: false }))).json();
    expect(first).toMatchObject({ content: [{ type: "text", text: "one" }] });
    expect(second).toMatchObject({ choices: [{ message: { content: "two" } }] });
    const recorded = sim.requests.slice(before);
    expect(recorded.map((r) => [r.protocol, r.path])).toEqual([
      ["anthropic", "/v1/messages"],
      ["openai", "/v1/chat/completions"],
    ]);
    expect(recorded[0]?.body).toMatchObject({ model: "claude-test" });
    expect(recorded[0]?.headers.authorization).toBe("Bearer k");
    expect(recorded[0]?.timeMs).toBeLessThanOrEqual(Date.now());
  });

  it("answers deterministically when nothing is scripted, echoing the user (truncated)", async () => {
    const said = "x".repeat(300);
    const reply = async () =>
      (await (
        await post(
          "/v1/chat/completions",
          openaiBody({ stream: false, messages: [{ role: "user", content: said }] }),
        )
      ).json()) as { choices: Array<{ message: { content: string } }> };
    const a = (await reply()).choices[0]?.message.content;
    expect(a).toBe(`Simulated reply (no model API key is configured): you said "${"x".repeat(200)}…".`);
    expect((await reply()).choices[0]?.message.content).toBe(a);
  });

  it("uses a custom default responder", async () => {
    sim.setDefault((request) => ({ text: `echo ${request.protocol}` }));
    try {
      const body = await (await post("/v1/messages", anthropicBody({ stream: false }))).json();
      expect(body).toMatchObject({ content: [{ text: "echo anthropic" }] });
    } finally {
      sim.setDefault(defaultResponder);
    }
  });

  it("applies usage overrides", async () => {
    sim.script({ text: "x", usage: { inputTokens: 7, cacheReadTokens: 11, outputTokens: 3 } });
    const body = (await (await post("/v1/messages", anthropicBody({ stream: false }))).json()) as {
      usage: unknown;
    };
    expect(body.usage).toMatchObject({ input_tokens: 7, cache_read_input_tokens: 11, output_tokens: 3 });
  });

  it("paces chunks with chunkDelayMs", async () => {
    sim.script({ text: "abcdefgh", chunkDelayMs: 30 });
    const started = Date.now();
    await (await post("/v1/chat/completions", openaiBody())).text();
    // role + 2 content + finish + [DONE] = 5 frames, 4 gaps.
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
  });

  it("waitForRequests rejects after its timeout", async () => {
    await expect(sim.waitForRequests(sim.requests.length + 1, 30)).rejects.toThrow(/waitForRequests/);
  });

  it("rejects bad options, naming the field", () => {
    expect(() => new ModelSimulator({ chunkChars: 0 })).toThrow(/chunkChars: got 0/);
    expect(() => new ModelSimulator({ chunkDelayMs: -1 })).toThrow(/chunkDelayMs/);
  });
});

describe("prompt-cache accounting", () => {
  it("anthropic: reads the shared prefix only when the request uses cache_control", async () => {
    const system = "S".repeat(4_000);
    const usage = async (body: Record<string, unknown>) =>
      (
        (await (
          await post("/v1/messages", anthropicBody({ stream: false, model: "cache-a", ...body }))
        ).json()) as {
          usage: {
            input_tokens: number;
            cache_read_input_tokens: number;
            cache_creation_input_tokens: number;
          };
        }
      ).usage;
    const plain = await usage({ system });
    expect(plain.cache_read_input_tokens).toBe(0);
    expect((await usage({ system })).cache_read_input_tokens).toBe(0);
    const cached = [{ type: "text", text: system, cache_control: { type: "ephemeral" } }];
    const write = await usage({ system: cached });
    expect(write.cache_creation_input_tokens).toBeGreaterThan(1_000);
    const read = await usage({ system: cached });
    expect(read.cache_read_input_tokens).toBe(write.cache_creation_input_tokens);
    expect(read.cache_creation_input_tokens).toBe(0);
    expect(read.input_tokens).toBeGreaterThan(0);
  });

  it("openai: cached_tokens is the common prefix rounded down to 128 once it reaches 1024", async () => {
    const cachedOf = async (content: string) =>
      (
        (await (
          await post("/v1/chat/completions", {
            model: "cache-o",
            messages: [
              { role: "system", content },
              { role: "user", content: "q" },
            ],
          })
        ).json()) as { usage: { prompt_tokens_details: { cached_tokens: number } } }
      ).usage.prompt_tokens_details.cached_tokens;
    expect(await cachedOf("a".repeat(3_000))).toBe(0);
    expect(await cachedOf("a".repeat(3_000))).toBe(0); // 750 tokens: below OpenAI's minimum
    expect(await cachedOf("b".repeat(6_000))).toBe(0);
    const cached = await cachedOf("b".repeat(6_000));
    expect(cached).toBe(1_408); // floor(6_0xx chars / 4) = 1_5xx tokens → 1_408
  });
});

describe("lifecycle", () => {
  it("close() releases hanging requests and stops listening", async () => {
    const own = new ModelSimulator();
    await own.start();
    const url = own.url;
    own.script({ hang: true });
    const pending = fetch(`${url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "k" },
      body: JSON.stringify(anthropicBody()),
    }).then(
      () => "answered",
      () => "failed",
    );
    await own.waitForRequests(1, 2_000);
    const started = Date.now();
    await own.close();
    expect(await pending).toBe("failed");
    expect(Date.now() - started).toBeLessThan(500);
    await expect(fetch(`${url}/v1/messages`, { method: "POST" })).rejects.toThrow();
  });
});
