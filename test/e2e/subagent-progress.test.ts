/**
 * Helpers at work, shown in the parent's chat (#26 item 5), end to end: the real gateway and
 * grammY against the fake Bot API (`streaming: edit` and `off`: the helper list shows either
 * way; `subagents.progress: false` hides it), the model simulator behind the real
 * OpenAI SDK answering by who asks. A parent spawns two helpers that each make one tool call;
 * the chat shows one preview listing both with their calls, edited as they end, and that preview
 * is edited into the parent's final answer: one answer, no preview left. Over HTTP the same work
 * reaches the sender's event stream as `subagent` events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator, type ScriptedTurn, type SimulatedRequest } from "../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

const TOKEN = "123456:AAtest-token-for-the-fake-bot-api-000";
const BOT = { token: TOKEN, id: 123456, username: "switchyard_bot", firstName: "Switchyard" };
const ANN = { id: 42, first_name: "Ann" };
const FINAL = "Comparison: acme 10 EUR, bolt 11 EUR.";

type Message = { role: string; content?: unknown };
const messagesOf = (r: SimulatedRequest) => (r.body as { messages: Message[] }).messages;
const isHelper = (r: SimulatedRequest): boolean =>
  String(messagesOf(r)[0]?.content ?? "").startsWith("You are a helper agent");
const lastUser = (r: SimulatedRequest): string =>
  JSON.stringify([...messagesOf(r)].reverse().find((m) => m.role === "user")?.content ?? "");

/** Opens when `open()` is called. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open: () => open() };
}

const VENDORS = ["acme", "bolt"] as const;
let gates = { acme: gate(), bolt: gate() };

/**
 * The parent spawns one helper per vendor and answers at once, then sums up when woken; a
 * helper reads its vendor's notes, then (once its gate opens) answers with a price.
 */
async function responder(r: SimulatedRequest): Promise<ScriptedTurn> {
  const last = messagesOf(r).at(-1);
  if (isHelper(r)) {
    const vendor = VENDORS.find((v) => lastUser(r).includes(`price of ${v}`)) ?? "acme";
    if (last?.role === "user")
      return { toolCalls: [{ name: "read_file", args: { path: `notes/${vendor}.md` } }] };
    await gates[vendor].opened;
    return { text: `${vendor} costs ${VENDORS.indexOf(vendor) + 10} EUR` };
  }
  if (lastUser(r).includes("compare") && last?.role === "user")
    return {
      toolCalls: VENDORS.map((v, i) => ({
        name: "spawn_agent",
        args: { task: `Find the price of ${v}.`, label: `vendors-${i + 1}` },
      })),
    };
  if (last?.role === "tool") return { text: "I've asked 2 helpers." };
  if (lastUser(r).includes("[helper ")) return { text: FINAL };
  return { text: "ok" };
}

describe.each(["edit", "off"] as const)("helpers at work in a Telegram chat (streaming: %s)", (streaming) => {
  let sim: ModelSimulator;
  let tg: FakeTelegramBotApi;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    sim.setDefault(responder);
    gates = { acme: gate(), bolt: gate() };
    tg = new FakeTelegramBotApi();
    await tg.start();
    tg.addBot(BOT);
    gw = await startTestGateway({
      ...simulatorConfig(sim, "openai"),
      channels: { telegram: { token: TOKEN, apiRoot: tg.apiRoot, allowFrom: [ANN.id], streaming } },
    });
  });
  afterAll(async () => {
    gates.acme.open();
    gates.bolt.open();
    await gw?.stop();
    await tg?.close();
    await sim?.close();
  });

  /** Every text the bot showed in the chat: sends and edits, in order. */
  const shown = (): string[] =>
    tg.calls
      .filter((c) => c.method === "sendMessage" || c.method === "editMessageText")
      .map((c) => String(c.params.text));

  /**
   * Whether the chat showed a text of exactly these lines. Helpers are listed in the order their
   * first calls arrived, which two helpers running at once decide between them.
   */
  const showedLines = (...lines: string[]): boolean =>
    shown().some((t) => {
      const got = t.split("\n");
      return got.length === lines.length && lines.every((l) => got.includes(l));
    });

  it("shows one preview listing both helpers' calls, edited as they end, and edits it into the answer", async () => {
    tg.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "compare the vendors" });
    await until(
      () => showedLines("↳ vendors-1: read_file notes/acme.md", "↳ vendors-2: read_file notes/bolt.md"),
      "a preview listing both helpers' calls",
      15_000,
    );
    await until(
      () => tg.messagesInChat(ANN.id).some((m) => m.text === "I've asked 2 helpers."),
      "the parent's first answer",
    );
    gates.acme.open();
    await until(
      () => showedLines("✓ vendors-1 done", "↳ vendors-2: read_file notes/bolt.md"),
      "the preview edited: the first helper done",
      15_000,
    );
    gates.bolt.open();
    await until(() => tg.messagesInChat(ANN.id).some((m) => m.text === FINAL), "the final answer", 15_000);

    // The chat holds the first answer and the final one, once each; no helper list is left.
    const chat = tg
      .messagesInChat(ANN.id)
      .filter((m) => m.from?.id === BOT.id)
      .map((m) => m.text ?? "");
    expect(chat).toEqual(["I've asked 2 helpers.", FINAL]);
    // The final answer is the helper preview, edited: it was posted as the helper list, never sent anew.
    const preview = tg.messagesInChat(ANN.id).find((m) => m.text === FINAL);
    const posted = tg.sentMessages({ chatId: ANN.id }).find((m) => m.message_id === preview?.message_id);
    expect(posted?.text).toMatch(/^↳ vendors-\d: read_file notes\//);
    expect(tg.sentMessages({ chatId: ANN.id })).toHaveLength(2);
    expect(shown().filter((t) => t === FINAL)).toHaveLength(1);
  }, 30_000);
});

describe("helpers at work, not shown (subagents.progress: false)", () => {
  it("the chat gets the first answer and the final one, and no helper list", async () => {
    const sim = new ModelSimulator();
    await sim.start();
    sim.setDefault(responder);
    gates = { acme: gate(), bolt: gate() };
    gates.acme.open();
    gates.bolt.open();
    const tg = new FakeTelegramBotApi();
    await tg.start();
    tg.addBot(BOT);
    const gw = await startTestGateway({
      ...simulatorConfig(sim, "openai"),
      channels: { telegram: { token: TOKEN, apiRoot: tg.apiRoot, allowFrom: [ANN.id], streaming: "edit" } },
      subagents: { progress: false },
    });
    try {
      tg.pushMessage(TOKEN, {
        chat: { id: ANN.id, type: "private" },
        from: ANN,
        text: "compare the vendors",
      });
      await until(() => tg.messagesInChat(ANN.id).some((m) => m.text === FINAL), "the final answer", 15_000);
      const texts = tg.calls
        .filter((c) => c.method === "sendMessage" || c.method === "editMessageText")
        .map((c) => String(c.params.text));
      expect(texts.filter((t) => t.startsWith("↳") || t.startsWith("✓"))).toEqual([]);
    } finally {
      await gw.stop();
      await tg.close();
      await sim.close();
    }
  }, 30_000);
});

/** The frames of an SSE stream as they arrive: `{ event, data }`. */
async function openEvents(url: string, signal: AbortSignal) {
  const res = await fetch(url, { signal, headers: { accept: "text/event-stream" } });
  const frames: Array<{ event: string; data: Record<string, unknown> }> = [];
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const pump = async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const raw = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(raw)?.[1];
        const data = /^data: (.*)$/m.exec(raw)?.[1];
        if (event && data) frames.push({ event, data: JSON.parse(data) as Record<string, unknown> });
        end = buffer.indexOf("\n\n");
      }
    }
  };
  pump().catch(() => {}); // aborted at the test's end
  return frames;
}

describe("helpers at work over HTTP", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    sim.setDefault(responder);
    gates = { acme: gate(), bolt: gate() };
    gw = await startTestGateway(simulatorConfig(sim, "openai"));
  });
  afterAll(async () => {
    gates.acme.open();
    gates.bolt.open();
    await gw?.stop();
    await sim?.close();
  });

  it("the parent answered at once; its sender's event stream carries a subagent event per call and end", async () => {
    const abort = new AbortController();
    try {
      const frames = await openEvents(`${gw.url}/v1/chat/events?sender=bob`, abort.signal);
      await until(() => frames.some((f) => f.event === "ready"), "the event stream open");
      const r = await gw.chat("bob", "compare the vendors");
      expect(r.body.replies?.[0]?.text).toBe("I've asked 2 helpers.");
      const helperEvents = () => frames.filter((f) => f.event === "subagent").map((f) => f.data);
      await until(() => helperEvents().length >= 2, "both helpers' calls");
      expect(helperEvents()).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            label: "vendors-1",
            state: "running",
            call: "read_file notes/acme.md",
            depth: 1,
          }),
          expect.objectContaining({
            label: "vendors-2",
            state: "running",
            call: "read_file notes/bolt.md",
            depth: 1,
          }),
        ]),
      );
      gates.acme.open();
      gates.bolt.open();
      await until(() => helperEvents().filter((e) => e.state === "done").length === 2, "both helpers done");
      await until(
        () => frames.some((f) => f.event === "reply" && f.data.text === FINAL),
        "the wake's answer in the mailbox stream",
      );
      // A subagent event has no cursor: a reconnecting client resumes its replies as before.
      const ids = (await gw.running.store.subagents.listForParent("agent:main:http:dm:bob")).map((c) => c.id);
      expect(new Set(helperEvents().map((e) => e.id))).toEqual(new Set(ids));
    } finally {
      abort.abort();
    }
  }, 30_000);
});
