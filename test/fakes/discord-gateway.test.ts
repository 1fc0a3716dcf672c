/**
 * The fake Discord's gateway, driven through the real discord.js 14 client (@discordjs/ws) and a
 * raw `ws` client: login to ClientReady, token and intent refusals (4004 / 4014), MessageContent
 * blanking, refused query strings (4002), RECONNECT / drop / INVALID_SESSION, and close().
 */
import { once } from "node:events";
import { ChannelType, Events, GatewayIntentBits, Status } from "discord.js";
import { beforeEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { DEFAULT_CHANNEL_ID, DEFAULT_GUILD_ID, FakeDiscord } from "./discord-api.js";
import { nextMessage, rejection, useFakeDiscord } from "./discord-client.js";

const ANN = { id: "400000000000000001", username: "ann", global_name: "Ann" };
const t = useFakeDiscord({ heartbeatIntervalMs: 300, users: [ANN] });
let fake: FakeDiscord;
beforeEach(() => {
  fake = t.fake;
});

describe("FakeDiscord login and gateway", () => {
  it("logs in to ClientReady with the guild, the channel and the application cached", async () => {
    const client = await t.ready();
    expect(client.user.id).toBe(fake.botUser.id);
    expect(client.application.id).toBe(fake.applicationId);
    expect(client.guilds.cache.get(DEFAULT_GUILD_ID)?.name).toBe("Switchyard Test");
    const channel = client.channels.cache.get(DEFAULT_CHANNEL_ID);
    expect(channel?.type).toBe(ChannelType.GuildText);
    expect(client.guilds.cache.get(DEFAULT_GUILD_ID)?.members.me?.id).toBe(fake.botUser.id);
    expect(fake.identifies).toBe(1);
    expect(fake.identifyPayloads()[0]).toMatchObject({ intents: 37377, compress: false, shard: [0, 1] });
    expect(fake.connectionLog()[0]?.query).toEqual({ v: "10", encoding: "json" });
    expect(fake.calls({ path: "/gateway/bot" })[0]?.status).toBe(200);
  });

  it("rejects a wrong token: GET /gateway/bot answers 401 and login fails with TokenInvalid", async () => {
    const client = t.client();
    const error = await rejection(client.login("not-the-token"));
    expect((error as { code?: string }).code).toBe("TokenInvalid");
    expect(fake.calls({ path: "/gateway/bot" })[0]?.status).toBe(401);
  });

  it("closes an IDENTIFY asking for MessageContent with 4014 when the app lacks it", async () => {
    const strict = new FakeDiscord({ messageContentIntent: false, heartbeatIntervalMs: 300 });
    await strict.start();
    t.defer(() => strict.close());
    const client = t.client(strict);
    const disconnects: number[] = [];
    const shardErrors: string[] = [];
    client.on(Events.ShardDisconnect, (event) => disconnects.push(event.code));
    client.on(Events.ShardError, (error) => shardErrors.push(error.message));
    // Observed with discord.js 14.28.1 / @discordjs/ws 1.2.3: 4014 is unrecoverable. The shard
    // emits shardDisconnect {code: 4014}, then shardError "Used disallowed intents", and
    // client.login() rejects with that same plain Error (not a DiscordjsError, no `code`).
    // The shard stays down (no reconnect), and login() has already called client.destroy(),
    // which also clears the REST token.
    const error = await rejection(client.login(strict.token));
    expect((error as Error).message).toBe("Used disallowed intents");
    expect(disconnects).toEqual([4014]);
    expect(shardErrors).toEqual(["Used disallowed intents"]);
    expect(strict.identifies).toBe(0);
    expect(client.token).toBeNull();
    const app = await fetch(`${strict.apiUrl}/v10/applications/@me`, {
      headers: { authorization: `Bot ${strict.token}` },
    });
    expect(((await app.json()) as { flags: number }).flags & (1 << 19)).toBe(0);
    expect(strict.connections()).toBe(0);
  });

  it("blanks other people's guild message content for a session without MessageContent", async () => {
    const client = await t.ready(t.client(fake, [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages]));
    const plain = nextMessage(client, (m) => m.author.id === ANN.id);
    fake.userMessage({ channelId: DEFAULT_CHANNEL_ID, author: ANN, content: "secret" });
    expect((await plain).content).toBe("");
    const mention = nextMessage(client, (m) => m.author.id === ANN.id);
    fake.userMessage({ channelId: DEFAULT_CHANNEL_ID, author: ANN, content: `<@${fake.botUser.id}> hi` });
    const got = await mention;
    expect(got.content).toBe(`<@${fake.botUser.id}> hi`);
    expect(got.mentions.users.has(fake.botUser.id)).toBe(true);
  });

  it("rejects compress=zlib-stream and non-JSON encodings with close code 4002", async () => {
    const closeCode = async (query: string) => {
      const ws = new WebSocket(`${fake.gatewayUrl}?${query}`);
      ws.on("error", () => {});
      const [code] = (await once(ws, "close")) as [number];
      return code;
    };
    expect(await closeCode("v=10&encoding=json&compress=zlib-stream")).toBe(4002);
    expect(await closeCode("v=10&encoding=etf")).toBe(4002);
    expect(fake.connectionLog().map((c) => c.refusedWith)).toEqual([4002, 4002]);
  });

  it("speaks the raw protocol: HELLO, heartbeat ACK, op 9 for an unknown session, 4004 for a bad token", async () => {
    const ws = new WebSocket(`${fake.gatewayUrl}?v=10&encoding=json`);
    ws.on("error", () => {});
    const next = async () => JSON.parse(String(((await once(ws, "message")) as [Buffer])[0])) as unknown;
    expect(await next()).toMatchObject({ op: 10, d: { heartbeat_interval: 300 } });
    ws.send(JSON.stringify({ op: 1, d: null }));
    expect(await next()).toEqual({ op: 11 });
    ws.send(JSON.stringify({ op: 6, d: { token: fake.token, session_id: "gone", seq: 3 } }));
    expect(await next()).toMatchObject({ op: 9, d: false });
    const closed = once(ws, "close");
    ws.send(JSON.stringify({ op: 2, d: { token: "wrong", intents: 0, properties: {} } }));
    expect(((await closed) as [number])[0]).toBe(4004);
    expect(fake.identifies).toBe(0);
  });

  it("RECONNECT: the client resumes and an event sent while disconnected arrives once", async () => {
    const client = await t.ready();
    const seen: string[] = [];
    client.on(Events.MessageCreate, (m) => seen.push(m.id));
    const resumed = fake.waitForResume();
    const shardResumed = once(client, Events.ShardResume);
    await fake.reconnect();
    expect(fake.connections()).toBe(0);
    const missed = fake.userMessage({ channelId: DEFAULT_CHANNEL_ID, author: ANN, content: "while away" });
    const arrives = nextMessage(client, (m) => m.id === missed.id);
    await resumed;
    expect((await arrives).content).toBe("while away");
    const [, replayed] = (await shardResumed) as [number, number];
    expect(replayed).toBe(1);
    const after = nextMessage(client, (m) => m.content === "after");
    fake.userMessage({ channelId: DEFAULT_CHANNEL_ID, author: ANN, content: "after" });
    await after;
    expect(seen.filter((id) => id === missed.id)).toHaveLength(1);
    expect(fake.resumes).toBe(1);
    expect(fake.identifies).toBe(1);
    expect(fake.connectionLog().map((c) => c.path)).toEqual(["/gateway", "/gateway/resume"]);
  });

  it("a dropped socket (no close frame) is resumed too", async () => {
    const client = await t.ready();
    const resumed = fake.waitForResume();
    fake.dropConnection();
    const missed = fake.userMessage({ channelId: DEFAULT_CHANNEL_ID, author: ANN, content: "gap" });
    const arrives = nextMessage(client, (m) => m.id === missed.id);
    await resumed;
    await arrives;
    expect(fake.identifies).toBe(1);
  });

  it("INVALID_SESSION not resumable: the client identifies again (no resume) and keeps receiving events", async () => {
    const client = await t.ready();
    const identified = fake.waitForIdentify(2);
    fake.invalidSession(false);
    await identified;
    const got = nextMessage(client, (m) => m.content === "fresh");
    fake.userMessage({ channelId: DEFAULT_CHANNEL_ID, author: ANN, content: "fresh" });
    await got;
    expect(fake.resumes).toBe(0);
  });

  it("close() with a client still running ends its shard with 4004 instead of a reconnect loop", async () => {
    const client = await t.ready();
    client.on(Events.ShardError, () => {}); // "Authentication failed", reported as a shard error.
    const disconnected = once(client, Events.ShardDisconnect);
    await fake.close();
    const [event] = (await disconnected) as [{ code: number }];
    expect(event.code).toBe(4004);
    expect(client.ws.shards.first()?.status).toBe(Status.Disconnected);
  });
});
