/**
 * The fake Discord's REST endpoints for a bot token: gateway discovery, the bot user and its
 * application, channels, DMs, messages (send with Discord's validation, nonce dedupe and reply
 * rules; edit, fetch, history, delete), typing, and application command bulk overwrites.
 * Interaction callbacks and webhooks live in discord-interactions.ts.
 */
import { DiscordError, type ParsedBody, formError, unknownChannel, unknownMessage } from "./discord-http.js";
import { type MessageContext, applyEdit, botMessage } from "./discord-messages.js";
import type { ChannelRecord, DiscordMessage, EditRecord, SentRecord } from "./discord-types.js";
import { blankIfHidden, channelWire } from "./discord-wire.js";

/** A routed REST request. */
export interface RestRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: ParsedBody;
}

/** A handler's answer (`body` undefined: empty). */
export interface RestReply {
  status: number;
  body?: unknown;
}

/** One REST route; `template` uses `:name` segments, relative to `/api/v10`. */
export interface RouteDef {
  method: string;
  template: string;
  /** Whether `Authorization: Bot <token>` is required (interaction webhooks need none). */
  auth: boolean;
  handle(req: RestRequest): RestReply;
}

/** What the bot-token routes need from the fake. */
export interface RestContext extends MessageContext {
  appId: string;
  appName: string;
  appFlags: number;
  messageContentIntent: boolean;
  nonceWindowMs: number;
  /** "ws://127.0.0.1:PORT/gateway". */
  gatewayUrl(): string;
  identifies(): number;
  dispatchMessage(t: "MESSAGE_CREATE" | "MESSAGE_UPDATE", message: DiscordMessage): void;
  dispatchDelete(message: DiscordMessage): void;
  readonly sent: SentRecord[];
  readonly edits: EditRecord[];
  readonly typing: Map<string, number>;
}

const MAX_CONTENT = 2000;
const MAX_NONCE = 25;
const COMMAND_NAME = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;

function channelOr404(ctx: RestContext, id: string | undefined): ChannelRecord {
  const channel = id === undefined ? undefined : ctx.store.channel(id);
  if (!channel) throw unknownChannel();
  return channel;
}

function messageOr404(ctx: RestContext, channelId: string, id: string | undefined): DiscordMessage {
  const message = id === undefined ? undefined : ctx.store.message(channelId, id);
  if (!message) throw unknownMessage();
  return message;
}

/** Content checks shared by sends and edits: a string of at most 2000 characters. */
export function checkContent(content: unknown): void {
  if (content === undefined || content === null) return;
  if (typeof content !== "string")
    throw formError("content", "STRING_TYPE_CONVERT", "Could not interpret value as string.");
  if (content.length > MAX_CONTENT) {
    throw formError("content", "BASE_TYPE_MAX_LENGTH", `Must be ${MAX_CONTENT} or fewer in length.`);
  }
}

/** Whether a message body has nothing to show (Discord answers 50006). */
export function isEmptyMessage(body: Record<string, unknown>, fileCount: number): boolean {
  const nonEmpty = (v: unknown) => Array.isArray(v) && v.length > 0;
  return (
    (typeof body.content !== "string" || body.content.length === 0) &&
    !nonEmpty(body.embeds) &&
    !nonEmpty(body.sticker_ids) &&
    !nonEmpty(body.components) &&
    body.poll === undefined &&
    fileCount === 0
  );
}

function sendMessage(ctx: RestContext, req: RestRequest): RestReply {
  const channel = channelOr404(ctx, req.params.channel);
  const body = req.body.json;
  const files = req.body.files;
  const record: SentRecord = {
    channelId: channel.id,
    body: structuredClone(body),
    files: files.map(({ bytes, ...f }) => ({ ...f, size: bytes.length })),
    at: ctx.now(),
    status: 0,
    deduplicated: false,
  };
  ctx.sent.push(record);
  try {
    const reply = createMessage(ctx, channel, body, req.body, record);
    record.status = reply.status;
    return reply;
  } catch (error) {
    record.status = error instanceof DiscordError ? error.status : 500;
    throw error;
  }
}

function createMessage(
  ctx: RestContext,
  channel: ChannelRecord,
  body: Record<string, unknown>,
  parsed: ParsedBody,
  record: SentRecord,
): RestReply {
  checkContent(body.content);
  const nonce = body.nonce;
  if (nonce !== undefined && nonce !== null) {
    if (typeof nonce !== "string" && !Number.isInteger(nonce)) {
      throw formError("nonce", "NONCE_TYPE_INVALID", "Nonce must be an integer or a string.");
    }
    if (String(nonce).length > MAX_NONCE) {
      throw formError("nonce", "BASE_TYPE_MAX_LENGTH", `Must be ${MAX_NONCE} or fewer in length.`);
    }
  }
  if (isEmptyMessage(body, parsed.files.length))
    throw new DiscordError(400, 50006, "Cannot send an empty message");
  let replied: DiscordMessage | undefined;
  const reference = body.message_reference as Record<string, unknown> | undefined | null;
  if (reference && typeof reference === "object" && reference.message_id !== undefined) {
    const refChannel = typeof reference.channel_id === "string" ? reference.channel_id : channel.id;
    replied = ctx.store.message(refChannel, String(reference.message_id));
    if (!replied && reference.fail_if_not_exists !== false) {
      throw formError("message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message");
    }
  }
  const enforced = body.enforce_nonce === true && nonce !== undefined && nonce !== null;
  if (enforced) {
    const hit = ctx.store.nonceHit(channel.id, ctx.bot.id, String(nonce), ctx.nonceWindowMs);
    if (hit) {
      record.deduplicated = true;
      record.messageId = hit.id;
      return { status: 200, body: hit };
    }
  }
  const message = botMessage(ctx, channel.id, body, parsed.files, replied);
  if (enforced) ctx.store.rememberNonce(channel.id, ctx.bot.id, String(nonce), message.id);
  record.messageId = message.id;
  ctx.dispatchMessage("MESSAGE_CREATE", message);
  return { status: 200, body: message };
}

function editMessage(ctx: RestContext, req: RestRequest): RestReply {
  const channel = channelOr404(ctx, req.params.channel);
  const message = messageOr404(ctx, channel.id, req.params.message);
  if (message.author.id !== ctx.bot.id) {
    throw new DiscordError(403, 50005, "Cannot edit a message authored by another user");
  }
  const body = req.body.json;
  checkContent(body.content);
  applyEdit(ctx, message, body);
  ctx.edits.push({
    channelId: channel.id,
    messageId: message.id,
    body: structuredClone(body),
    at: ctx.now(),
  });
  ctx.dispatchMessage("MESSAGE_UPDATE", message);
  return { status: 200, body: message };
}

function history(ctx: RestContext, req: RestRequest): RestReply {
  const channel = channelOr404(ctx, req.params.channel);
  const rawLimit = req.query.get("limit");
  const limit = rawLimit === null ? 50 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw formError("limit", "NUMBER_TYPE_MAX", "int value should be less than or equal to 100.");
  }
  const pick = (key: string) => req.query.get(key) ?? undefined;
  const list = ctx.store.history(channel.id, {
    after: pick("after"),
    before: pick("before"),
    around: pick("around"),
    limit,
  });
  return { status: 200, body: list.map((m) => visible(ctx, m)) };
}

/** A message as REST shows it: blanked when the app lacks MessageContent and Discord hides it. */
function visible(ctx: RestContext, message: DiscordMessage): DiscordMessage {
  return ctx.messageContentIntent ? message : blankIfHidden(message, ctx.store, ctx.bot.id);
}

function putCommands(ctx: RestContext, req: RestRequest, guildId?: string): RestReply {
  if (req.params.app !== ctx.appId) throw new DiscordError(403, 50001, "Missing Access");
  if (guildId !== undefined && !ctx.store.guilds.has(guildId))
    throw new DiscordError(403, 50001, "Missing Access");
  if (req.method === "GET") return { status: 200, body: ctx.store.commands(guildId) };
  const value = req.body.value;
  let bodies: Array<Record<string, unknown>>;
  if (req.method === "POST") {
    const one = req.body.json;
    bodies = [...ctx.store.commands(guildId).filter((c) => c.name !== one.name), one];
  } else {
    if (!Array.isArray(value)) throw formError("_root", "BASE_TYPE_ARRAY", "Must be an array.");
    bodies = value as Array<Record<string, unknown>>;
  }
  bodies.forEach((command, i) => {
    const type = typeof command.type === "number" ? command.type : 1;
    const name = command.name;
    if (typeof name !== "string" || !COMMAND_NAME.test(name) || (type === 1 && name !== name.toLowerCase())) {
      throw formError(`${i}.name`, "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid");
    }
    const description = command.description;
    if (
      type === 1 &&
      (typeof description !== "string" || description.length < 1 || description.length > 100)
    ) {
      throw formError(`${i}.description`, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.");
    }
  });
  const stored = ctx.store.setCommands(guildId, ctx.appId, bodies);
  if (req.method === "POST") {
    const created = stored.find((c) => c.name === req.body.json.name);
    return { status: 201, body: created };
  }
  return { status: 200, body: stored };
}

/** The bot user as `/users/@me` answers it. */
function me(ctx: RestContext): Record<string, unknown> {
  return {
    ...ctx.bot,
    bot: true,
    verified: true,
    mfa_enabled: false,
    flags: 0,
    banner: null,
    accent_color: null,
    locale: "en-US",
    premium_type: 0,
    email: null,
  };
}

function application(ctx: RestContext): Record<string, unknown> {
  return {
    id: ctx.appId,
    name: ctx.appName,
    icon: null,
    description: "",
    summary: "",
    type: null,
    bot_public: true,
    bot_require_code_grant: false,
    verify_key: "0".repeat(64),
    flags: ctx.appFlags,
    team: null,
    owner: { ...ctx.bot },
    bot: { ...ctx.bot, bot: true },
    hook: true,
    tags: [],
    redirect_uris: [],
    interactions_endpoint_url: null,
    approximate_guild_count: ctx.store.guilds.size,
  };
}

/** The bot-token routes. */
export function restRoutes(ctx: RestContext): RouteDef[] {
  const ok = (body: unknown): RestReply => ({ status: 200, body });
  const route = (method: string, template: string, handle: (req: RestRequest) => RestReply): RouteDef => ({
    method,
    template,
    auth: true,
    handle,
  });
  return [
    { method: "GET", template: "/gateway", auth: false, handle: () => ok({ url: ctx.gatewayUrl() }) },
    route("GET", "/gateway/bot", () =>
      ok({
        url: ctx.gatewayUrl(),
        shards: 1,
        session_start_limit: {
          total: 1000,
          remaining: Math.max(1, 1000 - ctx.identifies()),
          reset_after: 14_400_000,
          max_concurrency: 1,
        },
      }),
    ),
    route("GET", "/users/@me", () => ok(me(ctx))),
    route("POST", "/users/@me/channels", (req) => {
      const id = String(req.body.json.recipient_id ?? "");
      if (!ctx.store.users.has(id)) throw new DiscordError(400, 50033, "Invalid Recipient(s)");
      return ok(channelWire(ctx.store.dmChannel(id), ctx.store));
    }),
    route("GET", "/users/:user", (req) => {
      const user = ctx.store.users.get(req.params.user ?? "");
      if (!user) throw new DiscordError(404, 10013, "Unknown User");
      return ok(user);
    }),
    route("GET", "/applications/@me", () => ok(application(ctx))),
    route("GET", "/oauth2/applications/@me", () => ok(application(ctx))),
    route("GET", "/channels/:channel", (req) =>
      ok(channelWire(channelOr404(ctx, req.params.channel), ctx.store)),
    ),
    route("GET", "/channels/:channel/messages", (req) => history(ctx, req)),
    route("POST", "/channels/:channel/messages", (req) => sendMessage(ctx, req)),
    route("GET", "/channels/:channel/messages/:message", (req) => {
      const channel = channelOr404(ctx, req.params.channel);
      return ok(visible(ctx, messageOr404(ctx, channel.id, req.params.message)));
    }),
    route("PATCH", "/channels/:channel/messages/:message", (req) => editMessage(ctx, req)),
    route("DELETE", "/channels/:channel/messages/:message", (req) => {
      const channel = channelOr404(ctx, req.params.channel);
      const message = messageOr404(ctx, channel.id, req.params.message);
      ctx.store.removeMessage(channel.id, message.id);
      ctx.dispatchDelete(message);
      return { status: 204 };
    }),
    route("POST", "/channels/:channel/typing", (req) => {
      const channel = channelOr404(ctx, req.params.channel);
      ctx.typing.set(channel.id, (ctx.typing.get(channel.id) ?? 0) + 1);
      return { status: 204 };
    }),
    route("GET", "/applications/:app/commands", (req) => putCommands(ctx, req)),
    route("PUT", "/applications/:app/commands", (req) => putCommands(ctx, req)),
    route("POST", "/applications/:app/commands", (req) => putCommands(ctx, req)),
    route("GET", "/applications/:app/guilds/:guild/commands", (req) =>
      putCommands(ctx, req, req.params.guild),
    ),
    route("PUT", "/applications/:app/guilds/:guild/commands", (req) =>
      putCommands(ctx, req, req.params.guild),
    ),
    route("POST", "/applications/:app/guilds/:guild/commands", (req) =>
      putCommands(ctx, req, req.params.guild),
    ),
  ];
}
