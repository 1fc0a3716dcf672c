/**
 * A Discord gateway SIGKILLed at the two worst moments answers exactly once after restart:
 * mid-run (the DM was committed; recovery redoes the run and posts one reply), and right after
 * Discord stored its reply but before the gateway learned it (the row is left `sending`; after
 * restart it is taken over in doubt, found in the DM channel by `findSent` and recorded sent,
 * so the channel holds one bot message and no second POST is made). Real discord.js against
 * FakeDiscord on 127.0.0.1; the gateway is a child process on a fresh home per case.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nonceOf } from "../../src/channels/discord/discord-sender.js";
import { idempotencyKeyOf } from "../../src/gateway/outbox-send.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { FakeDiscord } from "../fakes/discord-api.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type GatewayProcess, spawnGateway } from "../helpers/gateway-process.js";
import { until } from "../helpers/until.js";

const TOKEN = "fake-discord-crash-token-0123456789";
const ANN = { id: "400000000000000001", username: "ann" };
const BOB = { id: "400000000000000002", username: "bob" };

describe("Discord crash recovery (SIGKILL)", () => {
  let sim: ModelSimulator;
  let fake: FakeDiscord;
  const homes: string[] = [];
  const live = new Set<GatewayProcess>();
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    fake = new FakeDiscord({ token: TOKEN });
    await fake.start();
  });
  afterAll(async () => {
    for (const gw of live) await gw.kill("SIGKILL");
    await fake?.close();
    await sim?.close();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });

  function newHome(): { home: string; config: string } {
    const home = mkdtempSync(join(tmpdir(), "sy-discord-crash-"));
    homes.push(home);
    const config = join(home, "switchyard.yaml");
    writeFileSync(
      config,
      [
        "agent:",
        "  model: anthropic/claude-test",
        "gateway:",
        "  leaseTtlMs: 1000",
        "providers:",
        "  anthropic:",
        "    apiKey: sk-ant-test-key",
        `    baseUrl: ${sim.url}`,
        "channels:",
        "  discord:",
        `    token: ${TOKEN}`,
        `    apiUrl: ${fake.apiUrl}`,
        "    dmPolicy: open",
        "logging:",
        "  level: warn",
      ].join("\n"),
    );
    return { home, config };
  }

  /** Starts a gateway on `home`, tracked so afterAll kills it if a test fails midway. */
  async function start(home: string, config: string): Promise<GatewayProcess> {
    const gw = await spawnGateway(["--home", home, "--config", config, "--port", "0"]);
    live.add(gw);
    return gw;
  }

  async function stop(gw: GatewayProcess, signal: NodeJS.Signals): Promise<number | null> {
    const code = await gw.kill(signal);
    live.delete(gw);
    return code;
  }

  /** Reads the home's store (state counts and the outbox rows) with the gateway stopped or running. */
  async function readStore(home: string) {
    const store = openSqliteStore({ path: join(home, "switchyard.db") });
    try {
      return {
        inbox: await store.inbox.countByState(),
        outbox: await store.outbox.countByState(),
        sent: await store.outbox.listByState("sent", 10),
      };
    } finally {
      await store.close();
    }
  }

  /** One series of switchyard_outbound_total from /metrics (0 when absent). */
  async function outbound(url: string, result: string): Promise<number> {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text
      .split("\n")
      .find((l) => l.startsWith("switchyard_outbound_total{") && l.includes(`result="${result}"`));
    return line ? Number(line.split(" ").at(-1)) : 0;
  }

  it("killed mid-run: answers exactly once after restart", async () => {
    const { home, config } = newHome();
    let gw = await start(home, config);
    const dm = fake.dmChannelOf(ANN.id);
    sim.script({ hang: true }); // the model never answers this run
    const asked = sim.requests.length;
    fake.dm({ author: ANN, content: "survive this" });
    await sim.waitForRequests(asked + 1, 10_000); // committed and running
    expect((await readStore(home)).inbox).toMatchObject({ running: 1 });
    await stop(gw, "SIGKILL");
    expect(fake.botMessages(dm)).toHaveLength(0);

    sim.script({ text: "I survived." });
    gw = await start(home, config);
    await until(() => fake.botMessages(dm).length > 0, "the answer after restart", 15_000);
    expect(await stop(gw, "SIGTERM")).toBe(0);

    const replies = fake.botMessages(dm);
    expect(replies.map((m) => m.content)).toEqual(["I survived."]);
    expect(fake.sent.filter((s) => s.channelId === dm)).toHaveLength(1);
    const after = await readStore(home);
    expect(after.inbox).toMatchObject({ answered: 1, running: 0, queued: 0 });
    expect(after.outbox).toMatchObject({ sent: 1, pending: 0, sending: 0, dead: 0 });
    expect(after.sent).toHaveLength(1);
    expect(after.sent[0]).toMatchObject({
      target: { channel: "discord", chatId: dm },
      platformMessageId: replies[0]?.id,
      inDoubt: false, // it was never sent before the kill: nothing to look up
    });
  }, 60_000);

  it("killed after Discord stored the reply, before the gateway learned it: found, posted once", async () => {
    const { home, config } = newHome();
    let gw = await start(home, config);
    const dm = fake.dmChannelOf(BOB.id);
    sim.script({ text: "exactly once" });
    // Stored and echoed over the gateway, but the HTTP answer never comes.
    fake.failNext({ method: "POST", route: "/channels/:id/messages" }, { hangAfter: true });
    const asked = fake.dm({ author: BOB, content: "reply once" });
    await until(() => fake.botMessages(dm).length === 1, "the stored reply", 10_000);
    await stop(gw, "SIGKILL");
    expect((await readStore(home)).outbox).toMatchObject({ sending: 1, sent: 0 });
    const stored = fake.botMessages(dm)[0];
    const lookupsBefore = fake.calls({ method: "GET", path: `/channels/${dm}/messages` }).length;

    gw = await start(home, config);
    await until(async () => (await readStore(home)).outbox.sent === 1, "the reply recorded as sent", 15_000);
    const found = await outbound(gw.url, "found");
    const sentMetric = await outbound(gw.url, "sent");
    expect(await stop(gw, "SIGTERM")).toBe(0);

    // One message in the channel, whichever way the resend was caught.
    expect(fake.botMessages(dm).map((m) => m.content)).toEqual(["exactly once"]);
    const after = await readStore(home);
    expect(after.outbox).toMatchObject({ sent: 1, pending: 0, sending: 0, dead: 0 });
    expect(after.sent).toHaveLength(1);
    const row = after.sent[0];
    expect(row).toMatchObject({ inDoubt: true, platformMessageId: stored?.id });

    // Which way: the restarted gateway takes the `sending` row over in doubt (recovery's
    // resetExpired), and OutboxSender#deliver (src/gateway/outbox-send.ts) calls the channel's
    // findSent before any send. DiscordSender.findSent GETs /channels/:id/messages?after=<the
    // snowflake of the row's creation − 2 min> and matches the bot's author id, the text and the
    // message_reference, so the row is recorded `found` and never POSTed again: `fake.sent` holds
    // only the first POST (with the row's nonce, not deduplicated). Discord's enforce_nonce would
    // have caught a resend too (within its 5 minutes), but it is never needed here.
    const posts = fake.sent.filter((s) => s.channelId === dm);
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatchObject({
      deduplicated: false,
      messageId: stored?.id,
      body: { nonce: row ? nonceOf(idempotencyKeyOf(row)) : "", enforce_nonce: true },
    });
    // Besides the start's catch-up read (after the last message the gateway took), one lookup.
    const reads = fake.calls({ method: "GET", path: `/channels/${dm}/messages` }).slice(lookupsBefore);
    expect(reads.filter((c) => c.query.after === asked.id)).toHaveLength(1);
    const lookups = reads.filter((c) => c.query.after !== asked.id);
    expect(lookups).toHaveLength(1);
    expect(lookups[0]?.status).toBe(200);
    expect(lookups[0]?.query).toMatchObject({ limit: "100" });
    expect({ found, sent: sentMetric }).toEqual({ found: 1, sent: 0 });
  }, 60_000);
});
