/**
 * The HTTP channel on the gateway's loopback server:
 * - `POST /v1/chat` `{"sender","text","id"?}` → `{"sessionKey","replies":[{"text"}]}` after the run,
 *   or a live stream with `Accept: text/event-stream` (`delta` events, then `done`; `subagent`
 *   events while the sender's helpers work);
 * - `POST /v1/chat/completions`, OpenAI-compatible (`user` names the sender; `stream: true` streams chunks);
 * - `GET /v1/chat/replies?sender=&after=` — the sender's mailbox: every reply delivered to it;
 * - `GET /v1/chat/events?sender=` — the same mailbox as a live SSE stream (see mailbox-stream.ts),
 *   with the sender's `subagent` events.
 * The console channel (`switchyard chat`) is the same adapter under another name and path.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, readJsonBody, sendJson } from "../../http/server.js";
import type {
  AnswerSource,
  Channel,
  ChannelLimits,
  ChatTarget,
  HelperProgress,
  HelperStatus,
  InboundMessage,
  InboundSink,
  OutboundMessage,
  RouteRegistrar,
  SendReceipt,
} from "../types.js";
import { ChannelSendError } from "../errors.js";
import { LiveText } from "./live-text.js";
import { MailboxStreams } from "./mailbox-stream.js";
import { OpenAIEndpoint } from "./openai-endpoint.js";
import { normalizeSender, senderProblem } from "./sender.js";
import { openSse } from "./sse.js";

/** Longest client message id (`id`, `Idempotency-Key`), in characters. */
export const CLIENT_ID_MAX_CHARS = 200;

export interface HttpChannelOptions {
  name: "http" | "console";
  server: RouteRegistrar;
  answers: AnswerSource;
  /** Path prefix: "/v1/chat" for http, "/v1/console" for console. */
  basePath: string;
  /** Also serve the OpenAI-compatible endpoint (http only). */
  openaiCompatible: boolean;
  /** Longest accepted message text (default 32,000 characters). */
  maxTextChars?: number;
  /** How long a request waits for its answer before answering 202 (default 10 min). */
  answerTimeoutMs?: number;
  /** A streamed answer sends an SSE comment this often while nothing else is sent (default 15 s). */
  keepAliveMs?: number;
  /** The model id the OpenAI-compatible `GET /v1/models` lists (default "switchyard"). */
  modelId?: string;
  /** How often an open mailbox stream reads the store without an in-process hint (default 1,000 ms). */
  mailboxPollMs?: number;
}

/** Where streamed text is routed: the turn's target, naming the messages it answers. */
type StreamTarget = ChatTarget & { inboxIds: readonly number[] };

/**
 * The HTTP and console channel (see the file header). Live text reaches exactly the requests
 * waiting on the messages the running turn answers: streams are keyed by inbox id, never by
 * sender, so two requests of one sender never see each other's tokens.
 */
export class HttpChannel implements Channel {
  readonly name: "http" | "console";
  readonly accountId = "default";
  readonly limits: ChannelLimits = { maxMessageChars: 100_000, formatting: "markdown" };
  /** The waiting request (or the sender's mailbox) is the delivery: replies are `sent` at commit. */
  readonly deliversOnCommit = true;
  readonly #o: HttpChannelOptions;
  #sink: InboundSink | undefined;
  /** Streaming requests in flight by the inbox id they wait for. */
  readonly #byInbox = new Map<number, Set<LiveText>>();
  /** Streaming requests in flight by their sender (the chat): where `subagent` events go. */
  readonly #byChat = new Map<string, Set<(frames: string) => void>>();
  readonly #mailboxes: MailboxStreams;

  constructor(options: HttpChannelOptions) {
    this.#o = options;
    this.name = options.name;
    const base = options.basePath;
    options.server.route("POST", base, (req, res) => this.#chat(req, res));
    options.server.route("GET", `${base}/replies`, (_req, res, url) => this.#replies(res, url));
    this.#mailboxes = new MailboxStreams({
      channel: options.name,
      answers: options.answers,
      ...(options.mailboxPollMs !== undefined ? { pollMs: options.mailboxPollMs } : {}),
      ...(options.keepAliveMs !== undefined ? { keepAliveMs: options.keepAliveMs } : {}),
    });
    options.server.route("GET", `${base}/events`, async (req, res, url) => {
      if (!this.#sink) throw new HttpError(503, `the ${this.name} channel is not started`, "unavailable");
      await this.#mailboxes.serve(req, res, url);
    });
    if (options.openaiCompatible) {
      const modelId = options.modelId ?? "switchyard";
      const endpoint = new OpenAIEndpoint(
        {
          maxBodyBytes: options.server.maxBodyBytes,
          accept: (sender, text, clientId) => this.#accept(sender, text, clientId),
          track: (live) => this.#track(live),
          wait: (inboxId, req, res) => this.#wait(inboxId, req, res),
        },
        { modelId, keepAliveMs: options.keepAliveMs ?? 15_000 },
      );
      options.server.route("POST", `${base}/completions`, (req, res) =>
        endpoint.completions(req, res, clientIdOf(req.headers["idempotency-key"], "Idempotency-Key")),
      );
      options.server.route("GET", "/v1/models", (_req, res) => endpoint.models(res));
      // The SDKs percent-encode the id in the path ("switchyard%3Amain").
      for (const id of new Set([modelId, encodeURIComponent(modelId)]))
        options.server.route("GET", `/v1/models/${id}`, (_req, res) => endpoint.model(res));
    }
  }

  /** Starts intake (requests are answered 503 until then). A stopped channel may start again. */
  async start(sink: InboundSink): Promise<void> {
    this.#sink = sink;
  }

  /** Stops intake: new requests are answered 503, open mailbox streams end. Idempotent. */
  async stop(): Promise<void> {
    this.#sink = undefined;
    this.#mailboxes.endAll();
  }

  /**
   * Delivery is the HTTP response (or the mailbox); the receipt is the outbox key, so a resend
   * of the same chunk gets the same id. Throws ChannelSendError "transient" while stopped.
   */
  async send(message: OutboundMessage): Promise<SendReceipt> {
    if (!this.#sink) throw new ChannelSendError("transient", `the ${this.name} channel is not started`);
    return { platformMessageId: `${this.name}-${message.idempotencyKey}` };
  }

  /** Writes live text to the requests waiting on the messages the turn answers. */
  streamDelta(target: StreamTarget, delta: string): void {
    for (const id of target.inboxIds) for (const live of this.#byInbox.get(id) ?? []) live.append(delta);
  }

  /**
   * The turn's last `discardedChars` streamed characters were discarded. SSE cannot take text
   * back, so each request matches the replacement against what it was sent (see LiveText):
   * repeated text is not written twice, and a replacement that differs ends with the full answer.
   */
  streamReset(target: StreamTarget, discardedChars: number): void {
    for (const id of target.inboxIds)
      for (const live of this.#byInbox.get(id) ?? []) live.reset(discardedChars);
  }

  /**
   * The chat's helpers at work: one `subagent` event (the helper that changed: id, label, state,
   * its latest call) to the sender's streaming requests still open and its mailbox streams
   * (`GET …/events`), which is where a client sees them once the parent's request answered.
   */
  streamHelpers(target: StreamTarget, progress: HelperProgress): void {
    const frames = subagentFrame(progress.changed);
    for (const write of this.#byChat.get(target.chatId) ?? []) write(frames);
    this.#mailboxes.broadcast(target.chatId, frames);
  }

  /** A request that streams: `commit` files it under its message's inbox id, `done` removes it. */
  #track(live: LiveText | undefined) {
    let inboxId: number | undefined;
    return {
      commit: (id: number) => {
        if (!live) return;
        inboxId = id;
        addTo(this.#byInbox, id, live);
      },
      done: () => {
        if (live && inboxId !== undefined) removeFrom(this.#byInbox, inboxId, live);
      },
    };
  }

  /**
   * Validates one message and hands it to the sink. `clientId` is the client's own id for it
   * (`id`, `Idempotency-Key`): with the sender (the chat) it makes the dedupe key, so a client
   * that sends the same message again gets the first answer, and two clients that number their
   * messages alike never see each other's.
   */
  async #accept(sender: string, text: string, clientId: string | undefined) {
    const max = this.#o.maxTextChars ?? 32_000;
    if (text.length > max) {
      throw new HttpError(
        413,
        `message text is ${text.length} characters; the limit is ${max}`,
        "too_large",
        "text",
      );
    }
    const sink = this.#sink;
    if (!sink) throw new HttpError(503, `the ${this.name} channel is not started`, "unavailable");
    const message: InboundMessage = {
      channel: this.name,
      accountId: this.accountId,
      chatId: sender,
      senderId: sender,
      senderName: sender,
      isDirect: true,
      mentionsBot: true,
      text,
      attachments: [],
      platformMessageId: clientId ?? randomUUID(),
      receivedAt: Date.now(),
    };
    // A refusal (SinkUnavailableError, StoreError) propagates: the server answers 503 with
    // Retry-After, and nothing was committed, so the client sends the same message again.
    return sink.accept(message);
  }

  async #chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonBody(req, this.#o.server.maxBodyBytes);
    const problem = senderProblem(body.sender);
    if (problem) throw new HttpError(400, problem, "invalid_sender", "sender");
    const sender = normalizeSender(body.sender as string);
    if (typeof body.text !== "string" || body.text.trim().length === 0)
      throw new HttpError(400, '"text" must be a non-empty string', "invalid_text", "text");
    const clientId =
      clientIdOf(body.id, "id") ?? clientIdOf(req.headers["idempotency-key"], "Idempotency-Key");
    const wantsStream = (req.headers.accept ?? "").includes("text/event-stream");
    const result = await this.#accept(sender, body.text, clientId);
    const sse = wantsStream ? openSse(res, this.#o.keepAliveMs) : undefined;
    const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    const live = sse ? new LiveText((text) => sse.write(frame("delta", { text }))) : undefined;
    const request = this.#track(live);
    const helpers = (frames: string) => sse?.write(frames);
    if (sse) addTo(this.#byChat, sender, helpers);
    try {
      if (result.status === "accepted" || result.status === "duplicate") request.commit(result.inboxId);
      if (result.status === "rejected") {
        const error = { error: { code: "rejected", message: result.reason } };
        if (sse) return sse.end(frame("error", error));
        return sendJson(res, 403, error);
      }
      const sessionKey = result.sessionKey;
      const answer =
        result.status === "command"
          ? { state: "answered" as const, replies: [result.reply] }
          : await this.#wait(result.inboxId, req, res);
      if (!answer) return;
      // Live text that went a different way than the answer (a model call failed part-way and
      // the retry said something else) is followed by a notice and the answer, as a delta, so
      // a client that prints deltas shows the answer; `done` carries the replies as always.
      const ending = live?.finish(answer.replies.join("\n\n"), answer.state === "answered");
      if (sse && ending?.retold) sse.write(frame("delta", { text: ending.text }));
      const payload = {
        sessionKey,
        state: answer.state,
        replies: answer.replies.map((t) => ({ text: t })),
        ...(result.status === "duplicate" ? { duplicate: true } : {}),
      };
      if (sse) sse.end(frame("done", payload));
      else sendJson(res, 200, payload);
    } finally {
      request.done();
      removeFrom(this.#byChat, sender, helpers);
      sse?.close();
    }
  }

  async #wait(inboxId: number, req: IncomingMessage, res: ServerResponse) {
    const controller = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) controller.abort(new Error("client went away"));
    };
    res.on("close", onClose);
    const timer = setTimeout(
      () => controller.abort(new Error("timeout")),
      this.#o.answerTimeoutMs ?? 600_000,
    );
    try {
      return await this.#o.answers.waitForAnswer(inboxId, controller.signal);
    } catch {
      // The reply will still be delivered to the mailbox (GET …/replies).
      if (!res.headersSent && !req.destroyed) {
        sendJson(res, 202, {
          accepted: true,
          inboxId,
          note: "still working; fetch the reply from the replies endpoint",
        });
      }
      return undefined;
    } finally {
      clearTimeout(timer);
      res.off("close", onClose);
    }
  }

  async #replies(res: ServerResponse, url: URL): Promise<void> {
    const raw = url.searchParams.get("sender") ?? undefined;
    const problem = senderProblem(raw);
    if (problem) throw new HttpError(400, `${problem} in the query`, "invalid_sender", "sender");
    const sender = normalizeSender(raw as string);
    const after = Number(url.searchParams.get("after") ?? "0");
    if (!Number.isInteger(after) || after < 0)
      throw new HttpError(400, '"after" must be a whole number', "invalid_after");
    const replies = await this.#o.answers.listReplies(this.name, sender, after);
    sendJson(res, 200, { replies });
  }
}

/** The `subagent` SSE event of one helper's change. */
export function subagentFrame(h: HelperStatus): string {
  const data = {
    id: h.id,
    label: h.label,
    state: h.state,
    depth: h.depth,
    ...(h.lastCall ? { call: h.lastCall } : {}),
  };
  return `event: subagent\ndata: ${JSON.stringify(data)}\n\n`;
}

function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(value);
}

function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}

/**
 * A client's id for its message: a string of 1–200 characters or a number; absent (or null):
 * none. Anything else is refused, never ignored: ignoring it would run a retried message twice.
 */
function clientIdOf(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "string" && value.length > 0 && value.length <= CLIENT_ID_MAX_CHARS) return value;
  const found =
    typeof value === "string"
      ? value.length === 0
        ? "an empty string"
        : `${value.length} characters`
      : Array.isArray(value)
        ? "a list"
        : typeof value === "object"
          ? "an object"
          : JSON.stringify(value);
  throw new HttpError(
    400,
    `"${field}" must be a string of 1–${CLIENT_ID_MAX_CHARS} characters or a number (found ${found})`,
    "invalid_id",
    field,
  );
}
