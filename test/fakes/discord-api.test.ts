/**
 * The fake Discord's REST side (messages, validation, faults, attachments, threads, application
 * commands, interactions), driven through the real discord.js 14 client. The gateway side
 * (login, intents, resume, close codes) is in discord-gateway.test.ts.
 */
import { once } from "node:events";
import {
  ChannelType,
  DiscordAPIError,
  Events,
  HTTPError,
  type Message,
  MessageFlags,
  type RateLimitData,
  Routes,
  type TextChannel,
} from "discord.js";
import { beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_CHANNEL_ID, DEFAULT_GUILD_ID, type DiscordMessage, FakeDiscord } from "./discord-api.js";
import { nextMessage, rejection, useFakeDiscord } from "./discord-client.js";

const ANN = { id: "400000000000000001", username: "ann", global_name: "Ann" };
const t = useFakeDiscord({ heartbeatIntervalMs: 300, users: [ANN] });
let fake: FakeDiscord;
beforeEach(() => {
  fake = t.fake;
});

describe("FakeDiscord messages", () => {
  it("delivers a guild message and a DM (Partials.Channel) to messageCreate", async () => {
    const client = await t.ready();
    const inGuild = nextMessage(client);
    fake.userMessage({ channelId: DEFAULT_CHANNEL_ID, author: ANN, content: "hello there" });
    const guildMessage = await inGuild;
    expect(guildMessage.content).toBe("hello there");
    expect(guildMessage.guildId).toBe(DEFAULT_GUILD_ID);
    expect(guildMessage.author.bot).toBe(false);
    expect(guildMessage.member?.id).toBe(ANN.id);

    const inDm = nextMessage(client);
    const sent = fake.dm({ author: ANN, content: "psst" });
    const dm = await inDm;
    expect(dm.channel.type).toBe(ChannelType.DM);
    expect(dm.channelId).toBe(fake.dmChannelOf(ANN.id));
    expect(dm.id).toBe(sent.id);
    expect(dm.content).toBe("psst");
    expect(dm.guildId).toBeNull();
  });

  it("sends with nonce + enforce_nonce twice: one message, the same id, and one bot echo", async () => {
    const client = await t.ready();
    const original = fake.userMessage({ channelId: DEFAULT_CHANNEL_ID, author: ANN, content: "question" });
    const echo = nextMessage(client, (m) => m.author.id === fake.botUser.id);
    const body = {
      content: "answer",
      nonce: "switchyard-0001",
      enforce_nonce: true,
      allowed_mentions: { parse: ["users"], replied_user: false },
      message_reference: { message_id: original.id, fail_if_not_exists: false },
    };
    const first = (await client.rest.post(Routes.channelMessages(DEFAULT_CHANNEL_ID), {
      body,
    })) as DiscordMessage;
    const second = (await client.rest.post(Routes.channelMessages(DEFAULT_CHANNEL_ID), {
      body,
    })) as DiscordMessage;
    expect(second.id).toBe(first.id);
    expect(first).toMatchObject({ nonce: "switchyard-0001", type: 19, content: "answer" });
    expect(first.referenced_message?.id).toBe(original.id);
    expect(first.mentions).toEqual([]);
    expect(fake.botMessages(DEFAULT_CHANNEL_ID)).toHaveLength(1);
    expect(fake.sent.map((s) => s.deduplicated)).toEqual([false, true]);
    expect(fake.sent[0]?.body).toEqual(body);
    const bot = await echo;
    expect(bot.author.bot).toBe(true);
    expect(bot.id).toBe(first.id);
    expect(bot.reference?.messageId).toBe(original.id);
  });

  it("answers Discord's validation errors as DiscordAPIError", async () => {
    const client = await t.ready();
    const post = (channel: string, body: unknown) =>
      rejection(client.rest.post(Routes.channelMessages(channel), { body }));
    const unknown = await post("399999999999999999", { content: "x" });
    expect(unknown).toBeInstanceOf(DiscordAPIError);
    expect(unknown).toMatchObject({ code: 10003, status: 404, message: "Unknown Channel" });
    expect(await post(DEFAULT_CHANNEL_ID, { content: "x".repeat(2001) })).toMatchObject({
      code: 50035,
      status: 400,
    });
    expect(await post(DEFAULT_CHANNEL_ID, { content: "x", nonce: "n".repeat(26) })).toMatchObject({
      code: 50035,
    });
    expect(await post(DEFAULT_CHANNEL_ID, { content: "" })).toMatchObject({ code: 50006 });
    const badEdit = rejection(
      client.rest.patch(Routes.channelMessage(DEFAULT_CHANNEL_ID, "1"), { body: { content: "y" } }),
    );
    expect(await badEdit).toMatchObject({ code: 10008, status: 404 });
  });

  it("edits, types and pages history newest first", async () => {
    const client = await t.ready();
    const first = fake.userMessage({ channelId: DEFAULT_CHANNEL_ID, author: ANN, content: "one" });
    fake.userMessage({ channelId: DEFAULT_CHANNEL_ID, author: ANN, content: "two" });
    await client.rest.post(Routes.channelTyping(DEFAULT_CHANNEL_ID));
    const sent = (await client.rest.post(Routes.channelMessages(DEFAULT_CHANNEL_ID), {
      body: { content: "three" },
    })) as DiscordMessage;
    const updated = once(client, Events.MessageUpdate);
    const edited = (await client.rest.patch(Routes.channelMessage(DEFAULT_CHANNEL_ID, sent.id), {
      body: { content: "three!" },
    })) as DiscordMessage;
    expect(edited.edited_timestamp).not.toBeNull();
    const [, after] = (await updated) as [Message, Message];
    expect(after.content).toBe("three!");
    expect(fake.edits).toMatchObject([{ messageId: sent.id, body: { content: "three!" } }]);
    expect(fake.typingCount(DEFAULT_CHANNEL_ID)).toBe(1);
    const page = (await client.rest.get(Routes.channelMessages(DEFAULT_CHANNEL_ID), {
      query: new URLSearchParams({ after: first.id, limit: "100" }),
    })) as DiscordMessage[];
    expect(page.map((m) => m.content)).toEqual(["three!", "two"]);
  });

  it("retries a 429 (Reset-After 0.05 s) transparently and posts once", async () => {
    const client = await t.ready();
    const limits: RateLimitData[] = [];
    client.rest.on("rateLimited", (info) => limits.push(info));
    fake.failNext({ method: "POST", route: "/channels/:id/messages" }, { status: 429, retryAfterSec: 0.05 });
    const sent = (await client.rest.post(Routes.channelMessages(DEFAULT_CHANNEL_ID), {
      body: { content: "patient" },
    })) as DiscordMessage;
    expect(sent.content).toBe("patient");
    expect(fake.calls({ method: "POST", route: "/channels/:channel/messages" }).map((c) => c.status)).toEqual(
      [429, 200],
    );
    expect(fake.botMessages(DEFAULT_CHANNEL_ID)).toHaveLength(1);
    expect(limits).toHaveLength(1);
    expect(limits[0]).toMatchObject({ global: false, method: "POST" });
    expect(limits[0]?.retryAfter).toBeLessThanOrEqual(50);
    fake.failNext({ route: /\/typing$/ }, { status: 429, retryAfterSec: 0.05, global: true });
    await client.rest.post(Routes.channelTyping(DEFAULT_CHANNEL_ID));
    expect(limits[1]).toMatchObject({ global: true });
    expect(fake.typingCount(DEFAULT_CHANNEL_ID)).toBe(1);
  });

  it("injects a 500, a carried-out-but-unanswered send, and 404s unknown routes", async () => {
    const client = await t.ready();
    fake.failNext({ route: /\/typing$/ }, { status: 500 });
    expect(await rejection(client.rest.post(Routes.channelTyping(DEFAULT_CHANNEL_ID)))).toBeInstanceOf(
      HTTPError,
    );
    fake.failNext({ method: "POST", route: `/channels/${DEFAULT_CHANNEL_ID}/messages` }, { hangAfter: true });
    const echo = nextMessage(client, (m) => m.author.id === fake.botUser.id);
    const abort = new AbortController();
    const hung = rejection(
      client.rest.post(Routes.channelMessages(DEFAULT_CHANNEL_ID), {
        body: { content: "lost" },
        signal: abort.signal,
      }),
    );
    expect((await echo).content).toBe("lost"); // Stored and echoed, but the POST never gets an answer.
    abort.abort();
    await hung;
    expect(fake.calls({ route: "/channels/:channel/messages" }).map((c) => c.status)).toEqual([0]);
    expect(await rejection(client.rest.get("/nope/1"))).toMatchObject({ status: 404, code: 0 });
    expect(fake.calls({ path: "/nope/1" })).toHaveLength(1);
  });

  it("a fault with `when` takes only matching bodies; onMessage reports the bot's writes as stored", async () => {
    const client = await t.ready();
    const seen: string[] = [];
    const off = fake.onMessage((type, message) => seen.push(`${type} ${message.content}`));
    const route = `/channels/${DEFAULT_CHANNEL_ID}/messages`;
    fake.failNext(
      { method: "POST", route, when: (body) => (body as { content?: string }).content === "hang" },
      { hangAfter: true },
    );
    const sent = (await client.rest.post(Routes.channelMessages(DEFAULT_CHANNEL_ID), {
      body: { content: "pass" },
    })) as DiscordMessage;
    await client.rest.patch(Routes.channelMessage(DEFAULT_CHANNEL_ID, sent.id), {
      body: { content: "edited" },
    });
    const abort = new AbortController();
    const hung = rejection(
      client.rest.post(Routes.channelMessages(DEFAULT_CHANNEL_ID), {
        body: { content: "hang" },
        signal: abort.signal,
      }),
    );
    await fake.waitFor(() => seen.length === 3, 5_000, "the held post");
    abort.abort();
    await hung;
    expect(seen).toEqual(["MESSAGE_CREATE pass", "MESSAGE_UPDATE edited", "MESSAGE_CREATE hang"]);
    off();
  });

  it("serves a user's attachment bytes from the fake CDN", async () => {
    const client = await t.ready();
    const got = nextMessage(client);
    const bytes = Buffer.from("hello file");
    fake.userMessage({
      channelId: DEFAULT_CHANNEL_ID,
      author: ANN,
      content: "see file",
      attachments: [{ name: "note.txt", contentType: "text/plain", bytes }],
    });
    const attachment = (await got).attachments.first();
    expect(attachment).toMatchObject({ name: "note.txt", size: bytes.length, contentType: "text/plain" });
    const response = await fetch(attachment?.url ?? "");
    expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);
    // The bot's own upload: multipart with payload_json and files[0].
    const channel = client.channels.cache.get(DEFAULT_CHANNEL_ID) as TextChannel;
    const upload = await channel.send({
      content: "report",
      files: [{ attachment: Buffer.from("abc"), name: "r.txt" }],
    });
    expect(upload.attachments.first()).toMatchObject({ name: "r.txt", size: 3 });
    expect(fake.sent.at(-1)).toMatchObject({
      body: { content: "report" },
      files: [{ name: "r.txt", size: 3 }],
    });
    const served = await fetch(upload.attachments.first()?.url ?? "");
    expect(await served.text()).toBe("abc");
  });

  it("a thread from THREAD_CREATE receives messages", async () => {
    const client = await t.ready();
    const created = once(client, Events.ThreadCreate);
    const thread = fake.createThread({ parentId: DEFAULT_CHANNEL_ID, name: "side quest" });
    await created;
    const got = nextMessage(client);
    fake.userMessage({ channelId: String(thread.id), author: ANN, content: "in thread" });
    const message = await got;
    expect(message.channel.isThread()).toBe(true);
    expect(message.channel.isThread() && message.channel.parentId).toBe(DEFAULT_CHANNEL_ID);
    expect(message.guildId).toBe(DEFAULT_GUILD_ID);
    const reply = (await client.rest.post(Routes.channelMessages(String(thread.id)), {
      body: { content: "thread reply" },
    })) as DiscordMessage;
    expect(fake.messages(String(thread.id)).map((m) => m.id)).toContain(reply.id);
  });
});

describe("FakeDiscord application commands", () => {
  it("stores commands registered with PUT and keeps their ids on overwrite", async () => {
    const client = await t.ready();
    const body = [
      { name: "ask", description: "Ask the agent", options: [{ type: 3, name: "text", description: "t" }] },
    ];
    const global = (await client.rest.put(Routes.applicationCommands(fake.applicationId), {
      body,
    })) as Array<{
      id: string;
    }>;
    const again = (await client.rest.put(Routes.applicationCommands(fake.applicationId), { body })) as Array<{
      id: string;
    }>;
    expect(again[0]?.id).toBe(global[0]?.id);
    expect(fake.commands()).toMatchObject([{ name: "ask", type: 1, application_id: fake.applicationId }]);
    await client.rest.put(Routes.applicationGuildCommands(fake.applicationId, DEFAULT_GUILD_ID), {
      body: [{ name: "reset", description: "Reset" }],
    });
    expect(fake.commands(DEFAULT_GUILD_ID)).toMatchObject([{ name: "reset", guild_id: DEFAULT_GUILD_ID }]);
    const bad = rejection(
      client.rest.put(Routes.applicationCommands(fake.applicationId), {
        body: [{ name: "Bad Name", description: "x" }],
      }),
    );
    expect(await bad).toMatchObject({ code: 50035 });
  });

  it("answers a slash command with deferReply + editReply (ephemeral) and with reply", async () => {
    const client = await t.ready();
    await client.rest.put(Routes.applicationCommands(fake.applicationId), {
      body: [{ name: "ask", description: "Ask", options: [{ type: 3, name: "text", description: "t" }] }],
    });
    const commandIds: string[] = [];
    let answered: (messageId: string | undefined) => void = () => {};
    const publicAnswer = new Promise<string | undefined>((resolve) => {
      answered = resolve;
    });
    client.on(Events.InteractionCreate, async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      commandIds.push(interaction.commandId);
      const text = interaction.options.getString("text") ?? "";
      try {
        if (interaction.commandName === "ask") {
          await interaction.deferReply({ flags: MessageFlags.Ephemeral });
          await interaction.editReply(`echo: ${text}`);
        } else if (interaction.commandName === "status") {
          await interaction.reply({
            content: `quick ${interaction.channel?.type}`,
            flags: MessageFlags.Ephemeral,
          });
        } else {
          const answer = await interaction.reply({ content: "for all", withResponse: true });
          answered(answer.resource?.message?.id);
        }
      } catch (error) {
        commandIds.push(`failed: ${String(error)}`);
      }
    });
    const asked = fake.interaction({
      name: "ask",
      channelId: DEFAULT_CHANNEL_ID,
      user: ANN,
      options: { text: "hi" },
    });
    expect(await asked.response).toEqual({ content: "echo: hi", flags: MessageFlags.Ephemeral });
    expect(fake.interactionCalls(asked.id).map((c) => [c.kind, c.status])).toEqual([
      ["callback", 204],
      ["edit", 200],
    ]);
    expect(commandIds).toEqual([fake.commands()[0]?.id]);

    const inDm = fake.interaction({ name: "status", channelId: fake.dmChannelOf(ANN.id), user: ANN });
    expect(await inDm.response).toEqual({
      content: `quick ${ChannelType.DM}`,
      flags: MessageFlags.Ephemeral,
    });
    expect(fake.botMessages()).toEqual([]); // Ephemeral answers are not channel messages.

    const echo = nextMessage(client, (m) => m.content === "for all");
    const publicly = fake.interaction({ name: "announce", channelId: DEFAULT_CHANNEL_ID, user: ANN });
    expect(await publicly.response).toEqual({ content: "for all", flags: 0 });
    const [stored] = fake.botMessages(DEFAULT_CHANNEL_ID);
    expect(stored).toMatchObject({ type: 20, interaction_metadata: { id: publicly.id, name: "announce" } });
    expect((await echo).id).toBe(stored?.id);
    expect(await publicAnswer).toBe(stored?.id); // withResponse: the 200 callback response carries the message.
  });

  it("refuses an interaction first answered after Discord's 3 s window with 10062", async () => {
    let clock = Date.now();
    const slow = new FakeDiscord({ now: () => clock, users: [ANN] });
    await slow.start();
    t.defer(() => slow.close());
    const client = await t.ready(t.client(slow), slow);
    const failed = new Promise<unknown>((resolve) => {
      client.on(Events.InteractionCreate, async (interaction) => {
        if (!interaction.isChatInputCommand()) return;
        clock += 3001;
        resolve(await rejection(interaction.deferReply()));
      });
    });
    const late = slow.interaction({ name: "ask", channelId: DEFAULT_CHANNEL_ID, user: ANN });
    expect(await failed).toMatchObject({ code: 10062, status: 404 });
    expect(slow.interactionCalls(late.id)).toMatchObject([{ kind: "callback", status: 404 }]);
  });
});
