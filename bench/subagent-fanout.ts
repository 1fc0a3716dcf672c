/**
 * Sub-agent fan-out (#26 Speed): a parent asked over /v1/chat spawns 20 helpers in one model
 * turn, answers at once, and is woken with all 20 results. An in-process gateway (lanes 4, 1
 * reserved for people; subagents.maxChildrenPerAgent 20) with every model call stamped as the
 * gateway sees it (bench/subagent-fanout-model.ts):
 *
 * - spawn → wake: from the end of the parent's spawn_agent model call to the start of its wake
 *   call, and the part of it when no model call was in flight ("beyond the model calls"), with
 *   the real Anthropic SDK against the simulator (0 ms) and with the model answering in-process;
 * - gateway CPU per helper: process.cpuUsage() from the person's request to the wake's stop
 *   event, divided by 20 (with the simulator, its own HTTP server and the SDK run in this
 *   process too, so that figure is an upper bound);
 * - a person's message sent while helper calls hold every model slot (no slot reserved for people,
 *   the worst case): how many slot releases its model call waited for (the "at most one")
 *   and how many helper calls took a slot meanwhile (0: people are admitted first), and its wait
 *   from send to model call, against the same message with nothing running.
 */
import { AnthropicProvider } from "../src/harness/providers/anthropic.js";
import { type BenchGateway, startBenchGateway } from "./bench-gateway.js";
import { HttpClient, isAnswered } from "./http-client.js";
import { fmt, percentile, progress, sleep } from "./stats.js";
import {
  type ModelCall,
  HELPERS,
  TimedProvider,
  coveredMs,
  instantProvider,
  kindOfBody,
  turnFor,
} from "./subagent-fanout-model.js";
import type { Benchmark, BenchRow } from "./types.js";

const WARMUP = 2;
const RUNS = 10;
const PERSON_RUNS = 10;
const MAX_CONCURRENT = 4;
const RESERVED_FOR_HUMAN = 1;
const WAIT_LIMIT_MS = 30_000;

interface FanOut {
  totalMs: number;
  beyondModelMs: number;
  cpuPerHelperMs: number;
  /** Set when a person wrote during the fan-out. */
  person?: {
    waitMs: number;
    humanSlotWaitMs: number;
    /** Helper model calls that ended while the person's call waited for a slot. */
    releasesWaited: number;
    /** Helper model calls that started (took a slot) while it waited. */
    helpersAdmittedMeanwhile: number;
  };
}

/** Rejects after `ms` with a message naming `what`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`fan-out: no ${what} in ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Polls `check` every millisecond (outside any measured window) until it holds. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + WAIT_LIMIT_MS;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`fan-out: ${what} not seen in ${WAIT_LIMIT_MS} ms`);
    await sleep(1);
  }
}

/** A gateway whose model calls are stamped; `sdk` routes them through the SDK to the simulator (exported for profiling). */
export class FanOutGateway {
  readonly timed: TimedProvider;
  readonly client = new HttpClient({ maxSockets: 8, timeoutMs: WAIT_LIMIT_MS });
  gw: BenchGateway | undefined;
  #sdk: AnthropicProvider | undefined;

  /** `reservedForHuman`: model slots only people's work may take (the person runs use 0). */
  constructor(
    readonly sdk: boolean,
    readonly reservedForHuman = RESERVED_FOR_HUMAN,
  ) {
    this.timed = new TimedProvider(() => this.#sdk ?? instantProvider);
  }

  async start(): Promise<void> {
    this.gw = await startBenchGateway({
      provider: this.timed,
      lanes: { maxConcurrent: MAX_CONCURRENT, reservedForHuman: this.reservedForHuman },
      config: { subagents: { maxChildrenPerAgent: HELPERS } },
    });
    const { simulator } = this.gw;
    simulator.setDefault((r) => turnFor(kindOfBody(r)));
    if (this.sdk) this.#sdk = new AnthropicProvider({ apiKey: "sk-ant-bench-key", baseUrl: simulator.url });
  }

  async stop(): Promise<void> {
    this.client.close();
    await this.gw?.stop();
  }

  get #url(): string {
    if (!this.gw) throw new Error("fan-out: gateway not started");
    return this.gw.url;
  }

  chat(sender: string, text: string) {
    return this.client.postJson(`${this.#url}/v1/chat`, { sender, text });
  }

  /** The sum of people's model-slot waits so far (ms), from /metrics. */
  async humanSlotWaitMs(): Promise<number> {
    const text = (await this.client.get(`${this.#url}/metrics`)).text;
    const m = /switchyard_model_slot_wait_seconds_sum\{priority="human"\} ([\d.e+-]+)/.exec(text);
    return m ? Number(m[1]) * 1000 : 0;
  }

  /** A person's message with nothing else running: send → its model call (ms). */
  async idleWait(sender: string): Promise<number> {
    const from = this.timed.calls.length;
    const sent = performance.now();
    const r = await this.chat(sender, "what time is it?");
    if (!isAnswered(r)) throw new Error(`fan-out: person not answered: ${r.status} ${r.text}`);
    const call = this.timed.calls.slice(from).find((c) => c.kind === "person");
    if (!call) throw new Error("fan-out: no model call for the person");
    return call.startMs - sent;
  }

  /** One fan-out of 20 helpers by `sender`; with `person`, that sender writes during it. */
  async fanOut(sender: string, person?: string): Promise<FanOut> {
    const gw = this.gw;
    if (!gw) throw new Error("fan-out: gateway not started");
    const from = this.timed.calls.length;
    const mine = () => this.timed.calls.slice(from);
    const slotWaitBefore = person ? await this.humanSlotWaitMs() : 0;
    let personSent = Number.NaN;
    let personReply: Promise<unknown> | undefined;
    const wakeEnded = new Promise<ModelCall>((resolve) => {
      this.timed.onCall = (c) => {
        if (person && c.kind === "helper" && personReply === undefined) {
          // Every slot helpers may take is held: the person's call has to wait for one.
          if (mine().filter((x) => x.kind === "helper").length === MAX_CONCURRENT - this.reservedForHuman) {
            personSent = performance.now();
            personReply = this.chat(person, "what time is it?");
            personReply.catch(() => {}); // awaited below
          }
        }
        if (c.kind === "wake" && !Number.isNaN(c.endMs)) resolve(c);
      };
    });
    const cpu0 = process.cpuUsage();
    const asked = await this.chat(sender, "fan out to the helpers");
    if (!isAnswered(asked) || !asked.text.includes(`asked ${HELPERS} helpers`))
      throw new Error(
        `fan-out: the parent did not answer at once: ${asked.status} ${asked.text.slice(0, 200)}`,
      );
    const wake = await within(wakeEnded, WAIT_LIMIT_MS, "wake");
    const cpu = process.cpuUsage(cpu0);
    this.timed.onCall = () => {};
    const calls = mine();
    const spawn = calls.find((c) => c.kind === "spawn");
    const helpers = calls.filter((c) => c.kind === "helper");
    if (!spawn || helpers.length !== HELPERS || wake.results !== HELPERS)
      throw new Error(
        `fan-out: ${helpers.length} helper calls, a wake with ${wake.results} results (want ${HELPERS} and ${HELPERS})`,
      );
    const totalMs = wake.startMs - spawn.endMs;
    const between = calls.filter((c) => c !== spawn && c !== wake);
    const out: FanOut = {
      totalMs,
      beyondModelMs: totalMs - coveredMs(between, spawn.endMs, wake.startMs),
      cpuPerHelperMs: (cpu.user + cpu.system) / 1000 / HELPERS,
    };
    const parent = `agent:main:http:dm:${sender}`;
    await until(async () => {
      const rows = await gw.running.store.outbox.listMailbox("http", sender, 0, 50);
      return JSON.stringify(rows).includes("Every result is in.");
    }, "the wake's answer");
    const children = await gw.running.store.subagents.listForParent(parent);
    if (children.length !== HELPERS || children.some((c) => c.state !== "done" || c.deliveredRunId === null))
      throw new Error(`fan-out: ${children.length} helpers, not all done and delivered`);
    if (person) {
      await within(personReply ?? Promise.reject(new Error("never sent")), WAIT_LIMIT_MS, "person's answer");
      const call = this.timed.calls.slice(from).find((c) => c.kind === "person");
      if (!call) throw new Error("fan-out: no model call for the person");
      const slotWaitMs = (await this.humanSlotWaitMs()) - slotWaitBefore;
      // The person's call asked for a slot slotWaitMs before it started (the only human call here).
      const asked = call.startMs - slotWaitMs;
      const inWait = (t: number) => t >= asked && t <= call.startMs;
      out.person = {
        waitMs: call.startMs - personSent,
        humanSlotWaitMs: slotWaitMs,
        releasesWaited: helpers.filter((h) => inWait(h.endMs)).length,
        helpersAdmittedMeanwhile: helpers.filter((h) => h.startMs > asked && h.startMs < call.startMs).length,
      };
    }
    if (calls.filter((c) => c.kind === "wake").length !== 1) throw new Error("fan-out: more than one wake");
    return out;
  }
}

/** Plain /v1/chat turns measured for comparison with a helper's CPU. */
const PLAIN_TURNS = 100;

/**
 * WARMUP + RUNS fan-outs on one gateway (the warm-ups dropped), then the gateway CPU of a plain
 * /v1/chat turn on it (HTTP client and server included): what one turn costs, whatever its origin.
 */
async function fanOuts(sdk: boolean): Promise<{ runs: FanOut[]; plainTurnCpuMs: number }> {
  const g = new FanOutGateway(sdk);
  try {
    await g.start();
    const runs: FanOut[] = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const r = await g.fanOut(`fan${i}`);
      if (i >= WARMUP) runs.push(r);
    }
    for (let i = 0; i < 10; i++) await g.idleWait(`plain${i}`);
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < PLAIN_TURNS; i++) await g.idleWait(`plain${i % 10}`);
    const cpu = process.cpuUsage(cpu0);
    return { runs, plainTurnCpuMs: (cpu.user + cpu.system) / 1000 / PLAIN_TURNS };
  } finally {
    await g.stop();
  }
}

/** Idle waits of a person, then fan-outs during which the same person writes. */
async function personRuns(): Promise<{ idle: number[]; during: NonNullable<FanOut["person"]>[] }> {
  const g = new FanOutGateway(true, 0);
  try {
    await g.start();
    await g.fanOut("warm"); // warm-up
    const idle: number[] = [];
    for (let i = 0; i < WARMUP + PERSON_RUNS; i++) {
      const w = await g.idleWait("bob");
      if (i >= WARMUP) idle.push(w);
    }
    const during: NonNullable<FanOut["person"]>[] = [];
    for (let i = 0; i < PERSON_RUNS; i++) {
      const r = await g.fanOut(`busy${i}`, "bob");
      if (r.person) during.push(r.person);
    }
    return { idle, during };
  } finally {
    await g.stop();
  }
}

const p = (xs: number[], q: number) => percentile(xs, q);

/** 20 helpers: spawn → wake time, CPU per helper, and a person's wait during the fan-out. */
export const subagentFanout: Benchmark = {
  id: "subagent-fanout",
  async run(): Promise<BenchRow[]> {
    const { runs: sdk } = await fanOuts(true);
    const { runs: own, plainTurnCpuMs } = await fanOuts(false);
    const pick = (rs: FanOut[], f: (r: FanOut) => number) => rs.map(f);
    const beyond = pick(sdk, (r) => r.beyondModelMs);
    const total = pick(sdk, (r) => r.totalMs);
    const ownTotal = pick(own, (r) => r.totalMs);
    const cpuSdk = pick(sdk, (r) => r.cpuPerHelperMs);
    const cpuOwn = pick(own, (r) => r.cpuPerHelperMs);
    progress(
      `subagent-fanout: spawn → wake p50 ${fmt(p(total, 50), 1)} ms (beyond the model calls ${fmt(p(beyond, 50), 1)}); in-process model ${fmt(p(ownTotal, 50), 1)} ms`,
    );
    const { idle, during } = await personRuns();
    const waits = during.map((d) => d.waitMs);
    const releases = Math.max(...during.map((d) => d.releasesWaited));
    const admitted = Math.max(...during.map((d) => d.helpersAdmittedMeanwhile));
    const slotWaits = during.map((d) => d.humanSlotWaitMs);
    progress(
      `subagent-fanout: person's wait p50 ${fmt(p(waits, 50), 1)} ms, ≤ ${releases} slot release(s) waited, ${admitted} helper calls admitted meanwhile`,
    );
    return [
      {
        benchmark: `Fan-out of ${HELPERS} helpers (simulator 0 ms, real SDK): parent's spawn_agent call → its wake with all ${HELPERS} results (ms, ${RUNS} runs): beyond the model calls p50/p90; total p50; with the model in-process p50`,
        figure: `${fmt(p(beyond, 50), 1)} / ${fmt(p(beyond, 90), 1)}; total ${fmt(p(total, 50), 1)}; in-process ${fmt(p(ownTotal, 50), 1)}`,
        target: "< 50 ms beyond the model calls",
        met: p(beyond, 90) < 50,
        values: {
          beyondP50Ms: p(beyond, 50),
          beyondP90Ms: p(beyond, 90),
          totalP50Ms: p(total, 50),
          totalP90Ms: p(total, 90),
          inProcessP50Ms: p(ownTotal, 50),
          inProcessP90Ms: p(ownTotal, 90),
        },
      },
      {
        benchmark: `Gateway CPU per helper in that fan-out (ms, p50/p90 of ${RUNS}): model in-process; with SDK and simulator in the same process; a plain /v1/chat turn on the same gateway (model in-process, HTTP included)`,
        figure: `${fmt(p(cpuOwn, 50))} / ${fmt(p(cpuOwn, 90))}; ${fmt(p(cpuSdk, 50))} / ${fmt(p(cpuSdk, 90))}; plain turn ${fmt(plainTurnCpuMs)}`,
        target: "< 2 ms",
        met: p(cpuOwn, 90) < 2,
        values: {
          cpuP50Ms: p(cpuOwn, 50),
          cpuP90Ms: p(cpuOwn, 90),
          cpuWithSdkP50Ms: p(cpuSdk, 50),
          cpuWithSdkP90Ms: p(cpuSdk, 90),
          plainTurnCpuMs,
        },
      },
      {
        benchmark: `A person's message while helper calls hold all ${MAX_CONCURRENT} model slots (none reserved; ${PERSON_RUNS} runs): slot releases its model call waited for (max); helper calls admitted meanwhile (max); its slot wait p50/max; send → model call p50/max (ms) vs idle p50`,
        figure: `${releases}; ${admitted}; ${fmt(p(slotWaits, 50), 2)} / ${fmt(p(slotWaits, 100), 2)}; ${fmt(p(waits, 50), 1)} / ${fmt(p(waits, 100), 1)} vs ${fmt(p(idle, 50), 1)}`,
        target: "at most one slot release, no helper admitted first",
        met: releases <= 1 && admitted === 0,
        values: {
          releasesWaitedMax: releases,
          helpersAdmittedMax: admitted,
          slotWaitP50Ms: p(slotWaits, 50),
          slotWaitMaxMs: p(slotWaits, 100),
          waitP50Ms: p(waits, 50),
          waitMaxMs: p(waits, 100),
          idleWaitP50Ms: p(idle, 50),
        },
      },
    ];
  },
};
