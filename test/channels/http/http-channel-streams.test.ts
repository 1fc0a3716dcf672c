/**
 * Live text over the HTTP channel: deltas reach the request waiting on the message the turn
 * answers (by inbox id), never another request of the same sender. The turn is played by the
 * test through `streamDelta`; answers come from an in-test AnswerSource the test resolves.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HttpChannel } from "../../../src/channels/http/http-channel.js";
import { RETOLD_NOTICE } from "../../../src/channels/http/live-text.js";
import type {
  AcceptResult,
  AnswerSource,
  ChatTarget,
  InboundMessage,
  InboundSink,
  MailboxEntry,
} from "../../../src/channels/types.js";
import { gatewayErrorStatus } from "../../../src/gateway/error-status.js";
import { GatewayHttpServer } from "../../../src/http/server.js";
import { silentLogger } from "../../../src/util/logger.js";

type Answer = Awaited<ReturnType<AnswerSource["waitForAnswer"]>>;

/** Commits messages with inbox ids 1, 2, …; answers when the test says so. */
class ScriptedGateway implements InboundSink, AnswerSource {
  readonly accepted: Array<{ inboxId: number; message: InboundMessage }> = [];
  readonly #answers = new Map<number, (answer: Answer) => void>();
  readonly #listeners = new Set<() => void>();

  async accept(message: InboundMessage): Promise<AcceptResult> {
    const inboxId = this.accepted.length + 1;
    this.accepted.push({ inboxId, message });
    return { status: "accepted", inboxId, sessionKey: `agent:main:http:dm:${message.senderId}` };
  }

  /** Called by the channel once the request is filed under `inboxId`. */
  waitForAnswer(inboxId: number): Promise<Answer> {
    const answer = new Promise<Answer>((resolve) => this.#answers.set(inboxId, resolve));
    for (const listener of [...this.#listeners]) listener();
    return answer;
  }

  async listReplies(): Promise<MailboxEntry[]> {
    return [];
  }

  async mailboxEnd(): Promise<number> {
    return 0;
  }

  /** Resolves with the inbox id once a request waits for the answer to the message with this text. */
  waiting(text: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const entry = this.accepted.find((a) => a.message.text === text);
        if (!entry || !this.#answers.has(entry.inboxId)) return;
        this.#listeners.delete(check);
        clearTimeout(timer);
        resolve(entry.inboxId);
      };
      const timer = setTimeout(() => {
        this.#listeners.delete(check);
        reject(new Error(`no request waits for ${JSON.stringify(text)} after 5 s`));
      }, 5_000);
      this.#listeners.add(check);
      check();
    });
  }

  answer(inboxId: number, state: Answer["state"], replies: string[]): void {
    this.#answers.get(inboxId)?.({ inboxId, state, replies });
  }
}

let server: GatewayHttpServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup() {
  server = new GatewayHttpServer({
    host: "127.0.0.1",
    port: 0,
    logger: silentLogger(),
    errorStatus: gatewayErrorStatus,
  });
  const gateway = new ScriptedGateway();
  const channel = new HttpChannel({
    name: "http",
    server,
    answers: gateway,
    basePath: "/v1/chat",
    openaiCompatible: true,
  });
  await server.listen();
  await channel.start(gateway);
  const url = server.url;
  const target = (sender: string, inboxIds: number[]): ChatTarget & { inboxIds: number[] } => ({
    channel: "http",
    accountId: "default",
    chatId: sender,
    inboxIds,
  });
  /** POST /v1/chat as SSE; resolves with the deltas and the `done` payload once it ends. */
  const chatStream = async (sender: string, text: string) => {
    const res = await fetch(`${url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ sender, text }),
    });
    const body = await res.text();
    const deltas = [...body.matchAll(/event: delta\ndata: (.*)\n/g)].map(
      (m) => (JSON.parse(m[1] ?? "{}") as { text: string }).text,
    );
    const done = /event: done\ndata: (.*)\n/.exec(body)?.[1];
    return { deltas, done: JSON.parse(done ?? "null") as { replies: Array<{ text: string }> } | null };
  };
  /** POST /v1/chat/completions with stream: true; resolves with the content chunks in order. */
  const completionStream = async (user: string, content: string) => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "switchyard",
        user,
        stream: true,
        messages: [{ role: "user", content }],
      }),
    });
    const body = await res.text();
    expect(body.endsWith("data: [DONE]\n\n")).toBe(true);
    return [...body.matchAll(/^data: (\{.*\})$/gm)]
      .map((m) => JSON.parse(m[1] ?? "{}") as { choices: Array<{ delta: { content?: string } }> })
      .map((c) => c.choices[0]?.delta.content ?? "")
      .filter((c) => c !== "");
  };
  return { channel, gateway, target, chatStream, completionStream };
}

describe("HTTP channel live text", () => {
  it("two concurrent SSE requests of one sender each get only their own turn's deltas", async () => {
    const { channel, gateway, target, chatStream } = await setup();
    const first = chatStream("ann", "first question");
    const second = chatStream("ann", "second question");
    const id1 = await gateway.waiting("first question");
    const id2 = await gateway.waiting("second question");
    // The turns run one after the other (one session lane); the first streams while the second waits.
    channel.streamDelta(target("ann", [id1]), "first ");
    channel.streamDelta(target("ann", [id1]), "answer");
    gateway.answer(id1, "answered", ["first answer"]);
    channel.streamDelta(target("ann", [id2]), "second ");
    channel.streamDelta(target("ann", [id2]), "answer");
    gateway.answer(id2, "answered", ["second answer"]);
    const [a, b] = await Promise.all([first, second]);
    expect(a.deltas).toEqual(["first ", "answer"]);
    expect(a.done?.replies).toEqual([{ text: "first answer" }]);
    expect(b.deltas).toEqual(["second ", "answer"]);
    expect(b.done?.replies).toEqual([{ text: "second answer" }]);
  });

  it("two concurrent streaming chat completions of one user return their own replies, not both", async () => {
    const { channel, gateway, target, completionStream } = await setup();
    const first = completionStream("bob", "question one");
    const second = completionStream("bob", "question two");
    const id1 = await gateway.waiting("question one");
    const id2 = await gateway.waiting("question two");
    channel.streamDelta(target("bob", [id1]), "Reply ");
    channel.streamDelta(target("bob", [id1]), "one.");
    gateway.answer(id1, "answered", ["Reply one."]);
    // The second turn streams only part of its text live; the rest arrives with the answer.
    channel.streamDelta(target("bob", [id2]), "Reply ");
    gateway.answer(id2, "answered", ["Reply two."]);
    const [a, b] = await Promise.all([first, second]);
    expect(a.join("")).toBe("Reply one.");
    expect(b.join("")).toBe("Reply two.");
    expect(b).toEqual(["Reply ", "two."]);
  });

  it("a collected turn streams to every request whose message it answers", async () => {
    const { channel, gateway, target, chatStream } = await setup();
    const first = chatStream("cy", "part one");
    const second = chatStream("cy", "part two");
    const ids = [await gateway.waiting("part one"), await gateway.waiting("part two")];
    channel.streamDelta(target("cy", ids), "both parts");
    for (const id of ids) gateway.answer(id, "answered", ["both parts"]);
    const [a, b] = await Promise.all([first, second]);
    expect(a.deltas).toEqual(["both parts"]);
    expect(b.deltas).toEqual(["both parts"]);
  });

  it("a failed turn's notice is written after whatever was streamed", async () => {
    const { channel, gateway, target, completionStream } = await setup();
    const pending = completionStream("eve", "will fail");
    const id = await gateway.waiting("will fail");
    channel.streamDelta(target("eve", [id]), "Partial ");
    gateway.answer(id, "failed", ["⚠️ Sorry, I couldn't answer."]);
    expect(await pending).toEqual(["Partial ", "⚠️ Sorry, I couldn't answer."]);
  });
});

describe("HTTP channel live text after a model call failed part-way (streamReset)", () => {
  it("completions: a retry that repeats the discarded text reaches the client once", async () => {
    const { channel, gateway, target, completionStream } = await setup();
    const pending = completionStream("fay", "retried");
    const id = await gateway.waiting("retried");
    const to = target("fay", [id]);
    channel.streamDelta(to, "Hel");
    channel.streamDelta(to, "lo wor");
    channel.streamReset(to, 9); // the call died; the next attempt streams from the start
    channel.streamDelta(to, "Hello");
    channel.streamDelta(to, " world");
    gateway.answer(id, "answered", ["Hello world"]);
    const chunks = await pending;
    expect(chunks).toEqual(["Hel", "lo wor", "ld"]);
    expect(chunks.join("")).toBe("Hello world");
  });

  it("completions: a retry that says something else stops the live text and ends with a notice and the full answer", async () => {
    const { channel, gateway, target, completionStream } = await setup();
    const pending = completionStream("gus", "diverges");
    const id = await gateway.waiting("diverges");
    const to = target("gus", [id]);
    channel.streamDelta(to, "Hel");
    channel.streamDelta(to, "lo wor");
    channel.streamReset(to, 9);
    channel.streamDelta(to, "Hello");
    channel.streamDelta(to, " there"); // differs from the discarded "Hello wor"
    channel.streamDelta(to, ", friend.");
    gateway.answer(id, "answered", ["Hello there, friend."]);
    const chunks = await pending;
    expect(chunks).toEqual(["Hel", "lo wor", `${RETOLD_NOTICE}Hello there, friend.`]);
    expect(chunks.join("").split("Hello there, friend.")).toHaveLength(2); // the answer once
  });

  it("completions: text streamed before tool calls stays; only the failed call's text is discarded", async () => {
    const { channel, gateway, target, completionStream } = await setup();
    const pending = completionStream("hal", "uses a tool");
    const id = await gateway.waiting("uses a tool");
    const to = target("hal", [id]);
    channel.streamDelta(to, "Let me look. "); // the first model call, then a tool call
    channel.streamDelta(to, "The ans"); // the second model call, which dies
    channel.streamReset(to, 7);
    channel.streamDelta(to, "The answer is 42.");
    gateway.answer(id, "answered", ["The answer is 42."]);
    const chunks = await pending;
    expect(chunks).toEqual(["Let me look. ", "The ans", "wer is 42."]);
  });

  it("completions: discarded text the answer never repeats is followed by the full answer", async () => {
    const { channel, gateway, target, completionStream } = await setup();
    const pending = completionStream("ida", "shorter");
    const id = await gateway.waiting("shorter");
    const to = target("ida", [id]);
    channel.streamDelta(to, "Hello wor");
    channel.streamReset(to, 9);
    channel.streamDelta(to, "Hello"); // a prefix of what was discarded, and the whole answer
    gateway.answer(id, "answered", ["Hello"]);
    expect(await pending).toEqual(["Hello wor", `${RETOLD_NOTICE}Hello`]);
  });

  it("/v1/chat: a repeating retry streams only the new text; a diverging one ends with a notice and the answer", async () => {
    const { channel, gateway, target, chatStream } = await setup();
    const same = chatStream("jo", "same");
    const other = chatStream("jo", "other");
    const aId = await gateway.waiting("same");
    const a = target("jo", [aId]);
    const bId = await gateway.waiting("other");
    const b = target("jo", [bId]);
    for (const to of [a, b]) {
      channel.streamDelta(to, "Hel");
      channel.streamDelta(to, "lo wor");
      channel.streamReset(to, 9);
    }
    channel.streamDelta(a, "Hello world");
    gateway.answer(aId, "answered", ["Hello world"]);
    channel.streamDelta(b, "Goodbye");
    gateway.answer(bId, "answered", ["Goodbye world"]);
    const [first, second] = await Promise.all([same, other]);
    expect(first.deltas).toEqual(["Hel", "lo wor", "ld"]);
    expect(first.done?.replies).toEqual([{ text: "Hello world" }]);
    expect(second.deltas).toEqual(["Hel", "lo wor", `${RETOLD_NOTICE}Goodbye world`]);
    expect(second.done?.replies).toEqual([{ text: "Goodbye world" }]);
  });

  it("a failed turn after a reset ends with its notice, as without one", async () => {
    const { channel, gateway, target, completionStream } = await setup();
    const pending = completionStream("kit", "fails twice");
    const id = await gateway.waiting("fails twice");
    const to = target("kit", [id]);
    channel.streamDelta(to, "Partial ");
    channel.streamReset(to, 8);
    gateway.answer(id, "failed", ["⚠️ Sorry, I couldn't answer."]);
    expect(await pending).toEqual(["Partial ", "⚠️ Sorry, I couldn't answer."]);
  });
});
