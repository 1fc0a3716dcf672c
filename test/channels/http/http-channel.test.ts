/**
 * The HTTP channel's own promises beyond the channel contract: a message the gateway could not
 * commit is answered 503 (send it again), and a resent chunk gets the same receipt.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HttpChannel } from "../../../src/channels/http/http-channel.js";
import type { AnswerSource, InboundSink } from "../../../src/channels/types.js";
import { SinkUnavailableError } from "../../../src/channels/errors.js";
import { gatewayErrorStatus } from "../../../src/gateway/error-status.js";
import { GatewayHttpServer } from "../../../src/http/server.js";
import { silentLogger } from "../../../src/util/logger.js";

const noAnswers: AnswerSource = {
  waitForAnswer: async (inboxId) => ({ inboxId, state: "answered", replies: [] }),
  listReplies: async () => [],
  mailboxEnd: async () => 0,
};

let server: GatewayHttpServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(sink: InboundSink, answers: AnswerSource = noAnswers, keepAliveMs?: number) {
  server = new GatewayHttpServer({
    host: "127.0.0.1",
    port: 0,
    logger: silentLogger(),
    errorStatus: gatewayErrorStatus,
  });
  const channel = new HttpChannel({
    name: "http",
    server,
    answers,
    basePath: "/v1/chat",
    openaiCompatible: true,
    ...(keepAliveMs ? { keepAliveMs } : {}),
  });
  await server.listen();
  await channel.start(sink);
  return { channel, url: server.url };
}

describe("HTTP channel", () => {
  it("answers 503 with Retry-After when the gateway could not commit the message", async () => {
    const { url } = await setup({
      accept: async () => {
        throw new SinkUnavailableError("the gateway is shutting down; the message was not accepted", 5_000);
      },
    });
    const res = await fetch(`${url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sender: "ann", text: "hello", id: "m-1" }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await res.json()).toEqual({
      error: {
        code: "unavailable",
        message: "the gateway is shutting down; the message was not accepted",
        type: "service_unavailable",
        param: null,
      },
    });
  });

  it("answers 500 for a failure that is not a refusal (a bug), without claiming it is retryable", async () => {
    const { url } = await setup({
      accept: async () => {
        throw new TypeError("something broke");
      },
    });
    const res = await fetch(`${url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sender: "ann", text: "hello", id: "m-2" }),
    });
    expect(res.status).toBe(500);
    expect(res.headers.get("retry-after")).toBeNull();
    expect((await res.json()) as unknown).toMatchObject({ error: { code: "internal" } });
  });

  for (const path of ["/v1/chat", "/v1/chat/completions"]) {
    it(`keeps a slow streamed answer alive with SSE comments (${path})`, async () => {
      let release: (() => void) | undefined;
      const held: AnswerSource = {
        // The answer comes only when the test has seen a keep-alive comment.
        waitForAnswer: (inboxId) =>
          new Promise((resolve) => {
            release = () => resolve({ inboxId, state: "answered", replies: ["slow answer"] });
          }),
        listReplies: async () => [],
        mailboxEnd: async () => 0,
      };
      const { url } = await setup(
        { accept: async () => ({ status: "accepted", inboxId: 1, sessionKey: "s" }) },
        held,
        5,
      );
      const body =
        path === "/v1/chat"
          ? { sender: "ann", text: "hello" }
          : { stream: true, user: "ann", messages: [{ role: "user", content: "hello" }] };
      const res = await fetch(`${url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(body),
      });
      expect(res.headers.get("content-type")).toBe("text/event-stream");
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = "";
      while (!text.includes(": keep-alive\n\n")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before a keep-alive comment: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
      release?.();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(text).toContain("slow answer");
    });
  }

  it("gives the same receipt for a resend of the same chunk", async () => {
    const { channel } = await setup({
      accept: async () => ({ status: "accepted", inboxId: 1, sessionKey: "s" }),
    });
    const message = {
      channel: "http" as const,
      accountId: "default",
      chatId: "fay",
      text: "hello",
      idempotencyKey: "outbox-7",
    };
    const a = await channel.send(message);
    expect(a.platformMessageId).toBe("http-outbox-7");
    expect(await channel.send(message)).toEqual(a);
  });
});
