/**
 * Slash-command interactions for the fake Discord: the INTERACTION_CREATE payload a test sends,
 * and the token-authenticated endpoints the app answers on (`POST /interactions/:id/:token/callback`,
 * `GET|PATCH|DELETE /webhooks/:app/:token/messages/:message`, `POST /webhooks/:app/:token`), with
 * Discord's 3-second initial-response window, single acknowledgement and ephemeral messages.
 */
import { randomBytes } from "node:crypto";
import { DiscordError, formError, unknownMessage } from "./discord-http.js";
import { type MessageContext, applyEdit, blankMessage } from "./discord-messages.js";
import {
  type RestReply,
  type RestRequest,
  type RouteDef,
  checkContent,
  isEmptyMessage,
} from "./discord-routes.js";
import type {
  DiscordMessage,
  DiscordUser,
  InteractionCall,
  InteractionHandle,
  InteractionInput,
  InteractionResponse,
} from "./discord-types.js";
import { EPHEMERAL, LOADING, channelWire, memberWire } from "./discord-wire.js";

/** Interaction webhook tokens stay valid this long (15 minutes, as Discord). */
const WEBHOOK_TOKEN_MS = 15 * 60_000;

/** What interactions need from the fake. */
export interface InteractionContext extends MessageContext {
  appId: string;
  responseWindowMs: number;
  dispatchMessage(t: "MESSAGE_CREATE" | "MESSAGE_UPDATE", message: DiscordMessage): void;
  dispatchDelete(message: DiscordMessage): void;
}

/** An interaction the fake sent, and how it has been answered so far. */
interface PendingInteraction {
  readonly id: string;
  readonly token: string;
  readonly name: string;
  readonly channelId: string;
  readonly guildId: string | undefined;
  readonly user: DiscordUser;
  readonly createdAt: number;
  state: "pending" | "deferred" | "replied";
  original: DiscordMessage | undefined;
  readonly followups: DiscordMessage[];
  readonly calls: InteractionCall[];
  settled: boolean;
  resolve(response: InteractionResponse): void;
  reject(error: Error): void;
}

/** Options as name → value become typed option objects (string 3, integer 4, number 10, boolean 5). */
function normalizeOptions(options: InteractionInput["options"]): Array<Record<string, unknown>> {
  if (!options) return [];
  if (Array.isArray(options)) return options;
  return Object.entries(options).map(([name, value]) => ({
    name,
    value,
    type: typeof value === "boolean" ? 5 : typeof value === "number" ? (Number.isInteger(value) ? 4 : 10) : 3,
  }));
}

/** Interactions sent by tests, and the endpoints that answer them. */
export class Interactions {
  readonly #ctx: InteractionContext;
  readonly #byId = new Map<string, PendingInteraction>();
  readonly #byToken = new Map<string, PendingInteraction>();

  constructor(ctx: InteractionContext) {
    this.#ctx = ctx;
  }

  /** Registers an interaction; returns its handle and the INTERACTION_CREATE payload to dispatch. */
  create(input: InteractionInput): { handle: InteractionHandle; payload: Record<string, unknown> } {
    const { store } = this.#ctx;
    const channel = store.channel(input.channelId);
    if (!channel) throw new Error(`FakeDiscord: no channel ${input.channelId}`);
    const guildId = input.guildId ?? channel.guildId;
    const guild = guildId ? store.guilds.get(guildId) : undefined;
    const user = store.learnUser(input.user);
    const command = store.commandNamed(input.name, guildId);
    const options = normalizeOptions(input.options);
    const id = input.id ?? store.ids.next();
    const token = `aW50ZXJhY3Rpb246${id}:${randomBytes(48).toString("base64url")}`;
    let resolve!: (response: InteractionResponse) => void;
    let reject!: (error: Error) => void;
    const response = new Promise<InteractionResponse>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    response.catch(() => {});
    const record: PendingInteraction = {
      id,
      token,
      name: input.name,
      channelId: channel.id,
      guildId,
      user,
      createdAt: this.#ctx.now(),
      state: "pending",
      original: undefined,
      followups: [],
      calls: [],
      settled: false,
      resolve,
      reject,
    };
    this.#byId.set(id, record);
    this.#byToken.set(token, record);
    const permissions = guild?.everyonePermissions ?? "0";
    const payload: Record<string, unknown> = {
      id,
      application_id: this.#ctx.appId,
      type: 2,
      token,
      version: 1,
      data: {
        id: command?.id ?? store.ids.next(),
        name: input.name,
        type: 1,
        ...(options.length > 0 ? { options } : {}),
        ...(command?.guild_id ? { guild_id: command.guild_id } : {}),
      },
      channel_id: channel.id,
      channel: channelWire(channel, store),
      ...(guildId
        ? {
            guild_id: guildId,
            guild: { id: guildId, locale: "en-US", features: [] },
            guild_locale: "en-US",
            member: memberWire(guild?.joinedAt ?? 0, user, permissions),
          }
        : { user }),
      app_permissions: permissions === "0" ? "2248473465835073" : permissions,
      locale: input.locale ?? "en-US",
      entitlements: [],
      authorizing_integration_owners: guildId ? { "0": guildId } : {},
      context: guildId ? 0 : 1,
      attachment_size_limit: 10_485_760,
    };
    return { handle: { id, token, response }, payload };
  }

  /** Calls made for an interaction, in order. */
  calls(id: string): InteractionCall[] {
    return structuredClone(this.#byId.get(id)?.calls ?? []);
  }

  /** Rejects every unanswered interaction's response. */
  close(): void {
    for (const record of this.#byId.values()) {
      if (!record.settled) record.reject(new Error("FakeDiscord closed before the interaction was answered"));
      record.settled = true;
    }
  }

  routes(): RouteDef[] {
    const route = (
      method: string,
      template: string,
      kind: InteractionCall["kind"],
      handle: (req: RestRequest, record: PendingInteraction) => RestReply,
    ): RouteDef => ({
      method,
      template,
      auth: false,
      handle: (req) => this.#recorded(req, kind, handle),
    });
    return [
      route("POST", "/interactions/:interaction/:token/callback", "callback", (req, r) =>
        this.#callback(req, r),
      ),
      route("GET", "/webhooks/:app/:token/messages/:message", "fetch", (req, r) => ({
        status: 200,
        body: this.#target(r, req.params.message),
      })),
      route("PATCH", "/webhooks/:app/:token/messages/:message", "edit", (req, r) => this.#edit(req, r)),
      route("DELETE", "/webhooks/:app/:token/messages/:message", "delete", (req, r) => this.#delete(req, r)),
      route("POST", "/webhooks/:app/:token", "followup", (req, r) => this.#followup(req, r)),
    ];
  }

  // ─── handlers ────────────────────────────────────────────────────────────────────────────

  /** Finds the interaction (by id+token or webhook token), runs `handle`, records the call. */
  #recorded(
    req: RestRequest,
    kind: InteractionCall["kind"],
    handle: (req: RestRequest, record: PendingInteraction) => RestReply,
  ): RestReply {
    const { interaction, token, app } = req.params;
    const record = token === undefined ? undefined : this.#byToken.get(token);
    const now = this.#ctx.now();
    let status = 0;
    try {
      if (kind === "callback") {
        if (!record || record.id !== interaction) throw new DiscordError(404, 10062, "Unknown interaction");
      } else {
        if (!record || app !== this.#ctx.appId) throw new DiscordError(404, 10015, "Unknown Webhook");
        if (now - record.createdAt > WEBHOOK_TOKEN_MS)
          throw new DiscordError(401, 50027, "Invalid Webhook Token");
      }
      const reply = handle(req, record);
      status = reply.status;
      return reply;
    } catch (error) {
      status = error instanceof DiscordError ? error.status : 500;
      throw error;
    } finally {
      record?.calls.push({ kind, body: structuredClone(req.body.value), status, at: now });
    }
  }

  #callback(req: RestRequest, record: PendingInteraction): RestReply {
    if (record.state !== "pending") {
      throw new DiscordError(400, 40060, "Interaction has already been acknowledged.");
    }
    if (this.#ctx.now() - record.createdAt > this.#ctx.responseWindowMs) {
      throw new DiscordError(404, 10062, "Unknown interaction");
    }
    const body = req.body.json;
    const data = (typeof body.data === "object" && body.data !== null ? body.data : {}) as Record<
      string,
      unknown
    >;
    const flags = typeof data.flags === "number" ? data.flags : 0;
    let message: DiscordMessage | undefined;
    switch (body.type) {
      case 4: {
        checkContent(data.content);
        if (isEmptyMessage(data, req.body.files.length))
          throw new DiscordError(400, 50006, "Cannot send an empty message");
        message = this.#message(record, data, flags);
        record.original = message;
        record.state = "replied";
        this.#settle(record, message);
        break;
      }
      case 5:
        message = this.#message(record, {}, flags | LOADING);
        record.original = message;
        record.state = "deferred";
        break;
      case 9:
        record.state = "replied";
        break;
      default:
        throw formError("type", "BASE_TYPE_CHOICES", "Value must be one of {4, 5, 9}.");
    }
    if (req.query.get("with_response") !== "true") return { status: 204 };
    return {
      status: 200,
      body: {
        interaction: {
          id: record.id,
          type: 2,
          ...(message
            ? {
                response_message_id: message.id,
                response_message_loading: (message.flags & LOADING) !== 0,
                response_message_ephemeral: (message.flags & EPHEMERAL) !== 0,
              }
            : {}),
        },
        resource: { type: body.type, ...(message ? { message } : {}) },
      },
    };
  }

  #target(record: PendingInteraction, id: string | undefined): DiscordMessage {
    const target =
      id === "@original"
        ? record.original
        : (record.followups.find((m) => m.id === id) ??
          (record.original?.id === id ? record.original : undefined));
    if (!target) throw unknownMessage();
    return target;
  }

  #edit(req: RestRequest, record: PendingInteraction): RestReply {
    const target = this.#target(record, req.params.message);
    const body = req.body.json;
    checkContent(body.content);
    const firstAfterDefer = target === record.original && record.state === "deferred";
    applyEdit(this.#ctx, target, body);
    target.flags &= ~LOADING;
    if (firstAfterDefer) {
      target.edited_timestamp = null;
      record.state = "replied";
      this.#settle(record, target);
    }
    if (!(target.flags & EPHEMERAL)) this.#ctx.dispatchMessage("MESSAGE_UPDATE", target);
    return { status: 200, body: target };
  }

  #delete(req: RestRequest, record: PendingInteraction): RestReply {
    const target = this.#target(record, req.params.message);
    if (target === record.original) record.original = undefined;
    else record.followups.splice(record.followups.indexOf(target), 1);
    if (this.#ctx.store.removeMessage(target.channel_id, target.id)) this.#ctx.dispatchDelete(target);
    return { status: 204 };
  }

  #followup(req: RestRequest, record: PendingInteraction): RestReply {
    if (record.state === "pending") throw new DiscordError(404, 10015, "Unknown Webhook");
    const body = req.body.json;
    checkContent(body.content);
    if (isEmptyMessage(body, req.body.files.length))
      throw new DiscordError(400, 50006, "Cannot send an empty message");
    const message = this.#message(record, body, typeof body.flags === "number" ? body.flags : 0);
    record.followups.push(message);
    return req.query.get("wait") === "false" ? { status: 204 } : { status: 200, body: message };
  }

  // ─── helpers ─────────────────────────────────────────────────────────────────────────────

  /** An interaction response message; non-ephemeral ones are stored and dispatched. */
  #message(record: PendingInteraction, data: Record<string, unknown>, flags: number): DiscordMessage {
    const ctx = this.#ctx;
    const content = typeof data.content === "string" ? data.content : "";
    const message = blankMessage(ctx, ctx.store.ids.next(), record.channelId, ctx.bot, content);
    message.type = 20;
    message.flags = flags & (EPHEMERAL | LOADING | (1 << 2) | (1 << 12));
    message.embeds = Array.isArray(data.embeds) ? data.embeds : [];
    message.components = Array.isArray(data.components) ? data.components : [];
    message.webhook_id = ctx.appId;
    message.application_id = ctx.appId;
    message.interaction_metadata = {
      id: record.id,
      type: 2,
      name: record.name,
      command_type: 1,
      user: record.user,
      authorizing_integration_owners: record.guildId ? { "0": record.guildId } : {},
    };
    if (!(message.flags & EPHEMERAL)) {
      ctx.store.addMessage(message);
      ctx.dispatchMessage("MESSAGE_CREATE", message);
    }
    return message;
  }

  #settle(record: PendingInteraction, message: DiscordMessage): void {
    if (record.settled) return;
    record.settled = true;
    record.resolve({ content: message.content, flags: message.flags & ~LOADING });
  }
}
