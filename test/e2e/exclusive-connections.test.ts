/**
 * Connections and duties only one node may run (resource leases): two gateways on one store and
 * one Telegram bot in long-polling mode. Only the node holding `channel:telegram:<account>`
 * polls and sends; the other stands by (status says so) and hosts nothing of that bot. When the
 * holder stops cleanly the other takes the bot at its next renewal; when the holder stalls past
 * the lease (its clock stands still while the other's moves), the other takes it over and the
 * stalled one, at its next renewal, learns it lost the lease and stops polling. The heartbeat is
 * such a duty too: one node beats. Telegram's 409 (a newer getUpdates ends the held one) counts
 * the moments two nodes polled at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { FakeDiscord } from "../fakes/discord-api.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { simulatorConfig, startTestGateway, type TestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

const TOKEN = "123456:AAtest-token-for-the-fake-bot-api-000";
const BOT = { token: TOKEN, id: 123456, username: "switchyard_bot", firstName: "Switchyard" };
const ANN = { id: 42, first_name: "Ann" };
const TTL = 3_000;
const POLLING = "channel:telegram:default";

const opened: Array<{ close(): Promise<void> }> = [];
let home: string | undefined;
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close().catch(() => undefined);
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
});

async function cluster() {
  const sim = new ModelSimulator();
  await sim.start();
  sim.setDefault((r) => {
    const body = JSON.stringify(r.body);
    const said = [...body.matchAll(/ping \d+/g)].at(-1)?.[0] ?? "something";
    return { text: `pong for ${said}` };
  });
  opened.push({ close: () => sim.close() });
  const tg = new FakeTelegramBotApi();
  await tg.start();
  tg.addBot(BOT);
  opened.push({ close: () => tg.close() });
  home = mkdtempSync(join(tmpdir(), "sy-exclusive-"));
  const raw = {
    ...simulatorConfig(sim, "anthropic"),
    gateway: { leaseTtlMs: TTL },
    channels: { telegram: { token: TOKEN, apiRoot: tg.apiRoot, allowFrom: [ANN.id] } },
    heartbeat: { everyMs: 3_600_000 },
  };
  const start = async (clock: ManualClock) => {
    const gw = await startTestGateway(raw, { home: home as string, clock });
    const node = { gw, clock, stopped: false };
    opened.push({
      close: async () => {
        if (!node.stopped) await gw.stop();
      },
    });
    return node;
  };
  return { sim, tg, start };
}

type Node = { gw: TestGateway; clock: ManualClock; stopped: boolean };

const pongs = (tg: FakeTelegramBotApi) => tg.sentMessages({ chatId: ANN.id }).map((m) => m.text ?? "");
const hostsTelegram = (n: Node) => n.gw.running.channels.hosted().some((c) => c.channel === "telegram");
const resourcesOf = async (n: Node) =>
  (await n.gw.running.store.leases.ownerHoldings(n.clock.now())).find((h) => h.owner === n.gw.running.owner)
    ?.resources ?? [];
async function statusOf(n: Node): Promise<{ channels: Array<{ name: string; state?: string }> }> {
  return (await (await fetch(`${n.gw.url}/v1/status`)).json()) as {
    channels: Array<{ name: string; state?: string }>;
  };
}
/** One renewal period on `n`'s clock: its lease timer fires (renewal, then the resource check). */
const renewal = (n: Node) => n.clock.advanceAsync(Math.ceil(TTL / 3));

describe("connections one node holds (resource leases)", () => {
  it("one node polls the bot and beats; the other stands by and takes over when it stops", async () => {
    const { tg, start } = await cluster();
    const a = await start(new ManualClock(Date.now()));
    const b = await start(new ManualClock(Date.now()));
    expect(await resourcesOf(a)).toEqual([POLLING, "heartbeat:main"]);
    expect(await resourcesOf(b)).toEqual([]);
    expect(hostsTelegram(a)).toBe(true);
    expect(hostsTelegram(b)).toBe(false);
    expect(a.gw.running.heartbeat).toBeDefined();
    expect(b.gw.running.heartbeat).toBeUndefined();
    expect((await statusOf(b)).channels.find((c) => c.name === "telegram")?.state).toBe("standby");
    expect((await statusOf(a)).channels.find((c) => c.name === "telegram")?.state).toBe("connected");

    tg.pushMessage(TOKEN, { from: ANN, chat: { id: ANN.id, type: "private" }, text: "ping 1" });
    await until(() => pongs(tg).length === 1, "the first answer");
    expect(pongs(tg)).toEqual(["pong for ping 1"]);

    expect(tg.pollConflicts(TOKEN)).toBe(0);
    // A clean stop gives the bot back; b takes it at its next renewal. (A stopping poller's last
    // getUpdates, which confirms its offset, may end its own aborted long poll: not a second poller.)
    a.stopped = true;
    await a.gw.stop();
    const conflicts = tg.pollConflicts(TOKEN);
    await renewal(b);
    await until(() => hostsTelegram(b), "b takes the bot over");
    expect(await resourcesOf(b)).toEqual([POLLING, "heartbeat:main"]);
    expect(b.gw.running.heartbeat).toBeDefined();
    tg.pushMessage(TOKEN, { from: ANN, chat: { id: ANN.id, type: "private" }, text: "ping 2" });
    await until(() => pongs(tg).length === 2, "the second answer");
    expect(pongs(tg)).toEqual(["pong for ping 1", "pong for ping 2"]);
    expect(tg.pollConflicts(TOKEN)).toBe(conflicts);
  });

  it("a holder stalled past its lease loses the bot to the other node and stops polling once it learns", async () => {
    const { tg, start } = await cluster();
    const t0 = Date.now();
    const a = await start(new ManualClock(t0));
    const b = await start(new ManualClock(t0));
    expect(hostsTelegram(a)).toBe(true);
    // a stands still (paused: its renewals do not run); b's time moves past a's lease.
    for (let i = 0; i < 4; i++) await renewal(b);
    await until(() => hostsTelegram(b), "b takes the stalled node's bot");
    expect(await resourcesOf(b)).toEqual([POLLING, "heartbeat:main"]);
    // a wakes up: its first renewal finds the leases gone and stops its duties.
    await a.clock.advanceAsync(b.clock.now() - a.clock.now());
    await renewal(a);
    await until(() => !hostsTelegram(a), "a stops polling");
    expect(a.gw.running.heartbeat).toBeUndefined();
    expect(await resourcesOf(a)).toEqual([]);
    // From here one poller: b answers, once; a's polls are over (no further 409s).
    const conflicts = tg.pollConflicts(TOKEN);
    tg.pushMessage(TOKEN, { from: ANN, chat: { id: ANN.id, type: "private" }, text: "ping 3" });
    await until(() => pongs(tg).length === 1, "the answer after the takeover");
    expect(pongs(tg)).toEqual(["pong for ping 3"]);
    await renewal(b);
    await renewal(a);
    expect(tg.pollConflicts(TOKEN)).toBe(conflicts);
  });

  it("a lease that lapsed while no other node took it (a clock jump, a stall) is held again; polling goes on", async () => {
    const { tg, start } = await cluster();
    const a = await start(new ManualClock(Date.now()));
    const getMes = () => tg.calls.filter((c) => c.method === "getMe").length;
    const before = getMes();
    await a.clock.advanceAsync(3_600_000); // an hour passes at once: every lease lapses
    await renewal(a);
    await until(async () => (await resourcesOf(a)).length === 2, "the leases held again");
    expect(await resourcesOf(a)).toEqual([POLLING, "heartbeat:main"]);
    expect(hostsTelegram(a)).toBe(true);
    expect(getMes()).toBe(before); // not reconnected
    tg.pushMessage(TOKEN, { from: ANN, chat: { id: ANN.id, type: "private" }, text: "ping 9" });
    await until(() => pongs(tg).length === 1, "an answer after the jump");
  });

  it("one Discord gateway connection per bot: the other node stands by, then connects once the holder stops", async () => {
    const sim = new ModelSimulator();
    await sim.start();
    sim.setDefault((r) => ({
      text: `pong for ${[...JSON.stringify(r.body).matchAll(/ping \d+/g)].at(-1)?.[0]}`,
    }));
    opened.push({ close: () => sim.close() });
    const TOKEN_D = "fake-discord-token-for-exclusive-tests";
    const fake = new FakeDiscord({ token: TOKEN_D, heartbeatIntervalMs: 300 });
    await fake.start();
    opened.push({ close: () => fake.close() });
    home = mkdtempSync(join(tmpdir(), "sy-exclusive-"));
    const raw = {
      ...simulatorConfig(sim, "anthropic"),
      gateway: { leaseTtlMs: TTL },
      channels: { discord: { token: TOKEN_D, apiUrl: fake.apiUrl, dmPolicy: "open" } },
      heartbeat: { everyMs: 0 },
    };
    const start = async (clock: ManualClock): Promise<Node> => {
      const gw = await startTestGateway(raw, { home: home as string, clock });
      const node = { gw, clock, stopped: false };
      opened.push({ close: async () => void (node.stopped || (await gw.stop())) });
      return node;
    };
    const hostsDiscord = (n: Node) => n.gw.running.channels.hosted().some((c) => c.channel === "discord");
    const ann = { id: "400000000000000031", username: "ann" };
    const a = await start(new ManualClock(Date.now()));
    const b = await start(new ManualClock(Date.now()));
    expect([hostsDiscord(a), hostsDiscord(b)]).toEqual([true, false]);
    expect(fake.connections()).toBe(1);
    const dm = fake.dm({ author: ann, content: "ping 1" }).channel_id;
    await until(() => fake.botMessages(dm).length === 1, "the first answer");
    a.stopped = true;
    await a.gw.stop();
    await renewal(b);
    await until(() => hostsDiscord(b) && fake.connections() === 1, "b connects");
    fake.dm({ author: ann, content: "ping 2" });
    await until(() => fake.botMessages(dm).length === 2, "the second answer");
    expect(fake.botMessages(dm).map((m) => m.content)).toEqual(["pong for ping 1", "pong for ping 2"]);
    expect(fake.identifies).toBe(2);
  });
});
