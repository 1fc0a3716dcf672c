/**
 * A fake Slack on 127.0.0.1 speaking the real wire protocols, so the real `@slack/bolt`
 * (`@slack/web-api`, `@slack/socket-mode`) runs against it: the Web API under `/api/`, Socket
 * Mode on `/link` (tickets from apps.connections.open), signed HTTP delivery to an app's Events
 * API endpoint, private file downloads and response_urls. Tests steer it in process.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AppIdentity,
  EventIds,
  appMentionEvent,
  botMessageEvent,
  eventCallback,
  postSigned,
  recordUserEdit,
  recordUserMessage,
  slashCommandPayload,
} from "./slack-events.js";
import { FileStore } from "./slack-files.js";
import { type MethodContext, botUser } from "./slack-methods.js";
import { type EnvelopeType, SocketHub, quiet } from "./slack-socket.js";
import { type FaultPredicate, WebApi } from "./slack-web.js";
import { SlackStore } from "./slack-store.js";
import {
  DEFAULT_SCOPES,
  type FakeSlackOptions,
  type PostEventOptions,
  type RecordedCall,
  type RecordedResponse,
  type RecordedStatus,
  type SlackChannelInput,
  type SlackFault,
  type SlackFileInput,
  type SlackFileObject,
  type SlackMessage,
  type SlackUserInput,
  type SlashCommandInput,
  type UserMessageInput,
  type UserMessageResult,
} from "./slack-types.js";

export type * from "./slack-types.js";
export { DEFAULT_SCOPES } from "./slack-types.js";
export { slackSignature } from "./slack-events.js";

/** How long `slashCommand`'s `ack` and `waitForAck` wait by default, in ms. */
const ACK_TIMEOUT_MS = 5000;

/**
 * Fake Slack. `start()` it before building the Bolt `App` (its constructor calls auth.test),
 * point `clientOptions.slackApiUrl` at {@link apiUrl}, and `close()` it after `app.stop()`.
 */
export class FakeSlack {
  readonly teamId: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly appId: string;
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  readonly #options: FakeSlackOptions;
  readonly #now: () => number;
  readonly #store: SlackStore;
  readonly #files = new FileStore();
  readonly #hub: SocketHub;
  readonly #ids = new EventIds();
  readonly #ctx: MethodContext;
  readonly #posted: SlackMessage[] = [];
  readonly #statuses: RecordedStatus[] = [];
  readonly #currentStatus = new Map<string, string>();
  readonly #web: WebApi;
  #server: Server | undefined;
  #port: number | undefined;
  #closed = false;

  constructor(options: FakeSlackOptions = {}) {
    this.#options = options;
    this.teamId = options.teamId ?? "T0001";
    this.botUserId = options.botUserId ?? "UBOT";
    this.botId = options.botId ?? "B0001";
    this.appId = options.appId ?? "A0001";
    this.botToken = options.botToken ?? "xoxb-fake";
    this.appToken = options.appToken ?? "xapp-fake";
    this.signingSecret = options.signingSecret ?? "fake-signing-secret";
    this.#now = options.now ?? Date.now;
    this.#store = new SlackStore(this.#now, this.teamId);
    this.#store.addUser(botUser(this));
    this.#hub = new SocketHub({
      appId: this.appId,
      resendUnackedAfterMs: options.resendUnackedAfterMs ?? 0,
      maxRetryAttempts: options.maxRetryAttempts ?? 3,
    });
    this.#ctx = {
      store: this.#store,
      teamId: this.teamId,
      botUserId: this.botUserId,
      botId: this.botId,
      appId: this.appId,
      scopes: [...(options.scopes ?? DEFAULT_SCOPES)],
      assistantThreads: options.assistantThreads ?? false,
      onPosted: (message) => this.#onPosted(message),
      onStatus: (status) => {
        this.#statuses.push(status);
        const key = `${status.channel_id}/${status.thread_ts}`;
        if (status.status === "") this.#currentStatus.delete(key);
        else this.#currentStatus.set(key, status.status);
      },
    };
    this.#web = new WebApi({
      botToken: this.botToken,
      appToken: this.appToken,
      ctx: this.#ctx,
      files: this.#files,
      hub: this.#hub,
      now: this.#now,
      maxBodyBytes: options.maxBodyBytes ?? 5_000_000,
      base: () => this.#base(),
      port: () => this.#port ?? 0,
    });
  }

  /** Listens on 127.0.0.1 (the configured port, or an ephemeral one). */
  async start(): Promise<void> {
    if (this.#server) throw new Error("FakeSlack: already started");
    const server = createServer((req, res) => void this.#web.handle(req, res));
    server.on("upgrade", (req, socket, head) => {
      if (!this.#hub.handleUpgrade(req, socket, head)) socket.destroy();
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.#options.port ?? 0, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.#port = (server.address() as AddressInfo).port;
  }

  /** `http://127.0.0.1:PORT/api/`, the value for `clientOptions.slackApiUrl`. */
  get apiUrl(): string {
    return `${this.#base()}/api/`;
  }

  /** Closes sockets, hung requests and the server; rejects pending waits. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#hub.close();
    this.#web.close();
    const server = this.#server;
    if (!server?.listening) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  // ─── directory ───────────────────────────────────────────────────────────────────────────

  addUser(user: SlackUserInput): void {
    this.#store.addUser(user);
  }

  addChannel(channel: SlackChannelInput): void {
    this.#store.addChannel(channel);
  }

  /** Stores a file; put the returned object in a message's `files`. Needs `start()` first. */
  addFile(file: SlackFileInput): SlackFileObject {
    return this.#files.add(file, this.#base(), this.teamId, this.#nowSec());
  }

  // ─── inbound ─────────────────────────────────────────────────────────────────────────────

  /**
   * A message from a user: recorded in the channel's history and delivered as an `events_api`
   * envelope (with an `app_mention` twin when `also: "app_mention"`). Resolves once written to
   * a socket; with none open, it waits for the next connection (see {@link seedMessage}).
   */
  async userMessage(input: UserMessageInput): Promise<UserMessageResult> {
    const { event, ts } = recordUserMessage(this.#store, this.teamId, input);
    const first = await this.deliverEvent(event);
    const mention =
      input.also === "app_mention" ? await this.deliverEvent(appMentionEvent(event)) : undefined;
    return { eventId: first.eventId, ts, envelopeId: first.envelopeId, ...(mention ? { mention } : {}) };
  }

  /**
   * Records a user's message in the channel's history without delivering an event: history that
   * predates the app, or a thread to reply to when no app is connected.
   */
  seedMessage(input: Omit<UserMessageInput, "also">): { ts: string } {
    return { ts: recordUserMessage(this.#store, this.teamId, input).ts };
  }

  /** Edits a stored human message as its author would, and delivers the `message_changed` event. */
  editUserMessage(input: { channel: string; ts: string; text: string }): Promise<{
    eventId: string;
    envelopeId: string;
  }> {
    return this.deliverEvent(recordUserEdit(this.#store, input));
  }

  /** Delivers a raw event in an `event_callback` envelope; resolves once written to a socket. */
  async deliverEvent(
    event: object,
    options: { eventId?: string; retryAttempt?: number; via?: "socket" } = {},
  ): Promise<{ eventId: string; envelopeId: string }> {
    const eventId = options.eventId ?? this.#ids.eventId();
    const body = this.eventCallback(event, eventId);
    const { envelopeId, written } = this.#deliver("events_api", body, false, options.retryAttempt);
    await written;
    return { eventId, envelopeId };
  }

  /** Sends an envelope again (Slack's redelivery): retry_attempt as given, else one more. */
  redeliver(envelopeId: string, retryAttempt?: number): Promise<void> {
    return this.#hub.redeliver(envelopeId, retryAttempt);
  }

  /**
   * A `slash_commands` envelope (accepts_response_payload). `ack` resolves with the payload the
   * app acked with; the payload's response_url records POSTs (see {@link responses}).
   */
  async slashCommand(input: SlashCommandInput): Promise<{ envelopeId: string; ack: Promise<unknown> }> {
    const channel = this.#store.channel(input.channel);
    const responseUrl = this.#web.issueResponseUrl();
    const payload = slashCommandPayload({
      app: this.#identity(),
      command: input.command,
      text: input.text,
      user: input.user,
      userName: this.#store.user(input.user)?.name ?? input.user,
      channel: input.channel,
      channelName:
        input.channelName ??
        (channel?.info.kind === "im" ? "directmessage" : (channel?.info.name ?? "unknown")),
      responseUrl,
      triggerId: this.#ids.triggerId(),
    });
    const { envelopeId, written } = this.#deliver("slash_commands", payload, true);
    const ack = quiet(this.#hub.waitForAck(envelopeId, ACK_TIMEOUT_MS).then((a) => a.payload));
    await written;
    return { envelopeId, ack };
  }

  /** An `interactive` envelope (block_actions, view_submission…) with this payload. */
  async interaction(payload: object): Promise<{ envelopeId: string }> {
    const { envelopeId, written } = this.#deliver("interactive", payload, true);
    await written;
    return { envelopeId };
  }

  // ─── socket state ────────────────────────────────────────────────────────────────────────

  /** Envelope ids acked, in order (an id twice when acked twice). */
  get acked(): string[] {
    return this.#hub.acks.map((a) => a.envelope_id);
  }

  ackOf(envelopeId: string): { payload?: unknown } | undefined {
    return this.#hub.ackOf(envelopeId);
  }

  /** Resolves with the envelope's first ack; rejects after `timeoutMs` (default 5000). */
  async waitForAck(envelopeId: string, timeoutMs = ACK_TIMEOUT_MS): Promise<{ payload?: unknown }> {
    const { envelope_id: _id, ...rest } = await this.#hub.waitForAck(envelopeId, timeoutMs);
    return rest;
  }

  /** Open Socket Mode sockets. */
  connections(): number {
    return this.#hub.open;
  }

  /** Successful apps.connections.open calls so far. */
  connectionsOpened(): number {
    return this.#hub.opened;
  }

  /** Sends `{type:"disconnect", reason}` on the current socket; the client reconnects itself. */
  disconnect(reason: "refresh_requested" | "link_disabled" | "warning" = "refresh_requested"): Promise<void> {
    return this.#hub.disconnect(reason);
  }

  /** Terminates the current socket abruptly (no close frame). */
  dropConnection(): void {
    this.#hub.drop();
  }

  // ─── HTTP-mode delivery ──────────────────────────────────────────────────────────────────

  /** POSTs `body` to an app's endpoint, signed as Slack signs (override any part in `options`). */
  postEvent(
    url: string,
    body: object,
    options: PostEventOptions = {},
  ): Promise<{ status: number; body: string }> {
    return postSigned(url, body, { signingSecret: this.signingSecret, nowSec: this.#nowSec() }, options);
  }

  /** The `event_callback` body around `event` (fresh event id unless given). */
  eventCallback(event: object, eventId?: string): Record<string, unknown> {
    const id = eventId ?? this.#ids.eventId();
    return eventCallback(this.#identity(), event as Record<string, unknown>, id, this.#nowSec());
  }

  // ─── observation ─────────────────────────────────────────────────────────────────────────

  /** Web API requests received (every one, errors included), optionally of one method. */
  calls(method?: string): RecordedCall[] {
    return this.#web.calls
      .filter((c) => method === undefined || c.method === method)
      .map((c) => structuredClone(c));
  }

  /** Messages the bot posted with chat.postMessage, in order, as they are now (updates applied). */
  posted(channel?: string): SlackMessage[] {
    return this.#posted
      .filter((m) => channel === undefined || m.channel === channel)
      .map((m) => structuredClone(m));
  }

  /** Every message in the channel (human and bot, replies included), oldest first. */
  history(channel: string): SlackMessage[] {
    return this.#store.all(channel);
  }

  /** Reaction names on a message. */
  reactions(channel: string, ts: string): string[] {
    return (this.#store.find(channel, ts)?.reactions ?? []).map((r) => r.name);
  }

  /** Successful assistant.threads.setStatus calls, in order. */
  statuses(): RecordedStatus[] {
    return this.#statuses.map((s) => ({ ...s }));
  }

  /** The thread's status as a user would see it: cleared by "" or by a bot reply in the thread. */
  statusOf(channel: string, threadTs: string): string | undefined {
    return this.#currentStatus.get(`${channel}/${threadTs}`);
  }

  /** POSTs to response_urls, in order. */
  responses(): RecordedResponse[] {
    return this.#web.responses.map((r) => structuredClone(r));
  }

  // ─── faults ──────────────────────────────────────────────────────────────────────────────

  /** Calls `listener` for every Web API call answered `ok: true`; returns the unsubscribe. */
  onAnswered(listener: (method: string, params: Record<string, unknown>) => void): () => void {
    this.#web.answered.add(listener);
    return () => this.#web.answered.delete(listener);
  }

  /**
   * Answers the next `times` (default 1) calls of `method` with `fault`; FIFO per method. With
   * `when`, only calls whose parameters pass it (e.g. a post carrying a certain text).
   */
  failNext(method: string, fault: SlackFault, times = 1, when?: FaultPredicate): void {
    this.#web.failNext(method, fault, times, when);
  }

  /**
   * Calls `listener` for every Web API call carried out successfully, before its answer is
   * written or withheld (`hangAfter`), with what it returned; returns the unsubscribe.
   */
  onCarriedOut(
    listener: (method: string, params: Record<string, unknown>, result: Record<string, unknown>) => void,
  ): () => void {
    this.#web.carriedOut.add(listener);
    return () => this.#web.carriedOut.delete(listener);
  }

  // ─── helpers ─────────────────────────────────────────────────────────────────────────────

  #deliver(type: EnvelopeType, payload: unknown, acceptsResponsePayload: boolean, retryAttempt?: number) {
    if (this.#closed) throw new Error("FakeSlack is closed");
    return this.#hub.deliver(type, payload, acceptsResponsePayload, retryAttempt);
  }

  #onPosted(message: SlackMessage): void {
    this.#posted.push(message);
    if (message.thread_ts !== undefined)
      this.#currentStatus.delete(`${message.channel}/${message.thread_ts}`);
    if (this.#options.echoBotMessages) void quiet(this.deliverEvent(botMessageEvent(this.#store, message)));
  }

  #identity(): AppIdentity {
    return { teamId: this.teamId, appId: this.appId, botUserId: this.botUserId };
  }

  #base(): string {
    if (this.#port === undefined) throw new Error("FakeSlack: call start() first");
    return `http://127.0.0.1:${this.#port}`;
  }

  #nowSec(): number {
    return Math.floor(this.#now() / 1000);
  }
}
