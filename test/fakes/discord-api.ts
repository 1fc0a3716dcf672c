/**
 * A fake Discord on 127.0.0.1 speaking the real wire protocols, so the real discord.js 14 client
 * (`@discordjs/rest`, `@discordjs/ws`) runs against it: REST API v10 under `/api/v10/`, the
 * gateway WebSocket at `/gateway`, and attachment bytes under `/cdn/`. Tests steer it in process
 * (users' messages, DMs, threads, slash commands, reconnects) and read what the bot did.
 */
import type { Server } from "node:http";
import { Dispatcher } from "./discord-dispatch.js";
import { Gateway } from "./discord-gateway.js";
import { Interactions } from "./discord-interactions.js";
import { type MessageContext, applyEdit, systemMessage, userMessage } from "./discord-messages.js";
import { type AnsweredListener, type CallFilter, RestApi } from "./discord-rest.js";
import { type RestContext, restRoutes } from "./discord-routes.js";
import { listen, stop } from "./discord-server.js";
import { DEFAULT_GUILDS, DiscordStore, userWire } from "./discord-store.js";
import type {
  ConnectionRecord,
  DiscordCommand,
  DiscordMessage,
  DiscordUser,
  EditRecord,
  FakeDiscordOptions,
  FaultMatch,
  InteractionCall,
  InteractionHandle,
  InteractionInput,
  RecordedCall,
  RestFault,
  SentRecord,
  ThreadInput,
  ThreadObject,
  UserInput,
  UserMessageInput,
} from "./discord-types.js";
import { Waits } from "./discord-waits.js";
import { MESSAGE_CONTENT_LIMITED_FLAG, channelWire, guildCreate } from "./discord-wire.js";

export type * from "./discord-types.js";

/** Told of a message the REST API created, edited or deleted (the bot's, an interaction's). */
export type MessageListener = (
  t: "MESSAGE_CREATE" | "MESSAGE_UPDATE" | "MESSAGE_DELETE",
  message: DiscordMessage,
) => void;
export type { AnsweredListener, CallFilter } from "./discord-rest.js";

export { DEFAULT_CHANNEL_ID, DEFAULT_GUILD_ID } from "./discord-store.js";

/** How long the `waitFor…` helpers wait by default, in ms. */
const WAIT_MS = 10_000;

/**
 * Fake Discord. `start()` it, point the client's `rest.api` at {@link apiUrl} (discord-client.ts
 * has the options and a per-test fixture), log in with {@link token}, await ClientReady, and
 * `client.destroy()` before `close()`.
 */
export class FakeDiscord {
  readonly token: string;
  readonly botUser: DiscordUser;
  readonly applicationId: string;
  readonly #options: FakeDiscordOptions;
  readonly #now: () => number;
  readonly #store: DiscordStore;
  readonly #waits = new Waits();
  readonly #gateway: Gateway;
  readonly #interactions: Interactions;
  readonly #rest: RestApi;
  readonly #ctx: RestContext;
  readonly #dispatch: Dispatcher;
  readonly #messageListeners = new Set<MessageListener>();
  #server: Server | undefined;
  #port: number | undefined;
  #closed = false;

  constructor(options: FakeDiscordOptions = {}) {
    this.#options = options;
    this.token = options.token ?? "fake-bot-token";
    const bot = options.botUser ?? { id: "100000000000000001", username: "switchyard" };
    this.botUser = userWire({ ...bot, bot: true });
    this.applicationId = options.applicationId ?? this.botUser.id;
    this.#now = options.now ?? Date.now;
    this.#store = new DiscordStore(this.#now);
    this.#store.users.set(this.botUser.id, this.botUser);
    for (const user of options.users ?? []) this.#store.learnUser(user);
    for (const guild of options.guilds ?? DEFAULT_GUILDS) this.#store.addGuild(guild, this.botUser.id);
    const messageContent = options.messageContentIntent ?? true;
    const appFlags = messageContent ? MESSAGE_CONTENT_LIMITED_FLAG : 0;
    const changed = () => this.#waits.notify();
    this.#dispatch = new Dispatcher({
      gateway: () => this.#gateway,
      store: this.#store,
      bot: this.botUser,
      application: { id: this.applicationId, flags: appFlags },
    });
    const messageCtx: MessageContext = {
      store: this.#store,
      bot: this.botUser,
      now: this.#now,
      base: () => this.#base(),
    };
    this.#ctx = {
      ...messageCtx,
      appId: this.applicationId,
      appName: options.applicationName ?? this.botUser.username,
      appFlags,
      messageContentIntent: messageContent,
      nonceWindowMs: options.nonceWindowMs ?? 5 * 60_000,
      gatewayUrl: () => `${this.#wsBase()}/gateway`,
      identifies: () => this.#gateway.identifies,
      dispatchMessage: (t, message) => {
        this.#dispatch.message(t, message);
        for (const listener of [...this.#messageListeners]) listener(t, structuredClone(message));
      },
      dispatchDelete: (message) => {
        this.#dispatch.delete(message);
        for (const listener of [...this.#messageListeners])
          listener("MESSAGE_DELETE", structuredClone(message));
      },
      sent: [],
      edits: [],
      typing: new Map(),
    };
    this.#gateway = new Gateway({
      token: this.token,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 500,
      messageContentAllowed: messageContent,
      now: this.#now,
      ready: () => this.#dispatch.ready(),
      guilds: () => [...this.#store.guilds.values()].map((g) => guildCreate(g, this.#store, this.botUser)),
      wsBase: () => this.#wsBase(),
      changed,
    });
    this.#interactions = new Interactions({
      ...messageCtx,
      appId: this.applicationId,
      responseWindowMs: options.interactionResponseWindowMs ?? 3000,
      dispatchMessage: this.#ctx.dispatchMessage,
      dispatchDelete: this.#ctx.dispatchDelete,
    });
    this.#rest = new RestApi({
      routes: [...restRoutes(this.#ctx), ...this.#interactions.routes()],
      token: this.token,
      store: this.#store,
      now: this.#now,
      changed,
    });
  }

  /** Listens on 127.0.0.1 (the configured port, or an ephemeral one). */
  async start(): Promise<void> {
    if (this.#server) throw new Error("FakeDiscord: already started");
    const { server, port } = await listen(
      this.#options.port ?? 0,
      (req, res) => this.#rest.handle(req, res),
      (req, socket, head) => this.#gateway.handleUpgrade(req, socket, head),
    );
    this.#server = server;
    this.#port = port;
  }

  /** `http://127.0.0.1:PORT/api`, the client's `rest.api` (discord.js appends `/v10`). */
  get apiUrl(): string {
    return `${this.#base()}/api`;
  }

  /** `ws://127.0.0.1:PORT/gateway`, what `GET /gateway/bot` answers. */
  get gatewayUrl(): string {
    return `${this.#wsBase()}/gateway`;
  }

  /**
   * Closes the gateway sockets with `gatewayCloseCode` (default 4004, which discord.js does not
   * retry, so a client left running stops instead of reconnecting forever), drops hung requests,
   * rejects pending waits and unanswered interactions, and stops the server. Idempotent.
   */
  async close(options: { gatewayCloseCode?: number } = {}): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#waits.close();
    this.#interactions.close();
    await this.#gateway.close(options.gatewayCloseCode ?? 4004, "FakeDiscord closed");
    this.#rest.close();
    await stop(this.#server);
  }

  // ─── steering ────────────────────────────────────────────────────────────────────────────

  /** Adds a user the fake knows (for mentions, DMs and `GET /users/:id`). */
  addUser(user: UserInput): DiscordUser {
    return this.#store.learnUser(user);
  }

  /**
   * A user's message in a guild channel or thread: stored and dispatched as MESSAGE_CREATE to
   * every live session (held for RESUME while a session has no socket). Returns the message.
   */
  userMessage(input: UserMessageInput): DiscordMessage {
    this.#open();
    const message = userMessage(this.#ctx, input);
    this.#dispatch.message("MESSAGE_CREATE", message);
    return structuredClone(message);
  }

  /** A user's DM to the bot (the DM channel is created on first use). Returns the message. */
  dm(input: Omit<UserMessageInput, "channelId" | "guildId">): DiscordMessage {
    this.#store.learnUser(input.author);
    return this.userMessage({ ...input, channelId: this.dmChannelOf(input.author.id) });
  }

  /** The DM channel id with this user (created on first use). */
  dmChannelOf(userId: string): string {
    if (!this.#store.users.has(userId))
      this.#store.learnUser({ id: userId, username: `user${userId.slice(-4)}` });
    return this.#store.dmChannel(userId).id;
  }

  /** Edits a stored message as its author would; dispatches MESSAGE_UPDATE. */
  editUserMessage(channelId: string, id: string, content: string): DiscordMessage {
    this.#open();
    const message = this.#store.message(channelId, id);
    if (!message) throw new Error(`FakeDiscord: no message ${id} in ${channelId}`);
    applyEdit(this.#ctx, message, { content });
    this.#dispatch.message("MESSAGE_UPDATE", message);
    return structuredClone(message);
  }

  /** Deletes a stored message as a user or moderator would; dispatches MESSAGE_DELETE. */
  deleteUserMessage(channelId: string, id: string): void {
    const message = this.#store.message(channelId, id);
    if (!message) throw new Error(`FakeDiscord: no message ${id} in ${channelId}`);
    this.#store.removeMessage(channelId, id);
    this.#dispatch.delete(message);
  }

  /** A system message (type 7: a member joined, …) by `author` (default a fresh user). */
  systemMessage(channelId: string, type: number, author?: UserInput): DiscordMessage {
    this.#open();
    const who = author ?? { id: this.#store.ids.next(), username: "newcomer" };
    const message = systemMessage(this.#ctx, channelId, type, who);
    this.#dispatch.message("MESSAGE_CREATE", message);
    return structuredClone(message);
  }

  /** A public thread (type 11) under a guild text channel; dispatches THREAD_CREATE. Returns its channel object. */
  createThread(input: ThreadInput): ThreadObject {
    this.#open();
    const thread = this.#store.addThread({
      id: input.id ?? this.#store.ids.next(),
      parentId: input.parentId,
      name: input.name,
      ownerId: input.ownerId ?? this.#store.ids.next(),
      type: input.type ?? 11,
    });
    const wire = { ...channelWire(thread, this.#store), newly_created: true } as ThreadObject;
    this.#dispatch.thread(wire);
    return wire;
  }

  /**
   * A slash command (APPLICATION_COMMAND interaction) dispatched as INTERACTION_CREATE. The
   * handle's `response` resolves with the final answer (type 4, or the @original edit after a 5).
   */
  interaction(input: InteractionInput): InteractionHandle {
    this.#open();
    const { handle, payload } = this.#interactions.create(input);
    this.#dispatch.interaction(payload);
    return handle;
  }

  // ─── gateway control ─────────────────────────────────────────────────────────────────────

  /** Sends op 7 RECONNECT; resolves once the client has closed the socket (it then resumes). */
  reconnect(): Promise<void> {
    return this.#gateway.reconnect();
  }

  /** The next RESUME also replays the last `events` events the client already received. */
  replayOnResume(events: number): void {
    this.#gateway.replayOverlap = events;
  }

  /** Sends op 9 INVALID_SESSION (`resumable` false: the session is gone, the client re-identifies). */
  invalidSession(resumable: boolean): void {
    this.#gateway.invalidSession(resumable);
  }

  /** Terminates the gateway socket without a close frame (the client resumes). */
  dropConnection(): void {
    this.#gateway.drop();
  }

  /** Successful IDENTIFYs. */
  get identifies(): number {
    return this.#gateway.identifies;
  }

  /** Successful RESUMEs. */
  get resumes(): number {
    return this.#gateway.resumes;
  }

  /** Open gateway sockets. */
  connections(): number {
    return this.#gateway.open;
  }

  /** Every gateway socket accepted, in order (path, query, and the code it was refused with). */
  connectionLog(): ConnectionRecord[] {
    return structuredClone(this.#gateway.connections);
  }

  /** IDENTIFY payloads received (token removed): intents, properties, shard, presence. */
  identifyPayloads(): Array<Record<string, unknown>> {
    return structuredClone(this.#gateway.identifyPayloads);
  }

  /** Gateway frames received from clients (`d` of IDENTIFY/RESUME elided). */
  gatewayFrames(): Array<{ op: unknown; d: unknown }> {
    return structuredClone(this.#gateway.received);
  }

  /** Resolves once `resumes` reaches `count` (default one more than now). */
  waitForResume(count = this.resumes + 1, timeoutMs = WAIT_MS): Promise<void> {
    return this.#waits.waitFor(() => this.resumes >= count, timeoutMs, `${count} resume(s)`);
  }

  /** Resolves once `identifies` reaches `count` (default one more than now). */
  waitForIdentify(count = this.identifies + 1, timeoutMs = WAIT_MS): Promise<void> {
    return this.#waits.waitFor(() => this.identifies >= count, timeoutMs, `${count} identify(s)`);
  }

  /** Resolves once `count` gateway sockets have been accepted in all (default one more than now). */
  waitForConnection(count = this.#gateway.opened + 1, timeoutMs = WAIT_MS): Promise<void> {
    return this.#waits.waitFor(() => this.#gateway.opened >= count, timeoutMs, `${count} connection(s)`);
  }

  /** Resolves once `predicate` holds, re-checked after every REST answer and gateway event. */
  waitFor(predicate: () => boolean, timeoutMs = WAIT_MS, what = "a condition"): Promise<void> {
    return this.#waits.waitFor(predicate, timeoutMs, what);
  }

  // ─── observation ─────────────────────────────────────────────────────────────────────────

  /** A channel's stored messages (users', the bot's, non-ephemeral interaction replies), oldest first. */
  messages(channelId: string): DiscordMessage[] {
    return structuredClone(this.#store.messages(channelId));
  }

  /** Messages the bot authored (in one channel, or everywhere), oldest first. */
  botMessages(channelId?: string): DiscordMessage[] {
    const all = channelId === undefined ? this.#store.allMessages() : this.#store.messages(channelId);
    return structuredClone(all.filter((m) => m.author.id === this.botUser.id));
  }

  /** Every `POST /channels/:id/messages` that reached the handler: raw body, channel, time, outcome. */
  get sent(): SentRecord[] {
    return structuredClone(this.#ctx.sent);
  }

  /** Successful edits of the bot's messages. */
  get edits(): EditRecord[] {
    return structuredClone(this.#ctx.edits);
  }

  /** `POST /channels/:id/typing` calls for this channel. */
  typingCount(channelId: string): number {
    return this.#ctx.typing.get(channelId) ?? 0;
  }

  /** REST calls received (every one, errors included), optionally filtered by method, path, route. */
  calls(filter: CallFilter = {}): RecordedCall[] {
    return structuredClone(this.#rest.filtered(filter));
  }

  /** Registered application commands: global, or one guild's. */
  commands(guildId?: string): DiscordCommand[] {
    return structuredClone(this.#store.commands(guildId));
  }

  /** REST calls made for an interaction (callback, edits, followups), in order. */
  interactionCalls(id: string): InteractionCall[] {
    return this.#interactions.calls(id);
  }

  /**
   * Calls `listener` whenever a REST request created, edited or deleted a message (the bot's
   * posts, edits and deletions), as the fake stores it and before the answer is written (or
   * withheld by a `hangAfter` fault); returns the unsubscribe.
   */
  onMessage(listener: MessageListener): () => void {
    this.#messageListeners.add(listener);
    return () => this.#messageListeners.delete(listener);
  }

  /** Calls `listener` after each REST response is written; returns the unsubscribe. */
  onAnswered(listener: AnsweredListener): () => void {
    this.#rest.answered.add(listener);
    return () => this.#rest.answered.delete(listener);
  }

  // ─── faults ──────────────────────────────────────────────────────────────────────────────

  /** Answers the next `times` REST requests matching `match` with `fault` (see {@link RestFault}). */
  failNext(match: FaultMatch, fault: RestFault, times = 1): void {
    this.#rest.failNext(match, fault, times);
  }

  // ─── helpers ─────────────────────────────────────────────────────────────────────────────

  #open(): void {
    if (this.#closed) throw new Error("FakeDiscord is closed");
  }

  #base(): string {
    if (this.#port === undefined) throw new Error("FakeDiscord: call start() first");
    return `http://127.0.0.1:${this.#port}`;
  }

  #wsBase(): string {
    return this.#base().replace(/^http:/, "ws:");
  }
}
