/**
 * The Chat view's conversation against a fake gateway: the answer streams in from the POST; a
 * mailbox reply to the page's own message is not shown twice; a background reply is shown with
 * its origin; a 401 reaches the login handler.
 */
import { describe, expect, it } from "vitest";
import { AdminApi, type FetchLike, type ResponseLike } from "../../ui/src/lib/api.js";
import { type ChatMessage, ConsoleChat } from "../../ui/src/lib/console-chat.js";

/** A response whose body is the given SSE text, or a stream the test writes to. */
function sse(
  status: number,
  body: ReadableStream<Uint8Array> | string,
  type = "text/event-stream",
): ResponseLike {
  const stream =
    typeof body === "string"
      ? new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(new TextEncoder().encode(body));
            c.close();
          },
        })
      : body;
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: { get: (n: string) => (n === "content-type" ? type : null) },
    text: async () => (typeof body === "string" ? body : ""),
    body: stream,
  };
}

/** A mailbox stream the test feeds frame by frame. */
function mailbox() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  return { stream, write: (text: string) => controller.enqueue(new TextEncoder().encode(text)) };
}

/** Lets queued stream reads and promise callbacks run (no timer: one turn of the event loop). */
const tick = () => new Promise((r) => setImmediate(r));

describe("ConsoleChat", () => {
  it("streams the answer from the POST and drops the same reply arriving in the mailbox", async () => {
    const box = mailbox();
    const sent: Array<{ url: string; headers: Record<string, string>; body?: string }> = [];
    const fetch: FetchLike = async (url, init) => {
      sent.push({ url, headers: init.headers, ...(init.body ? { body: init.body } : {}) });
      if (url.startsWith("/v1/console/events")) return sse(200, box.stream);
      // The mailbox gets the reply while the POST is still open: it is held, then dropped.
      box.write(
        `id: 6\nevent: reply\ndata: ${JSON.stringify({ text: "Hello there", origin: "user", replyTo: "m-1" })}\n\n`,
      );
      await tick();
      return sse(
        200,
        'event: delta\ndata: {"text":"Hello"}\n\nevent: delta\ndata: {"text":" there"}\n\nevent: done\ndata: {"replies":[{"text":"Hello there"}]}\n\n',
      );
    };
    const api = new AdminApi({ fetch, token: () => "tok", onUnauthorized: () => {} });
    let seen: readonly ChatMessage[] = [];
    const chat = new ConsoleChat({ api, sender: "ui", onChange: (m) => (seen = m), newId: () => "m-1" });
    box.write("id: 5\nevent: ready\ndata: {}\n\n");
    await tick();
    await chat.send("hi");
    box.write(`id: 7\nevent: reply\ndata: ${JSON.stringify({ text: "cron says hi", origin: "cron" })}\n\n`);
    await tick();
    chat.close();
    expect(seen.map((m) => [m.role, m.text, m.origin])).toEqual([
      ["you", "hi", undefined],
      ["agent", "Hello there", undefined],
      ["agent", "cron says hi", "cron"],
    ]);
    const post = sent.find((s) => s.url === "/v1/console");
    expect(post?.headers.authorization).toBe("Bearer tok");
    expect(post?.headers.accept).toBe("text/event-stream");
    expect(JSON.parse(post?.body ?? "{}")).toEqual({ sender: "ui", text: "hi", id: "m-1" });
    expect(sent[0]?.url).toBe("/v1/console/events?sender=ui");
  });

  it("shows a held mailbox reply when the POST could not show the answer (202)", async () => {
    const box = mailbox();
    const fetch: FetchLike = async (url) => {
      if (url.startsWith("/v1/console/events")) return sse(200, box.stream);
      box.write(
        `id: 2\nevent: reply\ndata: ${JSON.stringify({ text: "late answer", origin: "user", replyTo: "m-1" })}\n\n`,
      );
      await tick();
      return sse(202, '{"accepted":true}', "application/json");
    };
    const api = new AdminApi({ fetch, token: () => undefined, onUnauthorized: () => {} });
    let seen: readonly ChatMessage[] = [];
    const chat = new ConsoleChat({ api, sender: "ui", onChange: (m) => (seen = m), newId: () => "m-1" });
    box.write("id: 1\nevent: ready\ndata: {}\n\n");
    await tick();
    await chat.send("slow one");
    chat.close();
    expect(seen.map((m) => m.text)).toEqual([
      "slow one",
      "(still working; the answer will appear here when it is ready)",
      "late answer",
    ]);
  });

  it("reports a 401 to the login handler", async () => {
    let refused = 0;
    const fetch: FetchLike = async () => sse(401, '{"error":{"message":"bad token"}}', "application/json");
    const api = new AdminApi({ fetch, token: () => "wrong", onUnauthorized: () => refused++ });
    await expect(api.get("/v1/admin/overview")).rejects.toMatchObject({ status: 401 });
    expect(refused).toBe(1);
  });
});
