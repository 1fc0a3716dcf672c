/**
 * `switchyard chat` follows the sender's mailbox (`GET /v1/console/events`) against a fake
 * gateway that keeps a mailbox and replays it after `Last-Event-ID`, as the real one does: a
 * background reply prints on its own line with its origin; the reply to the terminal's own
 * message is not printed a second time; replies that arrive while a message is being answered
 * wait until its answer is printed; after the stream is cut the client reconnects, sends the
 * last id it saw and prints what it missed, in order, once; Ctrl-D ends it while it follows.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatBackground } from "../../src/cli/chat.js";
import { until } from "../helpers/until.js";
import { removeTempDirs, startCli } from "./cli-process.js";

interface Entry {
  id: number;
  text: string;
  origin: string;
  replyTo?: string;
}

/** A gateway with one mailbox (ann's) and streams that can be cut. */
class MailboxGateway {
  readonly mailbox: Entry[] = [];
  /** The Last-Event-ID of each events request (null: none). */
  readonly resumedFrom: Array<string | null> = [];
  /** While true, events requests are answered 503 (the gateway is restarting). */
  down = false;
  /** Called with the POST's client id before it is answered. */
  onPost: (id: string) => void = () => {};
  readonly #streams = new Set<ServerResponse>();
  #server: Server | undefined;

  get url(): string {
    if (!this.#server) throw new Error("MailboxGateway: not started");
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  get streams(): number {
    return this.#streams.size;
  }

  async start(): Promise<void> {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((done) => this.#server?.listen(0, "127.0.0.1", done));
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((done) => this.#server?.close(() => done()));
  }

  /** Puts a reply in the mailbox and sends it to the open streams. */
  deliver(text: string, origin: string, replyTo?: string): void {
    const entry: Entry = { id: this.mailbox.length + 100, text, origin, ...(replyTo ? { replyTo } : {}) };
    this.mailbox.push(entry);
    for (const res of this.#streams) res.write(frame(entry));
  }

  /** Cuts every open stream (a restart). */
  cut(): void {
    for (const res of this.#streams) res.destroy();
    this.#streams.clear();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = "";
    for await (const chunk of req as AsyncIterable<Buffer>) body += chunk.toString();
    const url = new URL(req.url ?? "/", "http://x");
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (url.pathname === "/readyz") return json(200, { ready: true });
    if (url.pathname === "/v1/status") return json(200, { model: "openai/gpt-fake" });
    if (url.pathname === "/v1/console/events") {
      if (this.down) return json(503, { error: { message: "restarting" } });
      const last = req.headers["last-event-id"];
      this.resumedFrom.push(typeof last === "string" ? last : null);
      const after = typeof last === "string" ? Number(last) : (this.mailbox.at(-1)?.id ?? 99);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`id: ${after}\nevent: ready\ndata: {"after":${after}}\n\n`);
      for (const entry of this.mailbox) if (entry.id > after) res.write(frame(entry));
      this.#streams.add(res);
      res.once("close", () => this.#streams.delete(res));
      return;
    }
    if (url.pathname === "/v1/console") {
      const { id, text } = JSON.parse(body) as { id: string; text: string };
      this.onPost(id);
      // The answer is in the mailbox too (with the POST's id), as every console reply is.
      this.deliver(`you said ${text}`, "user", id);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`event: done\ndata: ${JSON.stringify({ replies: [{ text: `you said ${text}` }] })}\n\n`);
      return;
    }
    json(404, { error: { message: "no route" } });
  }
}

function frame(entry: Entry): string {
  const { id, ...data } = entry;
  return `id: ${id}\nevent: reply\ndata: ${JSON.stringify(data)}\n\n`;
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe("switchyard chat: background messages", () => {
  const gateway = new MailboxGateway();
  beforeAll(() => gateway.start());
  afterAll(async () => {
    await gateway.close();
    removeTempDirs();
  });

  it("prints what reaches the mailbox, once, also what came while it was cut off", async () => {
    gateway.deliver("from before the chat", "cron");
    const chat = startCli(["chat", "--url", gateway.url, "--sender", "ann"]);
    await until(() => chat.out().includes("Ctrl-D to quit"), "the chat to connect");
    // The stream is open before the greeting: nothing sent from now on can be missed.
    expect(gateway.streams).toBe(1);
    expect(gateway.resumedFrom).toEqual([null]);

    gateway.deliver("time to stretch", "cron");
    await until(() => chat.out().includes("[cron] agent> time to stretch"), "the cron reply");

    // A heartbeat alert that lands while "hi" is answered waits for the answer.
    gateway.onPost = () => gateway.deliver("disk almost full", "heartbeat");
    chat.type("hi\n");
    await until(() => chat.out().includes("[heartbeat] agent> disk almost full"), "the held alert");
    gateway.onPost = () => {};
    const out = chat.out();
    expect(out.indexOf("agent> you said hi")).toBeLessThan(out.indexOf("[heartbeat]"));
    expect(count(out, "you said hi")).toBe(1);

    // The gateway restarts: the stream is cut, and two replies arrive while the chat is away.
    gateway.down = true;
    gateway.cut();
    await until(() => chat.out().includes("(lost the gateway"), "the chat to notice");
    gateway.deliver("while away 1", "cron");
    gateway.deliver("while away 2", "assignment");
    gateway.down = false;
    await until(() => chat.out().includes("[assignment] agent> while away 2"), "what was missed");
    expect(gateway.resumedFrom.at(-1)).toBe(String(gateway.mailbox[3]?.id));
    gateway.deliver("after the restart", "wake");
    await until(() => chat.out().includes("[wake] agent> after the restart"), "a live reply again");

    expect(await chat.end()).toBe(0);
    const all = chat.out();
    const order = [
      "time to stretch",
      "disk almost full",
      "while away 1",
      "while away 2",
      "after the restart",
    ];
    for (const text of order) expect(count(all, text)).toBe(1);
    expect(order.map((t) => all.indexOf(t))).toEqual(order.map((t) => all.indexOf(t)).sort((a, b) => a - b));
    expect(all).not.toContain("from before the chat");
    expect(count(all, "you said hi")).toBe(1);
    expect(all).toContain("(connected again)");
  });

  it("ends on Ctrl-D while the gateway is away", async () => {
    const chat = startCli(["chat", "--url", gateway.url, "--sender", "ann"]);
    await until(() => chat.out().includes("Ctrl-D to quit"), "the chat to connect");
    gateway.down = true;
    gateway.cut();
    await until(() => chat.out().includes("(lost the gateway"), "the chat to notice");
    expect(await chat.end()).toBe(0);
    gateway.down = false;
  });

  it("labels what it prints by origin", () => {
    expect(formatBackground({ origin: "cron", text: "hi" })).toBe("[cron] agent> hi");
    expect(formatBackground({ origin: "user", text: "late" })).toBe("[reply] agent> late");
    expect(formatBackground({ origin: "gateway", text: "job failing" })).toBe("[notice] agent> job failing");
  });
});
