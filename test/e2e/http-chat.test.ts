/**
 * End to end over the HTTP channel: real gateway, real provider SDKs, model simulator.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

for (const protocol of ["openai", "anthropic"] as const) {
  describe(`HTTP chat over the ${protocol} protocol`, () => {
    let sim: ModelSimulator;
    let gw: TestGateway;
    beforeAll(async () => {
      sim = new ModelSimulator();
      await sim.start();
      gw = await startTestGateway(simulatorConfig(sim, protocol));
    });
    afterAll(async () => {
      await gw.stop();
      await sim.close();
    });
    afterEach(() => sim.clearScript());

    it("answers 3 senders × 5 messages, each once, in per-sender order", async () => {
      const senders = ["ann", "bob", "cy"];
      const before = sim.requests.length;
      // Senders run in parallel; each sends its next message once the previous one is answered,
      // so "message n" is the n-th thing that sender said (HTTP arrival order of concurrent
      // POSTs is not defined, so a burst would have no order to check).
      const results = await Promise.all(
        senders.map(async (sender) => {
          const out: string[] = [];
          const sessionKeys = new Set<string | undefined>();
          for (const n of [1, 2, 3, 4, 5]) {
            const r = await gw.chat(sender, `${sender} message ${n}`, `${sender}-${n}`);
            expect(r.status).toBe(200);
            expect(r.body.state).toBe("answered");
            expect(r.body.replies).toHaveLength(1);
            out.push(r.body.replies?.[0]?.text ?? "");
            sessionKeys.add(r.body.sessionKey);
          }
          return { sender, out, sessionKeys };
        }),
      );
      for (const { sender, out, sessionKeys } of results) {
        expect([...sessionKeys]).toEqual([`agent:main:http:dm:${sender}`]);
        // Each reply answers its own message.
        for (const [i, text] of out.entries()) expect(text).toContain(`"${sender} message ${i + 1}"`);
      }
      const store = gw.running.store;
      expect((await store.inbox.countByState()).answered).toBe(15);
      expect((await store.outbox.countByState()).sent).toBe(15);
      expect((await store.runs.countByOutcome()).answered).toBe(15);
      // At the model: one request per message (each answered once), and each session's history
      // holds only its own sender's messages, in the order they were sent.
      const bodies = sim.requests.slice(before).map((r) => JSON.stringify(r.body));
      expect(bodies).toHaveLength(15);
      for (const sender of senders) {
        const mine = bodies.filter((b) => b.includes(`${sender} message`));
        expect(mine).toHaveLength(5);
        for (const [i, body] of mine.entries()) {
          const said = [...body.matchAll(new RegExp(`(${senders.join("|")}) message (\\d)`, "g"))].map(
            (m) => `${m[1]} ${m[2]}`,
          );
          // Every message so far appears (user text, then echoed in the reply), in order.
          const firstSeen = [...new Set(said)];
          expect(firstSeen).toEqual(Array.from({ length: i + 1 }, (_, k) => `${sender} ${k + 1}`));
        }
      }
    });

    it("runs a tool and answers with its result, appending every step to the transcript", async () => {
      sim.script(
        { toolCalls: [{ name: "write_file", args: { path: "notes/todo.md", content: "buy milk" } }] },
        { text: "Saved your todo." },
      );
      const r = await gw.chat("dora", "remember to buy milk");
      expect(r.body.replies?.[0]?.text).toBe("Saved your todo.");
      expect(readFileSync(join(gw.running.workspaceDir, "notes/todo.md"), "utf8")).toBe("buy milk");
      const session = await gw.running.store.sessions.get("agent:main:http:dm:dora");
      const events = await gw.running.store.transcript.tail(
        "agent:main:http:dm:dora",
        session?.sessionId ?? "",
        50,
      );
      expect(events.map((e) => e.payload.type)).toEqual(["user", "assistant", "tool_result", "assistant"]);
    });

    it("tells the user in one line when the provider fails, and records the run", async () => {
      sim.script({ error: { status: 401 } });
      const r = await gw.chat("eve", "hello?");
      expect(r.body.state).toBe("failed");
      expect(r.body.replies?.[0]?.text).toMatch(/^⚠️ Sorry, I couldn't answer: .*rejected the API key/);
      const runs = await gw.running.store.runs.recent(1);
      expect(runs[0]?.errorKind).toBe("auth");
    });

    it("ignores a redelivered message id", async () => {
      const first = await gw.chat("fred", "once only", "fred-dup-1");
      const before = sim.requests.length;
      const again = await gw.chat("fred", "once only", "fred-dup-1");
      expect(again.body.replies).toEqual(first.body.replies);
      expect(sim.requests.length).toBe(before);
    });
  });
}

describe("HTTP surface", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    gw = await startTestGateway(simulatorConfig(sim, "anthropic"));
  });
  afterAll(async () => {
    await gw.stop();
    await sim.close();
  });

  it("serves health, readiness and Prometheus metrics", async () => {
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${gw.url}/readyz`)).json()).toEqual({ ready: true });
    await gw.chat("mia", "count me");
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    expect(text).toMatch(/switchyard_runs_total\{outcome="answered",trigger="user"\} \d+/);
    expect(text).toContain("switchyard_queue_depth");
    expect(text).toContain("switchyard_lane_wait_seconds_bucket");
    expect(text).toMatch(/switchyard_tokens_total\{.*type="input".*\} \d+/);
  });

  it("streams a reply as server-sent events", async () => {
    sim.script({ text: "one two three four five six seven eight nine ten" });
    const res = await fetch(`${gw.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ sender: "sse", text: "stream please" }),
    });
    const body = await res.text();
    const deltas = [...body.matchAll(/event: delta\ndata: (.*)\n/g)].map(
      (m) => (JSON.parse(m[1] ?? "{}") as { text: string }).text,
    );
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("one two three four five six seven eight nine ten");
    expect(body).toMatch(/event: done\ndata: .*"state":"answered"/);
  });

  it("speaks the OpenAI chat-completions protocol to the official SDK", async () => {
    const client = new OpenAI({ apiKey: "unused", baseURL: `${gw.url}/v1`, maxRetries: 0 });
    sim.script({ text: "Hello from the agent." });
    const completion = await client.chat.completions.create({
      model: "switchyard:main",
      user: "sdk-user",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(completion.choices[0]?.message.content).toBe("Hello from the agent.");
    sim.script({ text: "Streamed hello from the agent." });
    const stream = await client.chat.completions.create({
      model: "switchyard:main",
      user: "sdk-user",
      stream: true,
      messages: [{ role: "user", content: "stream it" }],
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Streamed hello from the agent.");
  });

  it("streams two concurrent completions of one sender each to its own reply, not both", async () => {
    const client = new OpenAI({ apiKey: "unused", baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const ask = async (content: string) => {
      const stream = await client.chat.completions.create({
        model: "switchyard:main",
        user: "twin",
        stream: true,
        messages: [{ role: "user", content }],
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      return text;
    };
    // Unscripted, the simulator echoes what it was told, so each reply names its own question.
    const [first, second] = await Promise.all([ask("first twin question"), ask("second twin question")]);
    expect(first.match(/Simulated reply/g)).toHaveLength(1);
    expect(first).toContain('you said "first twin question"');
    expect(second.match(/Simulated reply/g)).toHaveLength(1);
    expect(second).toContain('you said "second twin question"');
  });

  it("streams two concurrent SSE chats of one sender without mixing their deltas", async () => {
    const chat = async (text: string) => {
      const res = await fetch(`${gw.url}/v1/chat`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ sender: "sse-twin", text }),
      });
      const body = await res.text();
      const deltas = [...body.matchAll(/event: delta\ndata: (.*)\n/g)]
        .map((m) => (JSON.parse(m[1] ?? "{}") as { text: string }).text)
        .join("");
      const done = JSON.parse(/event: done\ndata: (.*)\n/.exec(body)?.[1] ?? "{}") as {
        replies?: Array<{ text: string }>;
      };
      return { deltas, reply: done.replies?.[0]?.text ?? "" };
    };
    const results = await Promise.all([chat("left question"), chat("right question")]);
    for (const [i, own] of ["left question", "right question"].entries()) {
      const r = results[i];
      expect(r?.reply).toContain(`you said "${own}"`);
      // Live text is best effort, but whatever arrived belongs to this request's reply.
      expect(r?.reply.startsWith(r?.deltas ?? "")).toBe(true);
    }
  });

  it("answers chat commands without a model call", async () => {
    const before = sim.requests.length;
    const help = await gw.chat("cmd", "/help");
    expect(help.body.replies?.[0]?.text).toContain("/stop");
    const status = await gw.chat("cmd", "/status");
    expect(status.body.replies?.[0]?.text).toContain("Session: agent:main:http:dm:cmd");
    const fresh = await gw.chat("cmd", "/new");
    expect(fresh.body.replies?.[0]?.text).toMatch(/new session/i);
    expect(sim.requests.length).toBe(before);
  });

  it("/stop ends a running turn through its AbortSignal", async () => {
    sim.script({ hang: true });
    const pending = gw.chat("stopper", "think forever");
    await sim.waitForRequests(sim.requests.length + 1, 5_000);
    const stop = await gw.chat("stopper", "/stop");
    expect(stop.body.replies?.[0]?.text).toBe("Stopping the current turn.");
    const r = await pending;
    expect(r.body.state).toBe("failed");
    expect(r.body.replies?.[0]?.text).toBe("⏹ Stopped.");
  });

  it("answers a redelivered command id at once, without running it again", async () => {
    const first = await gw.chat("cmd2", "/help", "cmd-id-1");
    expect(first.body.replies?.[0]?.text).toContain("/stop");
    const again = await gw.chat("cmd2", "/help", "cmd-id-1");
    expect(again.status).toBe(200);
    expect(again.body.state).toBe("rejected");
  });

  it("rejects bad requests with a clear error", async () => {
    const post = (body: string) =>
      fetch(`${gw.url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const bad = await post("{nope");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: {
        code: "invalid_json",
        message: "request body is not valid JSON",
        type: "invalid_request_error",
        param: null,
      },
    });
    expect((await post(JSON.stringify({ text: "hi" }))).status).toBe(400);
    expect((await post(JSON.stringify({ sender: "x", text: "" }))).status).toBe(400);
    const big = await post(JSON.stringify({ sender: "x", text: "a".repeat(40_000) }));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { message: string } }).error.message).toMatch(
      /40000 characters; the limit is 32000/,
    );
    expect((await fetch(`${gw.url}/v1/nothing`)).status).toBe(404);
  });

  it("answers a wrong method with 405 and an Allow header naming the route's methods", async () => {
    const cases: Array<[string, string, string]> = [
      ["GET", "/v1/chat", "POST"],
      ["DELETE", "/v1/chat/completions", "POST"],
      ["POST", "/v1/models", "GET"],
      ["PUT", "/v1/models/switchyard:main", "GET"],
      ["POST", "/metrics", "GET"],
      ["POST", "/healthz", "GET"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await fetch(`${gw.url}${path}`, { method });
      expect([method, path, res.status, res.headers.get("allow")]).toEqual([method, path, 405, allow]);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("method_not_allowed");
      expect(body.error.message).toBe(`method ${method} not allowed on ${path} (use ${allow})`);
    }
    expect((await fetch(`${gw.url}/v1/nothing`)).headers.get("allow")).toBeNull();
  });
});
