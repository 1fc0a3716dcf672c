/**
 * The HTTP channel on the gateway's loopback server:
 * - `POST /v1/chat` `{"sender","text","id"?}` → `{"sessionKey","replies":[{"text"}]}` after the run,
 *   or a live stream with `Accept: text/event-stream` (`delta` events, then `done`);
 * - `POST /v1/chat/completions`, OpenAI-compatible (`user` names the sender; `stream: true` streams chunks);
 * - `GET /v1/chat/replies?sender=&after=` — replies delivered while no request was waiting
 *   (e.g. answered after a restart).
 * The console channel (`switchyard chat`) is the same adapter under another name and path.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RouteHandler } from "../../gateway/http-server.js";
import { HttpError, readJsonBody, sendJson } from "../../gateway/http-server.js";
import {
  type AnswerSource,
  type Channel,
  type ChannelLimits,
  ChannelSendError,
  type ChatTarget,
  type InboundMessage,
  type InboundSink,
  type OutboundMessage,
  type SendReceipt,
} from "../types.js";

/** Where the channel registers its routes. */
export interface RouteRegistrar {
  route(method: "GET" | "POST", path: string, handler: RouteHandler): void;
  readonly maxBodyBytes: number;
}

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
}

type StreamWriter = (delta: string) => void;

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
  readonly #byInbox = new Map<number, Set<StreamWriter>>();

  constructor(options: HttpChannelOptions) {
    this.#o = options;
    this.name = options.name;
    const base = options.basePath;
    options.server.route("POST", base, (req, res) => this.#chat(req, res));
    options.server.route("GET", `${base}/replies`, (_req, res, url) => this.#replies(res, url));
    if (options.openaiCompatible) {
      options.server.route("POST", `${base}/completions`, (req, res) => this.#completions(req, res));
    }
  }

  /** Starts intake (requests are answered 503 until then). A stopped channel may start again. */
  async start(sink: InboundSink): Promise<void> {
    this.#sink = sink;
  }

  /** Stops intake: new requests are answered 503. Idempotent. */
  async stop(): Promise<void> {
    this.#sink = undefined;
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
  streamDelta(target: ChatTarget & { inboxIds: readonly number[] }, delta: string): void {
    for (const id of target.inboxIds) for (const write of this.#byInbox.get(id) ?? []) write(delta);
  }

  /** A request that streams: `commit` files it under its message's inbox id, `done` removes it. */
  #track(write: StreamWriter | undefined) {
    let inboxId: number | undefined;
    return {
      commit: (id: number) => {
        if (!write) return;
        inboxId = id;
        addTo(this.#byInbox, id, write);
      },
      done: () => {
        if (write && inboxId !== undefined) removeFrom(this.#byInbox, inboxId, write);
      },
    };
  }

  async #accept(sender: string, text: string, clientId: string | undefined) {
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

  #validate(
    body: Record<string, unknown>,
    senderField: string,
    text: unknown,
  ): { sender: string; text: string } {
    const sender = body[senderField] ?? (senderField === "user" ? "openai-client" : undefined);
    if (typeof sender !== "string" || !/^[\w.@+-]{1,128}$/.test(sender)) {
      throw new HttpError(
        400,
        `"${senderField}" must be a string of 1–128 letters, digits or . @ + - _ (found ${JSON.stringify(sender ?? null)})`,
        "invalid_sender",
      );
    }
    if (typeof text !== "string" || text.trim().length === 0) {
      throw new HttpError(400, '"text" must be a non-empty string', "invalid_text");
    }
    const max = this.#o.maxTextChars ?? 32_000;
    if (text.length > max) {
      throw new HttpError(413, `message text is ${text.length} characters; the limit is ${max}`, "too_large");
    }
    return { sender, text };
  }

  async #chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonBody(req, this.#o.server.maxBodyBytes);
    const { sender, text } = this.#validate(body, "sender", body.text);
    const clientId = typeof body.id === "string" && body.id.length > 0 ? body.id.slice(0, 200) : undefined;
    const wantsStream = (req.headers.accept ?? "").includes("text/event-stream");
    const sse = wantsStream ? this.#openSse(res) : undefined;
    const request = this.#track(sse?.write);
    try {
      const result = await this.#accept(sender, text, clientId);
      if (result.status === "accepted" || result.status === "duplicate") request.commit(result.inboxId);
      if (result.status === "rejected") {
        if (sse) return sse.finish("error", { error: { code: "rejected", message: result.reason } });
        return sendJson(res, 403, { error: { code: "rejected", message: result.reason } });
      }
      const sessionKey = result.sessionKey;
      const answer =
        result.status === "command"
          ? { state: "answered" as const, replies: [result.reply] }
          : await this.#wait(result.inboxId, req, res);
      if (!answer) return;
      const payload = {
        sessionKey,
        state: answer.state,
        replies: answer.replies.map((t) => ({ text: t })),
        ...(result.status === "duplicate" ? { duplicate: true } : {}),
      };
      if (sse) sse.finish("done", payload);
      else sendJson(res, 200, payload);
    } finally {
      request.done();
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

  #openSse(res: ServerResponse) {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const write: StreamWriter = (delta) => {
      res.write(`event: delta\ndata: ${JSON.stringify({ text: delta })}\n\n`);
    };
    return {
      write,
      finish: (event: string, data: unknown) => {
        res.end(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      },
    };
  }

  async #replies(res: ServerResponse, url: URL): Promise<void> {
    const sender = url.searchParams.get("sender") ?? "";
    if (!/^[\w.@+-]{1,128}$/.test(sender))
      throw new HttpError(400, '"sender" query parameter is required', "invalid_sender");
    const after = Number(url.searchParams.get("after") ?? "0");
    if (!Number.isInteger(after) || after < 0)
      throw new HttpError(400, '"after" must be a whole number', "invalid_after");
    const replies = await this.#o.answers.listReplies(this.name, sender, after);
    sendJson(res, 200, { replies });
  }

  async #completions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonBody(req, this.#o.server.maxBodyBytes);
    const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : undefined;
    if (!messages || messages.length === 0)
      throw new HttpError(400, '"messages" must be a non-empty array', "invalid_messages");
    const lastUser = [...messages].reverse().find((m) => isRecord(m) && m.role === "user");
    const text = isRecord(lastUser) ? contentText(lastUser.content) : undefined;
    const { sender } = this.#validate(body, "user", text ?? "");
    const stream = body.stream === true;
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === "string" ? body.model : "switchyard";
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

    /** What this request has streamed so far. */
    let streamed = "";
    if (stream) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(chunk({ role: "assistant", content: "" }, null));
    }
    const request = this.#track(
      stream
        ? (delta) => {
            streamed += delta;
            res.write(chunk({ content: delta }, null));
          }
        : undefined,
    );
    try {
      const result = await this.#accept(sender, text ?? "", undefined);
      if (result.status === "accepted" || result.status === "duplicate") request.commit(result.inboxId);
      let replyText: string;
      let answered = false;
      if (result.status === "rejected") {
        if (!stream)
          return sendJson(res, 403, {
            error: { message: result.reason, type: "rejected", code: "rejected" },
          });
        replyText = result.reason;
      } else if (result.status === "command") {
        replyText = result.reply;
      } else {
        const answer = await this.#wait(result.inboxId, req, res);
        if (!answer) return;
        replyText = answer.replies.join("\n\n");
        answered = answer.state === "answered";
      }
      if (stream) {
        // Live text may be missing (a delta that could not be routed) or cut short: the client
        // gets the part of the reply not streamed yet. A failure notice is always written.
        let rest = replyText;
        if (answered && replyText.startsWith(streamed)) rest = replyText.slice(streamed.length);
        else if (answered && streamed !== "") rest = ""; // text before tool calls was streamed too
        if (rest !== "") res.write(chunk({ content: rest }, null));
        res.write(chunk({}, "stop"));
        res.end("data: [DONE]\n\n");
      } else {
        sendJson(res, 200, {
          id,
          object: "chat.completion",
          created,
          model,
          choices: [{ index: 0, message: { role: "assistant", content: replyText }, finish_reason: "stop" }],
          usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        });
      }
    } finally {
      request.done();
    }
  }
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** OpenAI message content: a string or an array of parts with `text`. */
function contentText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (isRecord(p) && typeof p.text === "string" ? p.text : ""))
      .join("")
      .trim();
  }
  return undefined;
}
