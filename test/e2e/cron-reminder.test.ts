/**
 * Scheduled work end to end over the fake Telegram Bot API, on the gateway's manual clock:
 * "remind me in 2 minutes" → the agent calls cron_add → nothing happens until the clock moves
 * → the reminder arrives in that chat, once, and the ledger says so; a bad schedule from the
 * agent is refused with the field named.
 */
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/util/clock.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until, untilAdvancing } from "../helpers/until.js";

const TOKEN = "123456:AAtest-token-for-the-fake-bot-api-000";
const BOT = { token: TOKEN, id: 123456, username: "switchyard_bot", firstName: "Switchyard" };
const ANN = { id: 42, first_name: "Ann" };

let sim: ModelSimulator | undefined;
let tg: FakeTelegramBotApi | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await tg?.close();
  await sim?.close();
  gw = undefined;
  tg = undefined;
  sim = undefined;
});

async function setup(clock: ManualClock, home?: string) {
  sim ??= new ModelSimulator();
  if (!home) await sim.start();
  tg ??= new FakeTelegramBotApi({ now: () => clock.now() });
  if (!home) {
    await tg.start();
    tg.addBot(BOT);
  }
  gw = await startTestGateway(
    {
      ...simulatorConfig(sim, "anthropic"),
      channels: { telegram: { token: TOKEN, apiRoot: tg.apiRoot, allowFrom: [ANN.id] } },
      heartbeat: { everyMs: 0 },
    },
    { clock, ...(home ? { home } : {}) },
  );
  return { sim, tg, gw };
}

const texts = (fake: FakeTelegramBotApi) => fake.sentMessages({ chatId: ANN.id }).map((m) => m.text ?? "");

/**
 * Waits (in real time) until the gateway has recorded every reply as sent. The fake has a reply
 * before the gateway records it; moving the manual clock past the claim's lease in between
 * (untilAdvancing fires every timer due) lets the takeover sweep put that row back in doubt and
 * send it again, a window real time never opens.
 */
async function repliesRecorded(g: TestGateway): Promise<void> {
  await until(async () => {
    const c = await g.running.store.outbox.countByState();
    return c.pending + c.sending === 0;
  }, "the replies recorded as sent");
}

describe("scheduled work over Telegram", () => {
  it('"remind me in 2 minutes": the agent schedules it, and the reminder arrives when the clock moves', async () => {
    const clock = new ManualClock(Date.now());
    const { sim, tg, gw } = await setup(clock);
    sim.script(
      {
        toolCalls: [
          { name: "cron_add", args: { name: "stretch", message: "Remind Ann to stretch", at: "in 2m" } },
        ],
      },
      { text: "OK, I will remind you in 2 minutes." },
      { text: "Time to stretch, Ann!" },
    );
    tg.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      text: "remind me in 2 minutes to stretch",
    });
    await until(() => texts(tg).length === 1, "the agent's answer");
    expect(texts(tg)).toEqual(["OK, I will remind you in 2 minutes."]);
    const job = await gw.running.store.cron.byName("main", "stretch");
    expect(job).toMatchObject({
      source: "agent",
      deliver: {
        kind: "chat",
        target: { channel: "telegram", accountId: "default", chatId: String(ANN.id) },
      },
    });
    expect(sim.requests).toHaveLength(2); // nothing ran early
    await repliesRecorded(gw);
    await untilAdvancing(clock, () => texts(tg).length === 2, "the reminder");
    expect(texts(tg)).toEqual(["OK, I will remind you in 2 minutes.", "Time to stretch, Ann!"]);
    expect(JSON.stringify(sim.requests[2]?.body)).toContain('Scheduled job \\"stretch\\"');
    await until(
      async () => (await gw.running.store.cron.history(job?.id ?? 0, 5))[0]?.state === "ok",
      "ledger ok",
    );
    expect(await gw.running.store.cron.get(job?.id ?? 0)).toMatchObject({ nextRunAt: null });
  });

  it("refuses a bad schedule from the agent with the field named, storing nothing", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, tg, gw } = await setup(clock);
    sim.script(
      { toolCalls: [{ name: "cron_add", args: { name: "spam", message: "ping", every: "10s" } }] },
      { text: "I cannot do that often." },
    );
    tg.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      text: "ping me every 10 seconds",
    });
    await until(() => texts(tg).length === 1, "the answer");
    expect(JSON.stringify(sim.requests[1]?.body)).toContain('every: \\"10s\\" is below the 1-minute floor');
    expect(await gw.running.store.cron.list()).toEqual([]);
  });

  it("a bad job in the config file stops the start with the key path named", async () => {
    sim = new ModelSimulator();
    await sim.start();
    await expect(
      startTestGateway({
        ...simulatorConfig(sim, "anthropic"),
        cron: { jobs: [{ name: "digest", every: "5s", message: "m", deliver: "none" }] },
      }),
    ).rejects.toThrow(/cron\.jobs\.0\.every: "5s" is below the 1-minute floor/);
  });

  it("a wake the agent set fires after a restart, in the same conversation", async () => {
    const clock = new ManualClock(Date.now());
    const first = await setup(clock);
    first.sim.script(
      {
        toolCalls: [
          { name: "schedule_wake", args: { when: "in 10m", why: "Check whether the build went green" } },
        ],
      },
      { text: "I will check back in 10 minutes." },
      { text: "The build is green." },
    );
    first.tg.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      text: "watch the build",
    });
    await until(() => texts(first.tg).length === 1, "the answer");
    const home = first.gw.home;
    const sessionKey = `agent:main:telegram:dm:${ANN.id}`;
    expect(await first.gw.running.store.wakes.list(sessionKey)).toMatchObject([
      { reason: "Check whether the build went green" },
    ]);
    await first.gw.running.stop();
    clock.advance(11 * 60_000); // down while it came due
    const second = await setup(clock, home);
    await until(() => texts(second.tg).length === 2, "the wake's answer");
    expect(texts(second.tg)[1]).toBe("The build is green.");
    expect(JSON.stringify(second.sim.requests[2]?.body)).toContain("Wake-up you scheduled");
    expect(await second.gw.running.store.wakes.list(sessionKey)).toEqual([]);
    await second.gw.stop();
    gw = undefined;
    rmSync(home, { recursive: true, force: true });
  });

  it("tells the owner once when a job's retries are spent, and disables a job whose chat refuses 3 answers", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, tg, gw } = await setup(clock);
    const { buildJob } = await import("../../src/cron/jobs.js");
    const make = (name: string) =>
      buildJob(
        { name, every: "1h", message: `run ${name}`, deliver: `telegram:default:${ANN.id}` },
        {
          agentId: "main",
          source: "cli",
          now: clock.now(),
          defaultTz: "UTC",
          channels: new Set(["telegram:default"]),
        },
      );
    // 1. Every attempt of "flaky" fails: after 30 s, 1 m, 5 m, 15 m and 60 m of retries, one notice.
    sim.setDefault(() => ({ error: { status: 500, message: "overloaded" } }));
    const flaky = make("flaky");
    const job = await gw.running.store.cron.add(flaky.spec, flaky.nextRunAt, clock.now());
    void gw.running.cron?.tick();
    await untilAdvancing(
      clock,
      async () => (await gw.running.store.cron.get(job.id))?.failing === true,
      "failing",
      20_000,
    );
    await until(() => texts(tg).length === 1, "the notice");
    expect(texts(tg)[0]).toMatch(/^Scheduled job "flaky" keeps failing \(.*\); it is marked failing/);
    await gw.running.store.cron.remove(job.id);
    // 2. "gone" answers, but Telegram refuses every reply for good: disabled after 3 runs.
    sim.setDefault(() => ({ text: "an answer nobody gets" }));
    tg.injectFault({
      method: "sendMessage",
      errorCode: 403,
      description: "Forbidden: bot was blocked by the user",
      times: 100,
    });
    const gone = make("gone");
    const goneJob = await gw.running.store.cron.add(gone.spec, gone.nextRunAt, clock.now());
    void gw.running.cron?.tick();
    await untilAdvancing(
      clock,
      async () => (await gw.running.store.cron.get(goneJob.id))?.enabled === false,
      "disabled",
      20_000,
    );
    expect(await gw.running.store.cron.get(goneJob.id)).toMatchObject({
      deliveryFailures: 3,
      disabledReason: expect.stringMatching(
        /^its chat refused the answer 3 times \(.*blocked by the user.*\)$/,
      ),
    });
    expect(
      (await gw.running.store.cron.history(goneJob.id, 10)).map((r) => r.receipt?.startsWith("undelivered")),
    ).toContain(true);
  });

  it("a job in session: main runs in its chat's own session and sees that conversation", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, tg, gw } = await setup(clock);
    sim.script({ text: "Noted: teal." }, { text: "Your colour of the day: teal." });
    tg.pushMessage(TOKEN, {
      chat: { id: ANN.id, type: "private" },
      from: ANN,
      text: "my favourite colour is teal",
    });
    await until(() => texts(tg).length === 1, "the answer");
    const { buildJob } = await import("../../src/cron/jobs.js");
    const { spec, nextRunAt } = buildJob(
      {
        name: "colour",
        at: "in 1m",
        message: "Tell Ann her colour of the day",
        session: "main",
        deliver: `telegram:default:${ANN.id}`,
      },
      {
        agentId: "main",
        source: "cli",
        now: clock.now(),
        defaultTz: "UTC",
        channels: new Set(["telegram:default"]),
      },
    );
    await gw.running.store.cron.add(spec, nextRunAt, clock.now());
    await repliesRecorded(gw);
    void gw.running.cron?.tick();
    await untilAdvancing(clock, () => texts(tg).length === 2, "the job's answer");
    expect(JSON.stringify(sim.requests[1]?.body)).toContain("my favourite colour is teal");
    const [run] = await gw.running.store.runs.recent(1);
    expect(run).toMatchObject({ trigger: "cron", sessionKey: `agent:main:telegram:dm:${ANN.id}` });
  });

  it("an isolated job starts each run in a fresh session", async () => {
    const clock = new ManualClock(Date.now());
    const { sim, gw } = await setup(clock);
    sim.script({ text: "first run's answer" }, { text: "second run's answer" });
    const { buildJob } = await import("../../src/cron/jobs.js");
    const { spec, nextRunAt } = buildJob(
      { name: "digest", every: "1h", message: "Make the digest", deliver: "none" },
      { agentId: "main", source: "cli", now: clock.now(), defaultTz: "UTC", channels: new Set() },
    );
    const job = await gw.running.store.cron.add(spec, nextRunAt, clock.now());
    void gw.running.cron?.tick();
    await untilAdvancing(clock, () => (sim?.requests.length ?? 0) === 2, "two runs");
    expect(JSON.stringify(sim.requests[1]?.body)).not.toContain("first run's answer");
    await until(
      async () =>
        (await gw.running.store.cron.history(job.id, 5)).filter((r) => r.state === "ok").length === 2,
      "both ok",
    );
  });
});
