/**
 * The Channel contract suite: what every adapter of the channel port must do, driven through
 * the `Channel` interface and observed on the platform side (a fake platform server, or the
 * HTTP client), so every channel runs the same suite:
 * `runChannelContract("telegram", (sink) => startTelegramHarness(sink), { … })`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { chunkText, openFence } from "../../src/channels/chunking.js";
import type {
  AcceptResult,
  Channel,
  ChatTarget,
  InboundMessage,
  InboundSink,
  OutboundMessage,
} from "../../src/channels/types.js";
import { ChannelSendError } from "../../src/channels/errors.js";

/** A send failure the platform can be told to answer the next send with. */
export type PlatformSendFailure =
  | { type: "rate_limit"; retryAfterSeconds: number }
  /** A refusal retrying cannot fix (blocked by the user, chat gone). */
  | { type: "permanent" };

/** The platform side of a channel under test: what a person does there and what it shows. */
export interface PlatformProbe {
  /** A direct conversation the platform knows: injected messages come from `senderId` in `chatId`. */
  readonly chat: { chatId: string; senderId: string };
  /**
   * A person writes `text` in the chat. Resolves once the platform has handed it to the channel,
   * or has had it refused (for HTTP: the response arrived), with the id the channel must report
   * as `platformMessageId`. Delivery to the sink is awaited by the suite.
   */
  inject(text: string): Promise<{ platformMessageId: string }>;
  /**
   * Resolves once a listening channel would have taken everything the platform holds. Absence
   * cannot be awaited, so each harness bounds this wait (and returns early when it can tell).
   */
  settle(): Promise<void>;
  /** Texts the platform shows as sent to `chatId`, in send order; absent when `send` is not visible there. */
  sentTexts?(chatId: string): string[];
  /** The current text of a sent message (edits applied). */
  messageText?(chatId: string, platformMessageId: string): string | undefined;
  /** How many typing indications reached `chatId`. */
  typingCount?(chatId: string): number;
  /** The platform answers the next send with this failure. */
  failNextSend?(failure: PlatformSendFailure): void;
  /**
   * Time passes on the channel's clock: for a channel that pauses a rate-limited method until
   * its Retry-After is over (Slack) instead of trying again at once.
   */
  advanceClock?(ms: number): void;
  /**
   * A prepared chunk as a reader sees it: the visible text (what the length limit applies to)
   * and whether every code block opened in it is closed in it.
   */
  read(chunk: string): { text: string; codeBlocksClosed: boolean };
}

/** A started channel and its platform, made fresh for every case. */
export interface ChannelHarness {
  /** Already started with the sink given to the factory. */
  channel: Channel;
  platform: PlatformProbe;
  /** Stops the channel (it may be stopped already) and closes the platform. */
  close(): Promise<void>;
}

/** Starts a channel delivering to `sink`, with its platform. */
export type MakeChannelHarness = (sink: InboundSink) => Promise<ChannelHarness>;

/** The cases of the suite, by id. */
export type ChannelContractCase =
  | "inbound"
  | "send"
  | "order"
  | "prepare"
  | "typing"
  | "edit"
  | "rate_limit"
  | "permanent"
  | "stop"
  | "restart"
  | "send_after_stop";

/** What an implementation declares about itself; every reason ends up in a test name. */
export interface ChannelContractOptions {
  /**
   * Capabilities the channel or its platform lacks, with the reason. `typing` and `edit` are
   * checked (the channel must then not implement them); the others skip their case.
   */
  lacks?: Partial<Record<"typing" | "edit" | "rate_limit" | "permanent" | "restart" | "sent_view", string>>;
  /**
   * Cases the implementation is known to fail, with the change it needs. They run as
   * `it.fails`, so the suite stays green and turns red the day the gap is closed (then drop the entry).
   */
  knownGaps?: Partial<Record<ChannelContractCase, string>>;
}

/** Each wait in the suite ends by this limit: a channel that hangs fails, it does not stall the run. */
const WAIT_MS = 5_000;

/** A sink that records what it accepted and lets the suite await deliveries. */
export class RecordingSink implements InboundSink {
  readonly received: InboundMessage[] = [];
  #next = 1;
  readonly #waiters = new Set<() => void>();

  async accept(message: InboundMessage): Promise<AcceptResult> {
    this.received.push(message);
    for (const wake of [...this.#waiters]) wake();
    return { status: "accepted", inboxId: this.#next++, sessionKey: `contract:${message.chatId}` };
  }

  /** Resolves with the first received message with this text; rejects after `WAIT_MS`. */
  waitForText(text: string): Promise<InboundMessage> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.received.find((m) => m.text === text);
        if (!found) return;
        this.#waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        const seen = this.received.map((m) => JSON.stringify(m.text)).join(", ");
        reject(new Error(`the sink got no message ${JSON.stringify(text)} in ${WAIT_MS} ms (got: ${seen})`));
      }, WAIT_MS);
      this.#waiters.add(check);
      check();
    });
  }
}

/** Rejects when `promise` does not settle within `ms`: "never hangs" made checkable. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** Words of a text with code-fence lines left out: chunking may repeat fences, never words. */
function words(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => !/^ {0,3}(`{3,}|~{3,})/.test(line))
    .join("\n")
    .split(/\s+/)
    .filter((w) => w.length > 0);
}

/**
 * A Markdown reply about four times `max` long: prose, a code block that fits in one message,
 * more prose, and a code block longer than one message (it must be closed and reopened).
 */
function longReply(max: number, maxLines: number): { markdown: string; shortCode: string } {
  const prose = (tag: string, chars: number) => {
    const out: string[] = [];
    for (let i = 0, n = 0; n < chars; i++) {
      const p = `Paragraph ${tag}${i} says something useful about the topic at hand.`;
      out.push(p);
      n += p.length + 2;
    }
    return out.join("\n\n");
  };
  const code = (tag: string, chars: number, lines = Number.POSITIVE_INFINITY) => {
    const out: string[] = [];
    for (let i = 0, n = 0; n < chars && i < lines; i++) {
      const line = `const ${tag}${i} = ${i}; // keep me`;
      out.push(line);
      n += line.length + 1;
    }
    return out.join("\n");
  };
  // Fits one message: 30% of its characters, and its lines with the two fences.
  const shortCode = code("short", Math.floor(max * 0.3), maxLines - 2);
  const markdown = [
    prose("a", Math.floor(max * 1.2)),
    `\`\`\`ts\n${shortCode}\n\`\`\``,
    prose("b", Math.floor(max * 0.6)),
    `\`\`\`ts\n${code("long", Math.floor(max * 1.4))}\n\`\`\``,
    prose("c", Math.floor(max * 0.5)),
  ].join("\n\n");
  return { markdown, shortCode };
}

/**
 * Runs the channel contract against one implementation. Every case gets a fresh harness
 * (a started channel and its platform) and closes it afterwards.
 */
export function runChannelContract(
  name: string,
  makeHarness: MakeChannelHarness,
  options: ChannelContractOptions = {},
): void {
  const lacks = options.lacks ?? {};
  const gaps = options.knownGaps ?? {};

  describe(`Channel contract: ${name}`, () => {
    let h: ChannelHarness | undefined;
    let sink: RecordingSink;

    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    async function setup(): Promise<ChannelHarness & { target: ChatTarget }> {
      sink = new RecordingSink();
      h = await makeHarness(sink);
      const { channel, platform } = h;
      const target: ChatTarget = {
        channel: channel.name,
        accountId: channel.accountId,
        chatId: platform.chat.chatId,
      };
      return { ...h, target };
    }

    let keys = 0;
    const outbound = (target: ChatTarget, text: string): OutboundMessage => ({
      ...target,
      text,
      idempotencyKey: `contract-${name}-${++keys}`,
      recipientId: h?.platform.chat.senderId,
    });

    /** One case: run as `it`, or `it.fails` when declared a known gap (the gap names the fix). */
    const contractCase = (id: ChannelContractCase, title: string, body: () => Promise<void>) => {
      const gap = gaps[id];
      if (gap) it.fails(`${title} — known gap: ${gap}`, body);
      else it(title, body);
    };

    contractCase("inbound", "delivers inbound messages to the sink with the dedupe fields set", async () => {
      const { channel, platform } = await setup();
      const first = await platform.inject("contract inbound one");
      const second = await platform.inject("contract inbound two");
      const a = await sink.waitForText("contract inbound one");
      const b = await sink.waitForText("contract inbound two");
      for (const [m, injected] of [
        [a, first],
        [b, second],
      ] as const) {
        expect(m.channel).toBe(channel.name);
        expect(m.accountId).toBe(channel.accountId);
        expect(m.chatId).toBe(platform.chat.chatId);
        expect(m.senderId).toBe(platform.chat.senderId);
        expect(m.platformMessageId).toBe(injected.platformMessageId);
        expect(m.attachments).toEqual([]);
        expect(Number.isFinite(m.receivedAt)).toBe(true);
      }
      expect(a.platformMessageId).not.toBe(b.platformMessageId);
      expect(sink.received.indexOf(a)).toBeLessThan(sink.received.indexOf(b));
    });

    contractCase(
      "send",
      "send returns a receipt with a platformMessageId and the platform shows the text",
      async () => {
        const { channel, platform, target } = await setup();
        const receipt = await within(
          channel.send(outbound(target, "hello from the contract")),
          WAIT_MS,
          "send",
        );
        expect(typeof receipt.platformMessageId).toBe("string");
        expect(receipt.platformMessageId.length).toBeGreaterThan(0);
        if (platform.sentTexts)
          expect(platform.sentTexts(target.chatId)).toEqual(["hello from the contract"]);
        else
          expect(lacks.sent_view, "a platform without sentTexts must declare lacks.sent_view").toBeTruthy();
      },
    );

    contractCase("order", "chunks sent one after another arrive in that order", async () => {
      const { channel, platform, target } = await setup();
      const texts = ["chunk one of three", "chunk two of three", "chunk three of three"];
      const ids: string[] = [];
      for (const text of texts) {
        ids.push((await within(channel.send(outbound(target, text)), WAIT_MS, "send")).platformMessageId);
      }
      expect(new Set(ids).size).toBe(texts.length);
      if (platform.sentTexts) expect(platform.sentTexts(target.chatId)).toEqual(texts);
    });

    contractCase(
      "prepare",
      "prepare() (or the gateway's default chunkText) splits a long reply into chunks within the limit, joining back to the reply, code blocks closed in each",
      async () => {
        const { channel, platform } = await setup();
        const max = channel.limits.maxMessageChars;
        const maxLines = channel.limits.maxLines ?? Number.POSITIVE_INFINITY;
        const { markdown, shortCode } = longReply(max, maxLines);
        // What the turn runner stores in the outbox for this channel.
        const chunks = channel.prepare
          ? channel.prepare(markdown)
          : chunkText(markdown, max, channel.limits.maxLines ? { maxLines: channel.limits.maxLines } : {});
        expect(chunks.length).toBeGreaterThan(2);
        const read = chunks.map((c) => platform.read(c));
        for (const [i, r] of read.entries()) {
          expect(r.text.length, `chunk ${i} is over the limit`).toBeLessThanOrEqual(max);
          expect(chunks[i]?.split("\n").length, `chunk ${i} has too many lines`).toBeLessThanOrEqual(
            maxLines,
          );
          expect(r.codeBlocksClosed, `chunk ${i} leaves a code block open`).toBe(true);
        }
        expect(words(read.map((r) => r.text).join("\n"))).toEqual(words(markdown));
        // A block that fits in one message reads whole in one chunk.
        expect(read.some((r) => r.text.includes(shortCode))).toBe(true);
      },
    );

    if (lacks.typing) {
      it(`has no typing(): ${lacks.typing}`, async () => {
        const { channel } = await setup();
        expect(channel.typing).toBeUndefined();
      });
    } else {
      contractCase("typing", "typing() for the message a run answers reaches the platform", async () => {
        const { channel, platform, target } = await setup();
        expect(channel.typing, "a channel without typing() must declare lacks.typing").toBeDefined();
        const { platformMessageId } = await platform.inject("please think");
        await sink.waitForText("please think");
        const answering = { ...target, replyTo: platformMessageId };
        await within(channel.typing?.(answering) ?? Promise.resolve(), WAIT_MS, "typing");
        expect(platform.typingCount?.(target.chatId)).toBeGreaterThanOrEqual(1);
        await within(channel.typingDone?.(answering) ?? Promise.resolve(), WAIT_MS, "typingDone");
      });
    }

    if (lacks.edit) {
      it(`has no edit(): ${lacks.edit}`, async () => {
        const { channel } = await setup();
        expect(channel.edit).toBeUndefined();
      });
    } else {
      contractCase("edit", "edit() changes the text of a sent message", async () => {
        const { channel, platform, target } = await setup();
        expect(channel.edit, "a channel without edit() must declare lacks.edit").toBeDefined();
        const { platformMessageId } = await within(
          channel.send(outbound(target, "before the edit")),
          WAIT_MS,
          "send",
        );
        await within(
          channel.edit?.(target, platformMessageId, "after the edit") ?? Promise.resolve(),
          WAIT_MS,
          "edit",
        );
        expect(platform.messageText?.(target.chatId, platformMessageId)).toBe("after the edit");
      });
    }

    // A channel whose platform cannot refuse a send (HTTP: the reply is the response) claims
    // exactly that, and the claim is checked: a started channel takes every send.
    const neverRefuses = (why: string) =>
      it(`never refuses a send while started: ${why}`, async () => {
        const { channel, target } = await setup();
        for (const text of ["one", "two", "three"]) {
          const receipt = await within(channel.send(outbound(target, text)), WAIT_MS, "send");
          expect(receipt.platformMessageId).toBeTruthy();
        }
      });

    const refusalsLacked = [lacks.rate_limit, lacks.permanent].filter((why) => why !== undefined);
    if (refusalsLacked.length > 0) neverRefuses([...new Set(refusalsLacked)].join("; "));

    if (!lacks.rate_limit) {
      contractCase(
        "rate_limit",
        'maps a platform rate limit to ChannelSendError "rate_limit" with retryAfterMs',
        async () => {
          const { channel, platform, target } = await setup();
          platform.failNextSend?.({ type: "rate_limit", retryAfterSeconds: 7 });
          const error = await within(channel.send(outbound(target, "too fast")), WAIT_MS, "send").then(
            () => undefined,
            (err: unknown) => err,
          );
          expect(error).toBeInstanceOf(ChannelSendError);
          expect((error as ChannelSendError).kind).toBe("rate_limit");
          expect((error as ChannelSendError).retryAfterMs).toBe(7_000);
          expect((error as ChannelSendError).retryable).toBe(true);
          // One refusal, not a broken channel: the next send after the wait goes through.
          platform.advanceClock?.(7_000);
          await within(channel.send(outbound(target, "in time")), WAIT_MS, "send");
          if (platform.sentTexts) expect(platform.sentTexts(target.chatId)).toEqual(["in time"]);
        },
      );
    }

    if (!lacks.permanent) {
      contractCase(
        "permanent",
        'maps a permanent refusal to ChannelSendError "permanent" (not retryable)',
        async () => {
          const { channel, platform, target } = await setup();
          platform.failNextSend?.({ type: "permanent" });
          const error = await within(channel.send(outbound(target, "nobody listens")), WAIT_MS, "send").then(
            () => undefined,
            (err: unknown) => err,
          );
          expect(error).toBeInstanceOf(ChannelSendError);
          expect((error as ChannelSendError).kind).toBe("permanent");
          expect((error as ChannelSendError).retryable).toBe(false);
        },
      );
    }

    contractCase(
      "stop",
      "stop() is idempotent and stops intake: a message after stop is not delivered; health() says connected, then stopped",
      async () => {
        const { channel, platform } = await setup();
        await platform.inject("before stop");
        await sink.waitForText("before stop");
        // A channel that reports its connection says connected while running, stopped after.
        if (channel.health) expect(channel.health().state).toBe("connected");
        await within(channel.stop(), WAIT_MS, "stop");
        await within(channel.stop(), WAIT_MS, "a second stop");
        if (channel.health) expect(channel.health().state).toBe("stopped");
        await within(platform.inject("after stop"), WAIT_MS, "inject after stop");
        await platform.settle();
        expect(sink.received.map((m) => m.text)).toEqual(["before stop"]);
      },
    );

    if (lacks.restart) {
      it(`refuses to start again after stop: ${lacks.restart}`, async () => {
        const { channel } = await setup();
        await within(channel.stop(), WAIT_MS, "stop");
        await expect(channel.start(sink)).rejects.toThrow();
      });
    } else {
      contractCase("restart", "starts again after stop and delivers new messages", async () => {
        const { channel, platform } = await setup();
        await within(channel.stop(), WAIT_MS, "stop");
        await within(channel.start(sink), WAIT_MS, "start after stop");
        await platform.inject("after restart");
        const m = await sink.waitForText("after restart");
        expect(m.channel).toBe(channel.name);
      });
    }

    contractCase(
      "send_after_stop",
      "send on a stopped channel fails with a ChannelSendError and does not hang",
      async () => {
        const { channel, target } = await setup();
        await within(channel.stop(), WAIT_MS, "stop");
        const error = await within(
          channel.send(outbound(target, "too late")),
          WAIT_MS,
          "send after stop",
        ).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(error).toBeInstanceOf(ChannelSendError);
      },
    );
  });
}

/** Reads a Markdown chunk as the HTTP client gets it: as is, with its fences counted. */
export function readMarkdownChunk(chunk: string): { text: string; codeBlocksClosed: boolean } {
  return { text: chunk, codeBlocksClosed: openFence(chunk) === undefined };
}
