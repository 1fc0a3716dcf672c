/**
 * A fake Telegram Bot API server on 127.0.0.1 with the real semantics the gateway depends on:
 * getUpdates offsets, held long polls and conflicts, webhooks with secret and webhook replies,
 * HTML entity parsing, Telegram's error texts, and scripted faults. Tests drive real grammY
 * against it (`client.apiRoot = fake.apiRoot`) and steer it through the in-process control API.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Clock, type TimerHandle, systemClock } from "../../src/util/clock.js";
import { CallLog, FaultQueue } from "./telegram-call-log.js";
import { ChatStore } from "./telegram-chats.js";
import { BotApiError, badRequest } from "./telegram-errors.js";
import { type AddFileInput, FileStore } from "./telegram-files.js";
import { type HoldOptions, type MethodHold, MethodHolds } from "./telegram-holds.js";
import { type MethodContext, botMethods } from "./telegram-methods.js";
import {
  type ApiParams,
  arrayParam,
  boolParam,
  intParam,
  isRecord,
  parseParams,
  readBody,
  stringParam,
} from "./telegram-params.js";
import type {
  FakeBotConfig,
  FaultSpec,
  PushCallbackQueryInput,
  PushEditInput,
  PushMessageInput,
  PushedMessage,
  RecordedCall,
  TelegramMessage,
  TelegramUser,
  WebhookDelivery,
} from "./telegram-types.js";
import { UpdateQueue } from "./telegram-update-queue.js";
import { applyIncomingEdit, buildIncomingMessage, toUser } from "./telegram-updates.js";
import { type WebhookTarget, WebhookSender } from "./telegram-webhook.js";

export type * from "./telegram-types.js";
export type { AddFileInput } from "./telegram-files.js";
export type { HoldOptions, MethodHold } from "./telegram-holds.js";

/** Options for {@link FakeTelegramBotApi}. */
export interface FakeTelegramBotApiOptions {
  /** Port on 127.0.0.1; default 0 (an ephemeral port). */
  port?: number;
  /** Clock for `date` fields and call times, in ms; default `clock.now`. */
  now?: () => number;
  /** Time source and the long-poll hold timer; default the system clock. */
  clock?: Clock;
  /** Upper bound for a getUpdates `timeout`, in seconds; default 60. */
  maxLongPollSeconds?: number;
  /** Delivery attempts per update before a webhook update is given up; default 3. */
  webhookMaxAttempts?: number;
  /** Pause before webhook retry n is n × this, in ms; default 100. */
  webhookRetryDelayMs?: number;
  /** Per-delivery timeout, in ms; default 10_000. */
  webhookTimeoutMs?: number;
  /** Reject a `&` that starts no HTML entity in HTML text (Telegram keeps it); default true. */
  strictHtmlAmpersand?: boolean;
  /** Largest request body accepted, in bytes; default 52_428_800 (50 MB, as Telegram). */
  maxBodyBytes?: number;
}

const WEBHOOK_CONFLICT =
  "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";
const POLL_CONFLICT =
  "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running";

interface BotState {
  config: FakeBotConfig;
  updates: UpdateQueue;
  poll: { res: ServerResponse; limit: number; timer: TimerHandle } | undefined;
  /** Long polls ended by a newer getUpdates (two pollers at once): Telegram's 409 each. */
  pollConflicts: number;
  webhook: WebhookTarget | undefined;
  /** Per-bot method state: its user, files and commands. */
  context: MethodContext;
}

type Handler = (bot: BotState, params: ApiParams) => unknown;

function checkedInteger(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`FakeTelegramBotApi: ${name} must be an integer ≥ ${min}, got ${value}`);
  }
  return value;
}

/**
 * Fake Telegram Bot API. `start()` it, `addBot()` the tokens under test, point grammY's
 * `client.apiRoot` at {@link apiRoot}, and `close()` it when done (no timers or sockets remain).
 */
export class FakeTelegramBotApi {
  readonly #port: number;
  readonly #now: () => number;
  readonly #clock: Clock;
  readonly #maxLongPollSeconds: number;
  readonly #webhooks: WebhookSender;
  readonly #strictHtmlAmpersand: boolean;
  readonly #maxBodyBytes: number;
  readonly #bots = new Map<string, BotState>();
  readonly #chats = new ChatStore();
  readonly #log = new CallLog();
  readonly #faults = new FaultQueue();
  readonly #holds = new MethodHolds();
  readonly #sent: Array<{ token: string; message: TelegramMessage }> = [];
  readonly #handlers: Map<string, { name: string; handler: Handler }>;
  readonly #callListeners = new Set<(call: RecordedCall, result: unknown) => void>();
  #server: Server | undefined;
  #boundPort: number | undefined;
  #closed = false;
  #callbackQueries = 0;

  constructor(options: FakeTelegramBotApiOptions = {}) {
    this.#port = checkedInteger("port", options.port, 0, 0);
    this.#clock = options.clock ?? systemClock;
    this.#now = options.now ?? (() => this.#clock.now());
    this.#maxLongPollSeconds = checkedInteger("maxLongPollSeconds", options.maxLongPollSeconds, 60, 1);
    this.#webhooks = new WebhookSender({
      maxAttempts: checkedInteger("webhookMaxAttempts", options.webhookMaxAttempts, 3, 1),
      retryDelayMs: checkedInteger("webhookRetryDelayMs", options.webhookRetryDelayMs, 100, 0),
      timeoutMs: checkedInteger("webhookTimeoutMs", options.webhookTimeoutMs, 10_000, 1),
      nowSeconds: () => this.#nowSeconds(),
    });
    this.#strictHtmlAmpersand = options.strictHtmlAmpersand ?? true;
    this.#maxBodyBytes = checkedInteger("maxBodyBytes", options.maxBodyBytes, 50 * 1024 * 1024, 1);
    this.#handlers = new Map(
      Object.entries(this.#methodTable()).map(([name, handler]) => [name.toLowerCase(), { name, handler }]),
    );
  }

  /** Listens on 127.0.0.1 (the configured port, or an ephemeral one). */
  async start(): Promise<void> {
    if (this.#server) throw new Error("FakeTelegramBotApi: already started");
    const server = createServer((req, res) => void this.#onRequest(req, res));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.#port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.#boundPort = (server.address() as AddressInfo).port;
  }

  /** `http://127.0.0.1:PORT`, the value for grammY's `client.apiRoot` (no trailing slash). */
  get apiRoot(): string {
    if (this.#boundPort === undefined) throw new Error("FakeTelegramBotApi: call start() first");
    return `http://127.0.0.1:${this.#boundPort}`;
  }

  /** Every webhook delivery attempt, in order. */
  get webhookDeliveries(): WebhookDelivery[] {
    return this.#webhooks.deliveries;
  }

  /** Every request received, in order, including ones answered with an error. */
  get calls(): RecordedCall[] {
    return this.#log.calls;
  }

  /**
   * Calls `listener` with every call as it is recorded (the fake has acted on it, as for
   * `waitFor`) and what it returned (the sent or edited message, `true`…; undefined when it
   * failed). An `after` hold's call is reported before its answer leaves. Returns the unsubscribe.
   */
  onCall(listener: (call: RecordedCall, result: unknown) => void): () => void {
    this.#callListeners.add(listener);
    return () => this.#callListeners.delete(listener);
  }

  /**
   * Answers held long polls with `[]`, rejects pending `waitFor`s, aborts webhook deliveries,
   * clears every timer and closes all connections. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#holds.releaseAll();
    for (const bot of this.#bots.values()) this.#answerPoll(bot);
    this.#webhooks.close();
    this.#log.close();
    const server = this.#server;
    if (!server?.listening) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Let the final long-poll answers flush, then drop keep-alive sockets.
      setImmediate(() => server.closeAllConnections());
    });
  }

  /** Serves a bot: requests with its token are authorised; its updates, files and commands are its own. */
  addBot(bot: FakeBotConfig): void {
    if (!/^[^/\s]+$/.test(bot.token)) {
      throw new Error(`FakeTelegramBotApi: bad token ${JSON.stringify(bot.token)}`);
    }
    if (this.#bots.has(bot.token)) throw new Error(`FakeTelegramBotApi: bot ${bot.username} already added`);
    const user: TelegramUser = {
      id: bot.id,
      is_bot: true,
      first_name: bot.firstName ?? bot.username,
      username: bot.username,
    };
    const context: MethodContext = {
      botUser: user,
      canReadAllGroupMessages: bot.canReadAllGroupMessages ?? false,
      commands: new Map(),
      chats: this.#chats,
      files: new FileStore(),
      html: { strictAmpersand: this.#strictHtmlAmpersand },
      nowSeconds: () => this.#nowSeconds(),
      onSent: (message) => this.#sent.push({ token: bot.token, message }),
    };
    this.#bots.set(bot.token, {
      config: { ...bot },
      updates: new UpdateQueue(),
      poll: undefined,
      pollConflicts: 0,
      webhook: undefined,
      context,
    });
  }

  // ─── test control API ────────────────────────────────────────────────────────────────────

  /**
   * Queues an update for the bot (keeping its `update_id`, or assigning the next one) and wakes
   * a held long poll, or delivers it to the webhook when one is set. Kinds that
   * `allowed_updates` excludes are not queued, as on Telegram. Returns the update id.
   */
  pushUpdate(token: string, update: object): number {
    const bot = this.#bot(token);
    const full = bot.updates.withId(update);
    if (!bot.updates.push(full)) return full.update_id;
    if (bot.webhook) this.#drainWebhook(bot);
    else if (bot.poll) this.#answerPoll(bot);
    return full.update_id;
  }

  /**
   * Pushes a `message` update (`channel_post` for channels): message id next in the chat, `date`
   * now, `bot_command` / `mention` entities detected unless `entities` is given.
   */
  pushMessage(token: string, input: PushMessageInput): PushedMessage {
    this.#bot(token);
    const message = buildIncomingMessage(this.#chats, input, this.#nowSeconds());
    const key = input.chat.type === "channel" ? "channel_post" : "message";
    return { updateId: this.pushUpdate(token, { [key]: message }), messageId: message.message_id };
  }

  /** Edits a message as its sender would and pushes `edited_message` (see {@link PushEditInput}). */
  pushEditedMessage(token: string, edit: PushEditInput): PushedMessage {
    this.#bot(token);
    const message = applyIncomingEdit(this.#chats, edit, this.#nowSeconds());
    const key = message.chat.type === "channel" ? "edited_channel_post" : "edited_message";
    return { updateId: this.pushUpdate(token, { [key]: message }), messageId: message.message_id };
  }

  /** Pushes a `callback_query` for an inline button on a known message. */
  pushCallbackQuery(
    token: string,
    input: PushCallbackQueryInput,
  ): { updateId: number; callbackQueryId: string } {
    this.#bot(token);
    const message = this.#chats.get(input.chatId, input.messageId);
    if (!message) throw new Error(`pushCallbackQuery: no message ${input.messageId} in chat ${input.chatId}`);
    this.#callbackQueries += 1;
    const callbackQueryId = `cbq-${this.#callbackQueries}`;
    const callbackQuery = {
      id: callbackQueryId,
      from: toUser(input.from),
      message: structuredClone(message),
      chat_instance: String(input.chatId),
      data: input.data,
    };
    return { updateId: this.pushUpdate(token, { callback_query: callbackQuery }), callbackQueryId };
  }

  /** Makes a file available to the bot's `getFile` and at `GET /file/bot<token>/<file_path>`. */
  addFile(token: string, file: AddFileInput): void {
    this.#bot(token).context.files.add(file);
  }

  /**
   * Holds the next calls of `method` until the returned hold is released: the request stays
   * open, unanswered and unrecorded, as if Telegram were slow. `"downloadFile"` holds file
   * downloads (`GET /file/bot<token>/…`). Released calls run in arrival order; `close()`
   * releases everything. With `after: true` the call is carried out and recorded at once and
   * only its answer is held (Telegram stored the message; the client does not know yet).
   */
  holdMethod(method: string, options: HoldOptions = {}): MethodHold {
    return this.#holds.hold(method, options);
  }

  /** Sends to this chat answer 403 "Forbidden: bot was blocked by the user". */
  blockChat(chatId: number): void {
    this.#chats.block(chatId);
  }

  /** Sends to this chat answer 400 "Bad Request: chat not found". */
  forgetChat(chatId: number): void {
    this.#chats.forget(chatId);
  }

  /** Undoes `blockChat` / `forgetChat`. */
  restoreChat(chatId: number): void {
    this.#chats.restore(chatId);
  }

  /** Answers the next `times` (default 1) calls of `method` with this error; FIFO per method. */
  injectFault(fault: FaultSpec): void {
    this.#faults.inject(fault);
  }

  /** Messages the bots sent successfully, as answered at send time, in send order. */
  sentMessages(filter: { token?: string; chatId?: number } = {}): TelegramMessage[] {
    return this.#sent
      .filter((s) => filter.token === undefined || s.token === filter.token)
      .filter((s) => filter.chatId === undefined || s.message.chat.id === filter.chatId)
      .map((s) => structuredClone(s.message));
  }

  /** The chat's messages as they are now (edits applied, deleted ones gone), by message id. */
  messagesInChat(chatId: number): TelegramMessage[] {
    return this.#chats.list(chatId);
  }

  /** Updates queued for the bot and not yet confirmed (or delivered to its webhook). */
  pendingUpdates(token: string): number {
    return this.#bot(token).updates.size;
  }

  /** How many long polls a newer getUpdates ended with 409 (more than one poller at a time). */
  pollConflicts(token: string): number {
    return this.#bot(token).pollConflicts;
  }

  /** The highest confirming getUpdates offset so far (0 before any): every lower update_id is gone. */
  confirmedOffset(token: string): number {
    return this.#bot(token).updates.confirmedOffset;
  }

  /**
   * Resolves with the first call of `method` matching `predicate`, already made or future.
   * Calls are recorded once the fake has acted on them (a sent message is in `sentMessages`).
   * Rejects after `timeoutMs` (default 5000) listing the recent calls, or when the fake closes.
   */
  waitFor(
    method: string,
    predicate: (call: RecordedCall) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<RecordedCall> {
    return this.#log.waitFor(method, predicate, timeoutMs);
  }

  /**
   * POSTs one update straight to the bot's webhook (set by `setWebhook`) outside the queue, with
   * `secretToken` replacing the configured secret (`{ secretToken: undefined }` sends none).
   * Returns the HTTP status (0 when the request failed); a webhook reply in a 2xx is executed.
   */
  async deliverWebhook(
    token: string,
    update: object,
    options: { secretToken?: string } = {},
  ): Promise<number> {
    const bot = this.#bot(token);
    const hook = bot.webhook;
    if (!hook) throw new Error(`deliverWebhook: no webhook set for bot ${bot.config.username}`);
    const full = bot.updates.withId(update);
    const secret = "secretToken" in options ? options.secretToken : hook.secretToken;
    const answer = await this.#webhooks.sendOnce(token, hook.url, full, secret);
    if (answer.status >= 200 && answer.status < 300) this.#executeWebhookReply(bot, answer.body);
    return answer.status;
  }

  // ─── HTTP ────────────────────────────────────────────────────────────────────────────────

  async #onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
      if (file && (req.method === "GET" || req.method === "HEAD")) {
        const token = decodeURIComponent(file[1] ?? "");
        await this.#holds.wait(token, "downloadFile");
        this.#serveFile(token, decodeURIComponent(file[2] ?? ""), res);
        return;
      }
      const api = /^\/bot([^/]+)\/(?:test\/)?([A-Za-z0-9_]+)\/?$/.exec(url.pathname);
      if (!api) throw new BotApiError(404, "Not Found");
      const timeMs = this.#now();
      const body = await readBody(req, this.#maxBodyBytes);
      const params = parseParams(url.searchParams, req.headers["content-type"] ?? "", body);
      const token = decodeURIComponent(api[1] ?? "");
      await this.#holds.wait(token, api[2] ?? "", params);
      const answer = /^getupdates$/i.test(api[2] ?? "")
        ? undefined
        : this.#holds.answerHold(token, api[2] ?? "", params);
      this.#call(token, api[2] ?? "", params, timeMs, res, answer);
    } catch (error) {
      this.#sendError(res, error);
    }
  }

  /**
   * Runs one API call, answers it on `res` (a webhook reply has none; a successful call's answer
   * waits for `answer` when given) and records it.
   */
  #call(
    token: string,
    methodName: string,
    params: ApiParams,
    timeMs: number,
    res?: ServerResponse,
    answer?: Promise<void>,
  ): void {
    const entry = this.#handlers.get(methodName.toLowerCase());
    const method = entry?.name ?? methodName;
    let result: unknown;
    try {
      const bot = this.#bots.get(token);
      if (!bot) throw new BotApiError(401, "Unauthorized");
      if (!entry) throw new BotApiError(404, "Not Found");
      this.#faults.take(token, method);
      if (method === "getUpdates") {
        if (!res) throw badRequest("getUpdates can't be used in a webhook reply");
        this.#getUpdates(bot, params, res);
      } else {
        const value = entry.handler(bot, params);
        result = value;
        if (res && answer) void answer.then(() => this.#send(res, 200, { ok: true, result: value }));
        else if (res) this.#send(res, 200, { ok: true, result: value });
      }
    } catch (error) {
      if (res) this.#sendError(res, error);
    }
    const call: RecordedCall = { token, method, params, timeMs, ...(res ? {} : { viaWebhookReply: true }) };
    this.#log.record(call);
    for (const listener of [...this.#callListeners]) listener(call, result);
  }

  #send(res: ServerResponse, status: number, body: unknown): void {
    if (res.headersSent || res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  }

  #sendError(res: ServerResponse, error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    const apiError =
      error instanceof BotApiError ? error : new BotApiError(500, `Internal Server Error: ${reason}`);
    this.#send(res, apiError.code, apiError.toBody());
  }

  #serveFile(token: string, filePath: string, res: ServerResponse): void {
    const bot = this.#bots.get(token);
    if (!bot) throw new BotApiError(401, "Unauthorized");
    const file = bot.context.files.byPath(filePath);
    if (!file) throw new BotApiError(404, "Not Found");
    if (res.destroyed) return;
    if (file.reportSize === false) {
      // No content-length: the client learns the size only by reading (chunked encoding).
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const step = 16_384;
      for (let at = 0; at < file.content.length; at += step) res.write(file.content.subarray(at, at + step));
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": file.content.length });
    res.end(file.content);
  }

  // ─── getUpdates and webhooks ─────────────────────────────────────────────────────────────

  #getUpdates(bot: BotState, params: ApiParams, res: ServerResponse): void {
    if (bot.webhook) throw new BotApiError(409, WEBHOOK_CONFLICT);
    // As on Telegram, a newer request ends the one being held.
    if (bot.poll) {
      bot.pollConflicts++;
      this.#answerPoll(bot, new BotApiError(409, POLL_CONFLICT));
    }
    const allowed = arrayParam(params, "allowed_updates");
    if (allowed) bot.updates.setAllowed(allowed);
    bot.updates.confirm(intParam(params, "offset") ?? 0);
    const limit = Math.min(100, Math.max(1, intParam(params, "limit") ?? 100));
    const timeoutSeconds = Math.min(this.#maxLongPollSeconds, Math.max(0, intParam(params, "timeout") ?? 0));
    if (bot.updates.size > 0 || timeoutSeconds === 0 || this.#closed) {
      this.#send(res, 200, { ok: true, result: bot.updates.peek(limit) });
      return;
    }
    const timer = this.#clock.setTimeout(() => this.#answerPoll(bot), timeoutSeconds * 1000, { unref: true });
    bot.poll = { res, limit, timer };
    // `res` closes when the client aborts; `req` would close as soon as its body was read.
    res.on("close", () => {
      if (bot.poll?.res !== res) return;
      this.#clock.clearTimeout(bot.poll.timer);
      bot.poll = undefined;
    });
  }

  /** Answers the held long poll with the pending updates, or with `error`. */
  #answerPoll(bot: BotState, error?: BotApiError): void {
    const poll = bot.poll;
    if (!poll) return;
    bot.poll = undefined;
    this.#clock.clearTimeout(poll.timer);
    if (error) this.#sendError(poll.res, error);
    else this.#send(poll.res, 200, { ok: true, result: bot.updates.peek(poll.limit) });
  }

  #drainWebhook(bot: BotState): void {
    void this.#webhooks.drain({
      token: bot.config.token,
      queue: bot.updates,
      webhook: () => bot.webhook,
      onAnswer: (body) => this.#executeWebhookReply(bot, body),
    });
  }

  /** A webhook answer `{"method": …, …params}` is executed as an API call, as Telegram does. */
  #executeWebhookReply(bot: BotState, body: string): void {
    let reply: unknown;
    try {
      reply = JSON.parse(body);
    } catch {
      return; // Not JSON: an ordinary "OK".
    }
    if (!isRecord(reply) || typeof reply.method !== "string") return;
    const { method, ...params } = reply;
    this.#call(bot.config.token, method, params, this.#now());
  }

  // ─── methods ─────────────────────────────────────────────────────────────────────────────

  #methodTable(): Record<string, Handler> {
    const perBot = Object.entries(botMethods).map(([name, method]): [string, Handler] => [
      name,
      (bot, params) => method(bot.context, params),
    ]);
    return {
      ...Object.fromEntries(perBot),
      getUpdates: () => [], // Answered by #getUpdates, which holds the response.
      setWebhook: (bot, params) => this.#setWebhook(bot, params),
      deleteWebhook: (bot, params) => {
        if (boolParam(params, "drop_pending_updates")) bot.updates.clear();
        bot.webhook = undefined;
        return true;
      },
      getWebhookInfo: (bot) => ({
        url: bot.webhook?.url ?? "",
        has_custom_certificate: false,
        pending_update_count: bot.updates.size,
        ...(bot.webhook ? { max_connections: bot.webhook.maxConnections, ip_address: "127.0.0.1" } : {}),
        ...(bot.updates.allowedUpdates.length > 0 ? { allowed_updates: bot.updates.allowedUpdates } : {}),
        ...(bot.webhook?.lastErrorDate !== undefined
          ? { last_error_date: bot.webhook.lastErrorDate, last_error_message: bot.webhook.lastError }
          : {}),
      }),
    };
  }

  #setWebhook(bot: BotState, params: ApiParams): true {
    const url = stringParam(params, "url") ?? "";
    const secretToken = stringParam(params, "secret_token");
    if (url !== "" && !/^https?:\/\/[^/\s]+/.test(url)) {
      throw badRequest("bad webhook: An HTTPS URL must be provided for webhook");
    }
    if (secretToken !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(secretToken)) {
      throw badRequest("secret token contains unallowed characters");
    }
    if (boolParam(params, "drop_pending_updates")) bot.updates.clear();
    const allowed = arrayParam(params, "allowed_updates");
    if (allowed) bot.updates.setAllowed(allowed);
    if (url === "") {
      bot.webhook = undefined; // An empty url removes the webhook, as on Telegram.
      return true;
    }
    bot.webhook = { url, secretToken, maxConnections: intParam(params, "max_connections") ?? 40 };
    this.#answerPoll(bot, new BotApiError(409, WEBHOOK_CONFLICT));
    this.#drainWebhook(bot);
    return true;
  }

  #bot(token: string): BotState {
    const bot = this.#bots.get(token);
    if (!bot) throw new Error(`FakeTelegramBotApi: no bot with token ${token}; call addBot() first`);
    return bot;
  }

  #nowSeconds(): number {
    return Math.floor(this.#now() / 1000);
  }
}
