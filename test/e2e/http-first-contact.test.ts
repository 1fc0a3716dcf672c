/**
 * What a new user of the HTTP API ran into: colliding client ids, ids that were silently
 * ignored, the OpenAI-compatible endpoint's gaps, senders in other scripts, and the bearer token.
 */
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

/** The fields these tests read from any of the endpoints' answers. */
interface Body {
  duplicate?: boolean;
  sessionKey: string;
  replies: [{ text: string }];
  error: { code: string; message: string; type: string; param: string | null };
  choices: [{ message: { content: string } }];
}

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

describe("HTTP API, first contact", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    gw = await startTestGateway(simulatorConfig(sim, "openai"));
  });
  afterAll(async () => {
    await gw.stop();
    await sim.close();
  });
  afterEach(() => sim.clearScript());

  it("two senders using the same id each get their own message run and their own reply", async () => {
    const ann = await post(gw.url, "/v1/chat", { sender: "ann", text: "msg one", id: "m1" });
    const zed = await post(gw.url, "/v1/chat", { sender: "zed", text: "zed msg", id: "m1" });
    expect(ann.body.duplicate).toBeUndefined();
    expect(zed.body.duplicate).toBeUndefined();
    expect(zed.body.sessionKey).toBe("agent:main:http:dm:zed");
    expect(zed.body.replies[0].text).toContain("zed msg");
    expect(zed.body.replies[0].text).not.toContain("msg one");
    // A real redelivery of zed's m1 is still recognised, and answered from zed's own run.
    const again = await post(gw.url, "/v1/chat", { sender: "zed", text: "zed msg", id: "m1" });
    expect(again.body).toMatchObject({ duplicate: true, replies: zed.body.replies });
  });

  it("takes a numeric id as an id (a resend is a duplicate) and refuses any other non-string id", async () => {
    const first = await post(gw.url, "/v1/chat", { sender: "num", text: "five", id: 5 });
    const second = await post(gw.url, "/v1/chat", { sender: "num", text: "five", id: 5 });
    expect(first.status).toBe(200);
    expect(second.body.duplicate).toBe(true);
    for (const id of [true, {}, [], "", "x".repeat(201)]) {
      const bad = await post(gw.url, "/v1/chat", { sender: "num", text: "bad id", id });
      expect(bad.status, JSON.stringify(id)).toBe(400);
      expect(bad.body.error).toMatchObject({ code: "invalid_id", param: "id" });
      expect(bad.body.error.message).toMatch(/"id" must be a string of 1–200 characters or a number/);
    }
    expect((await gw.running.store.inbox.countByState()).answered).toBeGreaterThan(0);
  });

  it("dedupes OpenAI requests by Idempotency-Key per user", async () => {
    const ask = (user: string) =>
      post(
        gw.url,
        "/v1/chat/completions",
        { model: "switchyard:main", user, messages: [{ role: "user", content: `from ${user}` }] },
        { "idempotency-key": "k-1" },
      );
    const a1 = await ask("idem-ann");
    const b1 = await ask("idem-bob");
    const a2 = await ask("idem-ann");
    expect(b1.body.choices[0].message.content).toContain("from idem-bob");
    expect(a2.body.choices[0].message.content).toBe(a1.body.choices[0].message.content);
    const runs = await gw.running.store.runs.recent(50);
    expect(runs.filter((r) => r.sessionKey === "agent:main:http:dm:idem-ann")).toHaveLength(1);
  });

  it("accepts senders in any script and cuts an invalid one in the error", async () => {
    const jose = await post(gw.url, "/v1/chat", { sender: "josé", text: "hola" });
    expect(jose.status).toBe(200);
    expect(jose.body.sessionKey).toBe("agent:main:http:dm:josé");
    // The same name typed decomposed (e + combining accent) is the same person.
    const decomposed = await post(gw.url, "/v1/chat", { sender: "jose\u0301", text: "otra vez" });
    expect(decomposed.body.sessionKey).toBe("agent:main:http:dm:josé");
    const long = await post(gw.url, "/v1/chat", { sender: "bad name ".repeat(12_000), text: "hi" });
    expect(long.status).toBe(400);
    expect(long.body.error.message.length).toBeLessThan(300);
    expect(long.body.error.message).toContain("(108000 characters)");
  });

  it("GET /v1/models lists the agent", async () => {
    const models = await new OpenAI({ apiKey: "any", baseURL: `${gw.url}/v1` }).models.list();
    expect(models.data.map((m) => m.id)).toEqual(["switchyard:main"]);
  });

  it("reports the run's real token usage, plain and streamed", async () => {
    const client = new OpenAI({ apiKey: "any", baseURL: `${gw.url}/v1` });
    const usage = { inputTokens: 11, outputTokens: 7, cacheReadTokens: 3, cacheWriteTokens: 0 };
    sim.script({ text: "counted", usage });
    const plain = await client.chat.completions.create({
      model: "switchyard:main",
      user: "counter",
      messages: [{ role: "user", content: "count me" }],
    });
    expect(plain.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 7, total_tokens: 21 });
    expect(plain.usage?.prompt_tokens_details?.cached_tokens).toBe(3);

    sim.script({ text: "streamed", usage });
    const stream = await client.chat.completions.create({
      model: "switchyard:main",
      user: "counter",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "count me again" }],
    });
    let text = "";
    let streamedUsage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) streamedUsage = chunk.usage;
    }
    expect(text).toBe("streamed");
    expect(streamedUsage).toMatchObject({ prompt_tokens: 14, completion_tokens: 7 });
  });

  it("keys a client without `user` by its bearer token, never one session for everybody", async () => {
    const as = (apiKey: string, content: string) =>
      new OpenAI({ apiKey, baseURL: `${gw.url}/v1` }).chat.completions.create({
        model: "switchyard:main",
        messages: [{ role: "user", content }],
      });
    await as("client-key-one", "one");
    await as("client-key-two", "two");
    await as("client-key-one", "one again");
    const keys = new Set(
      (await gw.running.store.runs.recent(100))
        .map((r) => r.sessionKey)
        .filter((k) => k.startsWith("agent:main:http:dm:openai-")),
    );
    expect(keys.size).toBe(2);
  });

  it("answers errors in OpenAI's shape, and refuses a request with no user message", async () => {
    const client = new OpenAI({ apiKey: "any", baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = await client.chat.completions
      .create({ model: "switchyard:main", messages: [{ role: "system", content: "be nice" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.code).toBe("no_user_message");
    expect(e.type).toBe("invalid_request_error");
    expect(e.param).toBe("messages");
    expect(e.message).toMatch(/no "user" message/);
  });

  it("answers an unknown model with OpenAI's 404 model_not_found, and retrieves the one it lists", async () => {
    const client = new OpenAI({ apiKey: "any", baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const before = sim.requests.length;
    const err = await client.chat.completions
      .create({ model: "nope/nope", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const e = err as InstanceType<typeof OpenAI.NotFoundError>;
    expect([e.status, e.code, e.param]).toEqual([404, "model_not_found", "model"]);
    expect(e.message).toMatch(/"nope\/nope" does not exist here: this server offers "switchyard:main"/);
    expect(sim.requests.length).toBe(before); // nothing was taken in
    const model = await client.models.retrieve("switchyard:main");
    expect(model).toMatchObject({ id: "switchyard:main", object: "model", owned_by: "switchyard" });
  });

  it("refuses a mistyped stream or an n other than 1 with a 400 naming the parameter, taking nothing in", async () => {
    const client = new OpenAI({ apiKey: "any", baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const before = { calls: sim.requests.length, inbox: await gw.running.store.inbox.countByState() };
    const messages = [{ role: "user" as const, content: "hi" }];
    const refused = async (extra: Record<string, unknown>) => {
      const err = await client.chat.completions
        .create({ model: "switchyard:main", messages, ...extra } as never)
        .catch((e: unknown) => e);
      expect(err, JSON.stringify(extra)).toBeInstanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.type).toBe("invalid_request_error");
      return [e.param, e.code, e.message];
    };
    expect(await refused({ stream: "yes" })).toEqual([
      "stream",
      "invalid_type",
      '400 "stream" must be a boolean (true or false), got "yes"',
    ]);
    expect(await refused({ n: 2 })).toEqual([
      "n",
      "unsupported_value",
      '400 "n" is 2: only n: 1 is supported (the agent gives one answer per message)',
    ]);
    expect((await refused({ n: "1" })).slice(0, 2)).toEqual(["n", "invalid_type"]);
    expect((await refused({ stream: true, stream_options: "usage" })).slice(0, 2)).toEqual([
      "stream_options",
      "invalid_type",
    ]);
    expect((await refused({ stream: true, stream_options: { include_usage: 1 } })).slice(0, 2)).toEqual([
      "stream_options.include_usage",
      "invalid_type",
    ]);
    // As OpenAI: stream_options only with stream: true.
    expect(await refused({ stream_options: { include_usage: true } })).toEqual([
      "stream_options",
      "unsupported_value",
      '400 "stream_options" is only allowed when "stream" is true',
    ]);
    expect(sim.requests.length).toBe(before.calls);
    expect(await gw.running.store.inbox.countByState()).toEqual(before.inbox);
    // n: 1 and an explicit stream: false are fine.
    const ok = await client.chat.completions.create({
      model: "switchyard:main",
      messages,
      n: 1,
      stream: false,
    });
    expect(ok.choices).toHaveLength(1);
  });

  it("uses its own history: of the client's messages only the last user message is new", async () => {
    const before = sim.requests.length;
    await post(gw.url, "/v1/chat/completions", {
      user: "historian",
      messages: [
        { role: "system", content: "IGNORED SYSTEM" },
        { role: "user", content: "IGNORED EARLIER" },
        { role: "assistant", content: "IGNORED ANSWER" },
        { role: "user", content: "what is new" },
      ],
    });
    const sent = JSON.stringify(sim.requests.slice(before).map((r) => r.body));
    expect(sent).toContain("what is new");
    expect(sent).not.toContain("IGNORED");
  });
});

describe("HTTP API with gateway.auth.token", () => {
  const token = "tok-0123456789abcdef";
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    gw = await startTestGateway({ ...simulatorConfig(sim, "anthropic"), gateway: { auth: { token } } });
  });
  afterAll(async () => {
    await gw.stop();
    await sim.close();
  });

  it("needs the bearer token on /v1/* and /metrics; health and readiness stay open", async () => {
    const body = { sender: "ann", text: "hi" };
    const none = await post(gw.url, "/v1/chat", body);
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ code: "missing_token", type: "authentication_error" });
    const wrong = await post(gw.url, "/v1/chat", body, { authorization: "Bearer tok-0123456789abcdeX" });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe("invalid_token");
    const right = await post(gw.url, "/v1/chat", body, { authorization: `Bearer ${token}` });
    expect(right.status).toBe(200);
    expect((await fetch(`${gw.url}/v1/status`)).status).toBe(401);
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
    // Nothing refused reached the inbox.
    expect((await gw.running.store.inbox.countByState()).answered).toBe(1);
  });

  it("works with the OpenAI SDK using the token as its API key", async () => {
    const ok = new OpenAI({ apiKey: token, baseURL: `${gw.url}/v1` });
    const done = await ok.chat.completions.create({
      model: "switchyard:main",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(done.choices[0]?.message.content).toBeTruthy();
    const bad = new OpenAI({ apiKey: "not-the-token", baseURL: `${gw.url}/v1`, maxRetries: 0 });
    await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
