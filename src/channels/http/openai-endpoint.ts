/**
 * The OpenAI-compatible face of the HTTP channel: `POST /v1/chat/completions` (plain or
 * streamed) and `GET /v1/models`, so any OpenAI client can talk to the agent.
 *
 * The gateway keeps the conversation itself: of the `messages` a client sends, only the last
 * `user` message is new input; the client's copy of the history (and its system messages) is
 * not used, so a client cannot rewrite what the agent remembers. Without `user`, a client's
 * session is keyed by a hash of its bearer token (its API key), else of its remote address.
 */
import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, errorBody, readJsonBody, sendJson } from "../../http/server.js";
import type { AcceptResult, AnswerUsage, ChatAnswer } from "../types.js";
import { LiveText } from "./live-text.js";
import { completionParams } from "./openai-params.js";
import { normalizeSender, senderProblem } from "./sender.js";
import { type SseStream, openSse } from "./sse.js";

/** What the endpoint needs from the channel it belongs to. */
export interface ChatIntake {
  readonly maxBodyBytes: number;
  /** Validates and commits one message (throws HttpError for a bad one). */
  accept(sender: string, text: string, clientId: string | undefined): Promise<AcceptResult>;
  /** Routes live text (deltas and resets) of the run answering `inboxId` to `live` until `done()`. */
  track(live: LiveText | undefined): { commit(inboxId: number): void; done(): void };
  /** The answer, or undefined when the request was answered 202 (timeout, client gone). */
  wait(inboxId: number, req: IncomingMessage, res: ServerResponse): Promise<ChatAnswer | undefined>;
}

export interface OpenAIEndpointOptions {
  /**
   * The model id `GET /v1/models` lists (e.g. "switchyard:main"), the one a completion may name:
   * another is a 404 `model_not_found`, as OpenAI answers, so clients that route by model name
   * (LiteLLM, Open WebUI) see it. A request without `model` gets the agent.
   */
  modelId: string;
  /** SSE keep-alive comment interval for streamed answers. */
  keepAliveMs: number;
}

/** Owns the OpenAI wire shapes: request validation, session identity, responses and chunks. */
export class OpenAIEndpoint {
  readonly #intake: ChatIntake;
  readonly #o: OpenAIEndpointOptions;
  readonly #created = Math.floor(Date.now() / 1000);

  constructor(intake: ChatIntake, options: OpenAIEndpointOptions) {
    this.#intake = intake;
    this.#o = options;
  }

  /** `GET /v1/models`: the agent, as the one model this server offers. */
  models(res: ServerResponse): void {
    sendJson(res, 200, { object: "list", data: [this.#model()] });
  }

  /** `GET /v1/models/<id>` (the SDKs' `models.retrieve`) for the id `models` lists. */
  model(res: ServerResponse): void {
    sendJson(res, 200, this.#model());
  }

  #model() {
    return { id: this.#o.modelId, object: "model", created: this.#created, owned_by: "switchyard" };
  }

  /** `POST /v1/chat/completions`. */
  async completions(req: IncomingMessage, res: ServerResponse, clientId: string | undefined): Promise<void> {
    const body = await readJsonBody(req, this.#intake.maxBodyBytes);
    if (body.model !== undefined && body.model !== this.#o.modelId)
      throw new HttpError(
        404,
        `The model ${JSON.stringify(body.model)} does not exist here: this server offers "${this.#o.modelId}" (GET /v1/models)`,
        "model_not_found",
        "model",
      );
    const { stream, includeUsage } = completionParams(body);
    const text = lastUserText(body.messages);
    const sender = senderOf(body.user, req);
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const model = this.#o.modelId;
    const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`;
    const delta = (d: Record<string, unknown>, finish: string | null) =>
      frame([{ index: 0, delta: d, finish_reason: finish }]);

    // Validated and committed before the first byte: a refusal is still a plain HTTP error.
    const result = await this.#intake.accept(sender, text, clientId);
    let sse: SseStream | undefined;
    const live = stream ? new LiveText((d) => sse?.write(delta({ content: d }, null))) : undefined;
    const request = this.#intake.track(live);
    try {
      if (result.status === "rejected" && !stream) {
        return sendJson(res, 403, errorBody(403, "rejected", result.reason));
      }
      if (stream) {
        sse = openSse(res, this.#o.keepAliveMs);
        sse.write(delta({ role: "assistant", content: "" }, null));
      }
      if (result.status === "accepted" || result.status === "duplicate") request.commit(result.inboxId);
      let replyText: string;
      let answered = false;
      let usage: AnswerUsage | undefined;
      if (result.status === "rejected") replyText = result.reason;
      else if (result.status === "command") replyText = result.reply;
      else {
        const answer = await this.#intake.wait(result.inboxId, req, res);
        if (!answer) return;
        replyText = answer.replies.join("\n\n");
        answered = answer.state === "answered";
        usage = answer.usage;
      }
      const openaiUsage = toOpenAIUsage(usage);
      if (sse && live) {
        // Live text may be missing (a delta that could not be routed) or cut short: the client
        // gets the part of the reply not streamed yet; live text that went a different way (a
        // model call failed part-way, see LiveText) gets a notice and the whole reply. A failure
        // notice is always written.
        const rest = live.finish(replyText, answered).text;
        if (rest !== "") sse.write(delta({ content: rest }, null));
        sse.write(delta({}, "stop"));
        if (includeUsage) sse.write(frame([], { usage: openaiUsage }));
        sse.end("data: [DONE]\n\n");
      } else {
        sendJson(res, 200, {
          id,
          object: "chat.completion",
          created,
          model,
          choices: [{ index: 0, message: { role: "assistant", content: replyText }, finish_reason: "stop" }],
          usage: openaiUsage,
        });
      }
    } finally {
      request.done();
      sse?.close();
    }
  }
}

/** The text of the last `user` message; a request without one is refused with a clear 400. */
function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages) || messages.length === 0)
    throw new HttpError(400, '"messages" must be a non-empty array', "invalid_messages", "messages");
  const last = [...messages].reverse().find((m) => isRecord(m) && m.role === "user");
  if (!isRecord(last)) {
    throw new HttpError(
      400,
      '"messages" has no "user" message: the agent answers the last user message (system or assistant messages alone are not a request)',
      "no_user_message",
      "messages",
    );
  }
  const text = contentText(last.content);
  if (!text || text.trim() === "")
    throw new HttpError(400, "the last user message has no text", "invalid_text", "messages");
  return text;
}

/**
 * Who is speaking: `user` when given (validated like any sender), else a stable pseudonym from
 * the client's bearer token, else from its remote address — never one session for everybody.
 */
function senderOf(user: unknown, req: IncomingMessage): string {
  if (user !== undefined && user !== null) {
    const problem = senderProblem(user, "user");
    if (problem) throw new HttpError(400, problem, "invalid_sender", "user");
    return normalizeSender(user as string);
  }
  const bearer = /^Bearer\s+(\S+)/i.exec(req.headers.authorization ?? "")?.[1];
  const basis = bearer ? `token:${bearer}` : `addr:${req.socket.remoteAddress ?? "unknown"}`;
  return `openai-${createHash("sha256").update(basis).digest("hex").slice(0, 16)}`;
}

/** Our usage as OpenAI reports it: prompt tokens include cached ones. */
function toOpenAIUsage(usage: AnswerUsage | undefined) {
  const u = usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const prompt = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.outputTokens,
    total_tokens: prompt + u.outputTokens,
    prompt_tokens_details: { cached_tokens: u.cacheReadTokens },
  };
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
