/**
 * Issue #27's "What must be shown", end to end: gateways sharing one PostgreSQL database (a
 * throwaway cluster) and one `agent.workspace` folder.
 * 1. Three gateway PROCESSES (the built binary), one fake Telegram bot in long-polling mode, the
 *    built-in model simulator: 300 messages from 10 chats while SIGKILLs hit the polling node and
 *    the others (each restarted on its own home) and one node is SIGSTOPped past the lease: every
 *    message answered exactly once, in order per chat, and only one poller at any time (see
 *    cluster/pollers.ts for exactly what is counted).
 * 2. A cron job due every minute over 5 minutes of fake time across three nodes runs each slot
 *    once. The gateway process has no fake-clock hook, so these three nodes are in-process
 *    gateways (startTestGateway) sharing one ManualClock, each with its own Store (own pool) on
 *    the same database.
 * 3. An HTTP request to node A answered by a run on node B (two processes, each with its own model
 *    simulator, so the simulator that got the request tells which node ran the turn).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConversation } from "../../src/simulator/conversation.js";
import { ManualClock } from "../../src/util/clock.js";
import { between, seededRandom } from "../chaos/kill-plan.js";
import { ModelSimulator, type SimulatedRequest } from "../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { type TestPostgres, startPostgres } from "../helpers/postgres.js";
import { postChat, simulatorConfig, startTestGateway, type TestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";
import { ClusterNode } from "./cluster/nodes.js";
import { judgeAnswers } from "./cluster/answers-check.js";
import { PollRecorder } from "./cluster/poll-recorder.js";
import { type LifeSignals, pollerOverlaps } from "./cluster/pollers.js";

const TOKEN = "710710:AAcluster-test-token-for-the-fake-api-0";
const BOT_ID = 710710;
const FIRST_USER = 5000;
const CHATS = 10;
const PER_CHAT = 30;
const LEASE_TTL_MS = 3_000;
/** The chaos plan's seed (CLUSTER_SEED overrides it). */
const SEED = Number(process.env.CLUSTER_SEED ?? 27);

/** What the built-in simulator answers to a person's text. */
const simulated = (text: string) => `Simulated reply (no model API key is configured): you said "${text}".`;

let pgServer: TestPostgres;
const started: Array<{ killAll(): void }> = [];
const onExit = () => {
  for (const n of started) n.killAll();
};

beforeAll(async () => {
  pgServer = await startPostgres();
  process.once("exit", onExit);
}, 60_000);
afterAll(async () => {
  onExit();
  process.off("exit", onExit);
  await pgServer?.stop();
});

const t0 = performance.now();
const now = () => Math.round(performance.now() - t0);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sharedFolder = () => mkdtempSync(join(tmpdir(), "sy-cluster-ws-"));

describe("a cluster of gateways on one PostgreSQL", () => {
  it("three processes, one Telegram bot, kills and a stop: each message answered once, in order, one poller at a time", async () => {
    const startedAt = now();
    const url = await pgServer.createDatabase("telegram3");
    const workspace = sharedFolder();
    const tg = new FakeTelegramBotApi();
    await tg.start();
    tg.addBot({ token: TOKEN, id: BOT_ID, username: "cluster_bot" });
    const recorder = new PollRecorder(tg.apiRoot, now);
    await recorder.start();
    const signals = new Map<string, LifeSignals>();
    const users = Array.from({ length: CHATS }, (_, i) => FIRST_USER + i + 1);
    const config = (life: string) =>
      [
        "gateway:",
        `  leaseTtlMs: ${LEASE_TTL_MS}`,
        "agent:",
        `  workspace: ${workspace}`,
        "store:",
        "  engine: postgres",
        `  url: ${url}`,
        "  poolSize: 4",
        "heartbeat:",
        "  everyMs: 0",
        "channels:",
        "  telegram:",
        `    token: "${TOKEN}"`,
        `    apiRoot: ${recorder.rootFor(life)}`,
        `    allowFrom: [${users.join(", ")}]`,
        "    pollTimeoutSeconds: 5",
        "logging:",
        `  level: ${process.env.CLUSTER_LOG ?? "warn"}`,
        "",
      ].join("\n");
    const nodes = [1, 2, 3].map((i) => new ClusterNode(i, config, now, signals));
    started.push(...nodes);
    const chatTexts = (chat: number) =>
      tg
        .messagesInChat(FIRST_USER + chat)
        .filter((m) => m.from?.id === BOT_ID)
        .sort((a, b) => a.message_id - b.message_id)
        .map((m) => m.text ?? "");
    try {
      // The first node creates the schema and the workspace marker; then the others join.
      await nodes[0]?.start();
      await Promise.all(nodes.slice(1).map((n) => n.start()));

      /** The node whose process sent the last getUpdates (the poller, once there is one). */
      const poller = (): ClusterNode | undefined => {
        const last = recorder.polls.at(-1)?.life;
        return nodes.find((n) => n.alive && n.name === last);
      };
      const notes: string[] = [];
      const killAndRestart = async (node: ClusterNode, why: string) => {
        notes.push(`${now()} ms: SIGKILL ${node.name} (${why})`);
        await node.kill(now());
        await pause(300);
        await node.start();
        notes.push(`${now()} ms: ${node.name} listening`);
      };

      let chaosDone = false;
      const traffic = (async () => {
        for (let i = 0; i < CHATS * PER_CHAT; i++) {
          const chat = (i % CHATS) + 1;
          const seq = Math.floor(i / CHATS) + 1;
          const id = FIRST_USER + chat;
          tg.pushMessage(TOKEN, {
            chat: { id, type: "private" },
            from: { id, first_name: `user${chat}` },
            text: `c${chat} m${seq}`,
          });
          // Spread over the kills while they last, then the rest at once.
          await pause(chaosDone ? 20 : 150);
        }
      })();
      // The plan: SIGKILL the poller, another node, SIGSTOP the poller past its lease, then three
      // more kills; the gaps and the "other" node are drawn from a seeded random source.
      const random = seededRandom(SEED);
      const pick = (from: ClusterNode[]) => from[between(random, 0, from.length - 1)] as ClusterNode;
      const others = () => nodes.filter((n) => n !== poller());
      const chaos = (async () => {
        notes.push(`seed ${SEED}`);
        await pause(between(random, 1_500, 2_500));
        await killAndRestart(poller() ?? pick(nodes), "the poller");
        await pause(between(random, 800, 2_000));
        await killAndRestart(pick(others()), "not the poller");
        await pause(between(random, 800, 2_000));
        // Stopped past its lease: another node must take over polling (and its sessions).
        const stopped = poller() ?? pick(nodes);
        notes.push(`${now()} ms: SIGSTOP ${stopped.name}`);
        stopped.stop(now());
        await pause(LEASE_TTL_MS + 2_000);
        notes.push(`${now()} ms: SIGCONT ${stopped.name}`);
        stopped.resume(now());
        await pause(between(random, 800, 2_000));
        await killAndRestart(poller() ?? pick(nodes), "the poller");
        await pause(between(random, 800, 2_000));
        await killAndRestart(poller() ?? pick(nodes), "the poller");
        await pause(between(random, 800, 2_000));
        await killAndRestart(pick(others()), "not the poller");
      })().finally(() => {
        chaosDone = true;
      });
      await Promise.all([traffic, chaos]);
      const expected = (chat: number) =>
        Array.from({ length: PER_CHAT }, (_, i) => simulated(`c${chat} m${i + 1}`));
      const missing = () => {
        let n = 0;
        for (let chat = 1; chat <= CHATS; chat++) {
          const shown = new Set(chatTexts(chat));
          n += expected(chat).filter((t) => !shown.has(t)).length;
        }
        return n;
      };
      // A timeout here is not the failure: the verdict below names what is missing.
      await until(() => missing() === 0, "every message answered", 90_000).catch(() => undefined);
      await Promise.all(nodes.map((n) => n.terminate()));
      const verdict = judgeAnswers(CHATS, chatTexts, expected, recorder.sent, signals);
      console.info(`cluster/telegram verdict: ${JSON.stringify(verdict, null, 1)}\n${notes.join("\n")}`);
      expect(verdict.lost, "lost").toEqual([]);
      expect(verdict.duplicated, "answered twice").toEqual([]);
      expect(verdict.outOfOrder, "out of order").toEqual([]);
      expect(verdict.unexpected, "texts that are no expected answer").toEqual([]);
      const overlaps = pollerOverlaps(recorder.polls, signals);
      const conflicts = recorder.polls.filter((p) => p.status === 409).length;
      console.info(
        `cluster/telegram: ${now() - startedAt} ms, ${recorder.polls.length} getUpdates, ${conflicts} answered 409, ${overlaps.length} unexcused overlaps, ${verdict.telegramWindow.length} copies in Telegram's window`,
      );
      expect(overlaps.slice(0, 10), `${overlaps.length} overlapping getUpdates of running processes`).toEqual(
        [],
      );
    } finally {
      for (const n of nodes) n.killAll();
      for (const n of nodes) n.removeFolders();
      await recorder.close();
      await tg.close();
    }
  }, 240_000);

  it("a cron job due every minute runs each of 5 slots once across three nodes", async () => {
    const startedAt = now();
    const url = await pgServer.createDatabase("cron3");
    const workspace = sharedFolder();
    const sim = new ModelSimulator();
    await sim.start();
    sim.setDefault(() => ({ text: "tick done" }));
    // One fake clock for the three in-process nodes (the gateway process has no fake-clock hook).
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 9, 0, 30));
    const config = {
      ...simulatorConfig(sim, "openai"),
      agent: { ...simulatorConfig(sim, "openai").agent, workspace },
      store: { engine: "postgres", url, poolSize: 3 },
      heartbeat: { everyMs: 0 },
      cron: { jobs: [{ name: "tick", every: "1m", message: "cron slot tick", deliver: "none" }] },
    };
    const gws: TestGateway[] = [];
    try {
      gws.push(await startTestGateway(config, { clock }));
      gws.push(...(await Promise.all([1, 2].map(() => startTestGateway(config, { clock })))));
      const store = (gws[0] as TestGateway).running.store;
      const job = await store.cron.byName("main", "tick");
      expect(job).toBeDefined();
      const jobId = job?.id ?? 0;
      const end = clock.now() + 5 * 60_000;
      const cronPrompts = () =>
        sim.requests.filter((r: SimulatedRequest) => JSON.stringify(r.body).includes("cron slot tick"))
          .length;
      for (let minute = 1; minute <= 5; minute++) {
        const stepEnd = Math.min(end, clock.now() + 60_000);
        for (let due = clock.nextDueMs(); due !== undefined && due <= stepEnd; due = clock.nextDueMs())
          await clock.advanceAsync(Math.max(0, due - clock.now()));
        await clock.advanceAsync(stepEnd - clock.now());
        await until(
          async () => {
            const rows = await store.cron.history(jobId, 20);
            return rows.length >= minute && rows.every((r) => r.state === "ok");
          },
          `slot ${minute} run`,
          30_000,
        );
      }
      const rows = (await store.cron.history(jobId, 20)).reverse();
      expect(rows.map((r) => r.state)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
      const slots = rows.map((r) => r.scheduledFor);
      expect(new Set(slots).size).toBe(5);
      expect(slots.slice(1).map((s, i) => s - (slots[i] as number))).toEqual([
        60_000, 60_000, 60_000, 60_000,
      ]);
      expect(new Set(rows.map((r) => r.runId)).size).toBe(5);
      expect(cronPrompts()).toBe(5);
      console.info(`cluster/cron: ${now() - startedAt} ms`);
    } finally {
      await Promise.all(gws.map((g) => g.stop()));
      await sim.close();
    }
  }, 120_000);

  it("an HTTP request to node A is answered by a run on node B", async () => {
    const startedAt = now();
    const url = await pgServer.createDatabase("http2");
    const workspace = sharedFolder();
    const sims = [new ModelSimulator(), new ModelSimulator()];
    for (const [i, sim] of sims.entries()) {
      await sim.start();
      sim.setDefault((r) => ({
        text: `node ${i === 0 ? "A" : "B"} answers ${readConversation(r.body).ask}`,
      }));
    }
    const signals = new Map<string, LifeSignals>();
    const config = (sim: ModelSimulator) => () =>
      [
        "gateway:",
        "  leaseTtlMs: 6000",
        "agent:",
        "  model: openai/gpt-test",
        `  workspace: ${workspace}`,
        "providers:",
        "  openai:",
        "    apiKey: sk-test-key",
        `    baseUrl: ${sim.url}/v1`,
        "store:",
        "  engine: postgres",
        `  url: ${url}`,
        "  poolSize: 4",
        "heartbeat:",
        "  everyMs: 0",
        "logging:",
        `  level: ${process.env.CLUSTER_LOG ?? "warn"}`,
        "",
      ].join("\n");
    const a = new ClusterNode(1, config(sims[0] as ModelSimulator), now, signals);
    const b = new ClusterNode(2, config(sims[1] as ModelSimulator), now, signals);
    started.push(a, b);
    try {
      await a.start();
      await b.start();
      // B runs ann's first turn and keeps the session's lease between turns (for a third of the TTL).
      const first = await postChat(b.url, "ann", "first question");
      expect(first.body.replies?.[0]?.text).toBe("node B answers first question");
      const asked = sims.map((s) => s.requests.length);
      // A accepts ann's next message; B holds the session, so the turn runs on B, and A's
      // waiting request gets the answer from the database.
      const second = await postChat(a.url, "ann", "second question");
      expect(second.status).toBe(200);
      expect(second.body.replies?.[0]?.text).toBe("node B answers second question");
      expect(sims.map((s, i) => s.requests.length - (asked[i] as number))).toEqual([0, 1]);
      console.info(`cluster/http: ${now() - startedAt} ms`);
    } finally {
      await Promise.all([a.terminate(), b.terminate()]);
      a.removeFolders();
      b.removeFolders();
      for (const sim of sims) await sim.close();
    }
  }, 120_000);
});
