/**
 * `lanes.clusterMaxConcurrent` end to end: two gateways on one store (one SQLite file; one
 * PostgreSQL database), the real OpenAI SDK against the model simulator, people over HTTP.
 * With a cap of 1 the two gateways never have two model calls in flight together, and a
 * person's message on gateway B is served before helper work (`normal`) queued earlier on A.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator, type ScriptedTurn, type SimulatedRequest } from "../fakes/model-simulator.js";
import { type TestPostgres, startPostgres } from "../helpers/postgres.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

type Message = { role: string; content?: unknown };
const messagesOf = (r: SimulatedRequest) => (r.body as { messages: Message[] }).messages;
const text = (r: SimulatedRequest) => JSON.stringify(messagesOf(r));
const isHelper = (r: SimulatedRequest): boolean =>
  String(messagesOf(r)[0]?.content ?? "").startsWith("You are a helper agent");

/** What each model call was, in the order the simulator received them. */
function label(r: SimulatedRequest): string {
  if (isHelper(r)) return "helper";
  if (text(r).includes("hello from bob")) return "bob";
  if (messagesOf(r).at(-1)?.role === "tool") return "ann after spawning";
  if (text(r).includes("[helper ")) return "ann woken";
  return "ann";
}

describe("the cluster-wide model-call cap", () => {
  let sim: ModelSimulator;
  let pg: TestPostgres | undefined;
  let inFlight = 0;
  let maxInFlight = 0;
  let releaseHelper: () => void = () => {};
  let helperHeld: Promise<void> = Promise.resolve();
  let helpersSeen = 0;

  /** Ann fans out to two helpers; the first helper's call blocks until the test lets it go. */
  async function responder(r: SimulatedRequest): Promise<ScriptedTurn> {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const what = label(r);
      if (what === "helper" && ++helpersSeen === 1) await helperHeld;
      if (what === "ann")
        return {
          toolCalls: [1, 2].map((i) => ({
            name: "spawn_agent",
            args: { task: `Part ${i}.`, label: `p${i}` },
          })),
        };
      return { text: `done: ${what}` };
    } finally {
      inFlight--;
    }
  }

  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    sim.setDefault(responder);
  });
  afterAll(async () => {
    await sim?.close();
    await pg?.stop();
  });

  /** The scenario on two running gateways sharing one store. */
  async function personFirstAcrossNodes(a: TestGateway, b: TestGateway): Promise<void> {
    inFlight = 0;
    maxInFlight = 0;
    helpersSeen = 0;
    helperHeld = new Promise((resolve) => {
      releaseHelper = resolve;
    });
    const from = sim.requests.length;
    const labels = () => sim.requests.slice(from).map(label);
    const census = () => a.running.store.permits.census(Date.now());
    const ann = a.chat("ann", "fan out please");
    // One helper holds the one permit; the other (normal) waits on A, its demand in the store.
    // Ann's own next call (human) has run already or waits too: whichever A admitted first.
    let annWaits = 0;
    await until(
      async () => {
        const c = await census();
        annWaits = labels().includes("ann after spawning") ? 0 : 1;
        return labels().includes("helper") && c.demands.normal === 1 && c.demands.human === annWaits;
      },
      "one helper running, the other waiting",
      30_000,
    );
    const bob = b.chat("bob", "hello from bob");
    await until(
      async () => (await census()).demands.human === annWaits + 1,
      "Bob's call waiting on gateway B",
      30_000,
    );
    releaseHelper();
    expect((await bob).body.replies?.[0]?.text).toBe("done: bob");
    expect((await ann).body.replies?.[0]?.text).toBe("done: ann after spawning");
    await until(() => labels().filter((l) => l === "helper").length === 2, "the second helper's call");
    // B's person (and A's) before the helper work A queued first.
    const order = labels();
    expect(order.lastIndexOf("helper")).toBeGreaterThan(order.indexOf("bob"));
    expect(order.lastIndexOf("helper")).toBeGreaterThan(order.indexOf("ann after spawning"));
    expect(order.indexOf("bob")).toBeGreaterThan(order.indexOf("helper"));
    await until(() => labels().includes("ann woken"), "Ann woken with the helpers' results");
    expect(maxInFlight).toBe(1);
    await until(async () => Object.keys((await census()).permits).length === 0, "every permit released");
  }

  it("two gateways on one SQLite file: one call at a time, the person on B before A's helpers", async () => {
    const home = mkdtempSync(join(tmpdir(), "sy-cluster-"));
    const config = { ...simulatorConfig(sim, "openai"), lanes: { clusterMaxConcurrent: 1 } };
    const a = await startTestGateway(config, { home });
    const b = await startTestGateway(config, { home });
    try {
      await personFirstAcrossNodes(a, b);
    } finally {
      releaseHelper();
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 30_000);

  it("two gateways on one PostgreSQL database: the same", async () => {
    pg = await startPostgres();
    const url = await pg.createDatabase("permits");
    const workspace = mkdtempSync(join(tmpdir(), "sy-shared-ws-"));
    const base = simulatorConfig(sim, "openai");
    const config = {
      ...base,
      agent: { ...base.agent, workspace },
      store: { engine: "postgres", url, poolSize: 4 },
      lanes: { clusterMaxConcurrent: 1 },
    };
    const [a, b] = await Promise.all([startTestGateway(config), startTestGateway(config)]);
    try {
      await personFirstAcrossNodes(a, b);
    } finally {
      releaseHelper();
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 120_000);
});
