/**
 * A 200-run assignment on the BUILT daemon (`node bin/switchyard.js gateway`, as
 * bench/gateway-child.ts starts it), its Anthropic provider pointed at a ModelSimulator in this
 * process that answers at once. The assignment is stored in the fresh home before the spawn, as
 * `switchyard task add` does (newAssignment + startAssignment: the assignment and a wake due
 * now), with `assignments.maxRuns: 250`; the daemon's scheduler runs it on its own from there.
 *
 * The simulated model reads each run's handoff (the trigger `Assignment <id>, run N of at most
 * …`) and answers with one response per run, so every run is exactly one model call: run 1 adds
 * five work items; every run appends a line to projects/<id>/notes.md with edit_file (its
 * old_text is the last line of the notes the handoff shows, as a model would copy it), updates
 * the work item of its stretch (item k is in progress over runs 40k-39..40k, done at run 40k)
 * and ends with end_run {next: continue, state}; run 200 marks the last item done and calls
 * work_complete. The run must end `done` with 200 runs, 200 model calls and 200 notes lines.
 *
 * - Gateway CPU per run: the child's CPU time (every thread's run time from
 *   /proc/<pid>/task/<tid>/schedstat, the main thread's alone, and utime+stime from /proc/<pid>/stat
 *   as a coarse cross-check), read when the simulator receives run 1's request and run 200's,
 *   divided by the 199 whole run cycles between them (the child is blocked on the model at both
 *   reads); also runs 101-200 alone (warm). A cycle is all the daemon does per run: its side of
 *   the model call (request build and serialization, HTTP, stream parsing), the tools, the
 *   transcript, the stop decision, the project files, the wake, the scheduler and the next run's
 *   handoff. "Beyond the model calls" subtracts a measured baseline: after the daemon is gone,
 *   bench/model-call-child.ts (its own process) streams run 200's exact request through the
 *   gateway's own AnthropicProvider (SDK + its node:http transport) to the same simulator, one
 *   call to load it, then 200 measured; its CPU per call (all threads) times the model calls per
 *   run. The 200 calls are the daemon's window call for call, in the same state of V8's JIT
 *   (cold at first, warm later: the SDK's warm-up is the model call's, not the gateway's), and
 *   the warm figure (runs 101-200) subtracts the baseline's second half. The target is judged
 *   on that difference; both figures are shown.
 * - Prompt size: run 1's and run 200's request body (JSON characters) and prompt tokens by the
 *   simulator's own estimate (system + tools + messages, PromptCache's ceil(chars / 4)).
 * - Wall time: run 1's start to run 200's end, from the assignment's run ledger.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseConfig } from "../src/config/load.js";
import { workspaceDirOf } from "../src/config/home.js";
import {
  assignmentDefaults,
  newAssignment,
  startAssignment,
} from "../src/harness/assignments/assignments.js";
import {
  ModelSimulator,
  type ScriptedTurn,
  type SimulatedRequest,
} from "../src/simulator/model-simulator.js";
import { PromptCache } from "../src/simulator/prompt-cache.js";
import type { Assignment, AssignmentRun } from "../src/store/repos/assignment-repo.js";
import { openSqliteStore } from "../src/store/sqlite/open-sqlite-store.js";
import { type GatewayChild, spawnGateway, waitReady } from "./gateway-child.js";
import { HttpClient } from "./http-client.js";
import { fmt, median, percentile, progress, sleep } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";
import { type CpuSample, cpuOf } from "./proc-cpu.js";

const RUNS = 200;
const MAX_RUNS = 250;
const ITEMS = 5;
/** Runs per work item: item k is worked on in runs 40k-39..40k and done at run 40k. */
const RUNS_PER_ITEM = RUNS / ITEMS;
const LIMIT_MS = 120_000;
const POLL_MS = 50;
const CPU_TARGET_MS = 5;
const PROMPT_TOLERANCE = 0.1;
/** Runs whose request reads the child's CPU: all runs' cycles (1→200) and the warm second half (101→200). */
const HALF = RUNS / 2 + 1;
const CPU_AT = [1, HALF, RUNS];
/** Runs whose prompt size is kept. */
const PROMPT_AT = [1, 2, RUNS / 2, RUNS];
/** The model-call baseline (bench/model-call-child.ts): its API key, warm-up and measured calls. */
const BASELINE_KEY = "sk-ant-baseline";
const BASELINE_WARMUP = 1;
const BASELINE_CALLS = RUNS;
const BASELINE_LIMIT_MS = 30_000;
const ROOT = resolve(import.meta.dirname, "..");
const CALL_CHILD = join(import.meta.dirname, "model-call-child.ts");
const TICKS_PER_S = 100; // USER_HZ: Linux reports utime/stime in 1/100 s
const GOAL =
  "Survey the five tide pools on the north shore: one write-up per pool, kept in the project notes, and a summary at the end.";

const CONFIG = (simulatorUrl: string) => ({
  agent: { model: "anthropic/claude-bench" },
  providers: { anthropic: { apiKey: "sk-ant-bench-key", baseUrl: simulatorUrl } },
  assignments: { maxRuns: MAX_RUNS },
});

/** The same configuration as the child's switchyard.yaml (JSON is YAML). */
function configYaml(simulatorUrl: string): string {
  return `${JSON.stringify(CONFIG(simulatorUrl), null, 2)}\n`;
}

/** A CPU reading taken at one run's handoff. */
interface RunCpuSample extends CpuSample {
  /** The run whose request it was read at. */
  runNo: number;
}

/** CPU per run cycle between two samples taken at run requests (ms). */
function perRun(from: RunCpuSample, to: RunCpuSample) {
  const cycles = to.runNo - from.runNo;
  return {
    cpuMs: (to.runNs - from.runNs) / 1e6 / cycles,
    mainMs: (to.mainNs - from.mainNs) / 1e6 / cycles,
    ticksMs: ((to.ticks - from.ticks) * (1000 / TICKS_PER_S)) / cycles,
  };
}

/** The text of a message's content (a string, or an array of blocks). */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) =>
      typeof part === "object" && part !== null && (part as { type?: unknown }).type === "text"
        ? String((part as { text?: unknown }).text)
        : "",
    )
    .join("\n");
}

/** The handoff in a request: the newest user message that is one, or undefined. */
function handoffOf(body: unknown): { id: string; runNo: number; text: string } | undefined {
  const messages = (body as { messages?: unknown })?.messages;
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown };
    if (m?.role !== "user") continue;
    const text = contentText(m.content);
    const match = /Assignment (t[a-z0-9]+), run (\d+) of at most \d+\./.exec(text);
    if (match?.[1] && match[2]) return { id: match[1], runNo: Number(match[2]), text };
  }
  return undefined;
}

/** The last non-empty line of the notes the handoff shows (what edit_file's old_text copies). */
function lastNotesLine(handoff: string): string {
  const section = /## projects\/[^/\n]+\/notes\.md \(its end\)\n([\s\S]*?)\n\n## How to work/.exec(
    handoff,
  )?.[1];
  const line = section
    ?.split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l !== "")
    .at(-1);
  if (!line || line === "(empty)") throw new Error(`no notes in the handoff:\n${handoff.slice(0, 2_000)}`);
  return line;
}

/** The one response of run `runNo` (see the file header). */
function runTurn(id: string, runNo: number, handoff: string): ScriptedTurn {
  const toolCalls: Array<{ name: string; args: unknown }> = [];
  if (runNo === 1)
    for (let k = 1; k <= ITEMS; k++)
      toolCalls.push({ name: "work_item_add", args: { title: `Write up tide pool ${k}` } });
  const item = Math.min(ITEMS, Math.ceil(runNo / RUNS_PER_ITEM));
  const finished = runNo % RUNS_PER_ITEM === 0 || runNo >= RUNS;
  const last = lastNotesLine(handoff);
  toolCalls.push({
    name: "edit_file",
    args: {
      path: `projects/${id}/notes.md`,
      old_text: last,
      new_text: `${last}\n- run ${runNo}: measured pool ${item}, transect ${((runNo - 1) % RUNS_PER_ITEM) + 1}`,
    },
  });
  toolCalls.push({
    name: "work_item_update",
    args: {
      id: item,
      status: finished ? "done" : "in_progress",
      notes: `last worked on in run ${runNo}`,
    },
  });
  if (runNo >= RUNS) {
    toolCalls.push({
      name: "work_complete",
      args: {
        summary: `All ${ITEMS} tide pools written up over ${runNo} runs; see projects/${id}/notes.md.`,
      },
    });
  } else {
    toolCalls.push({
      name: "end_run",
      args: {
        next: "continue",
        state: `# Session state\n\nRun ${runNo} done: pool ${item}${finished ? " is written up" : " in progress"}.\nNext: run ${runNo + 1} goes on with pool ${finished ? item + 1 : item}.`,
      },
    });
  }
  return { toolCalls };
}

/** One request's prompt size: the body's JSON characters and the simulator's token estimate. */
interface PromptSize {
  chars: number;
  tokens: number;
}

function promptSize(request: SimulatedRequest): PromptSize {
  const body = request.body as Record<string, unknown>;
  const u = new PromptCache().measure("anthropic", body); // fresh: no cache read, the whole prompt
  return {
    chars: JSON.stringify(body).length,
    tokens: u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens,
  };
}

/** Stores the assignment and its first wake in `home`, as `switchyard task add` does. */
async function seedAssignment(home: string, simulatorUrl: string): Promise<string> {
  const config = parseConfig(CONFIG(simulatorUrl), undefined);
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  try {
    const a = newAssignment(
      { goal: GOAL, owner: null },
      assignmentDefaults(config.agent.id, config.assignments),
      Date.now(),
    );
    await startAssignment(store, a, Date.now());
    return a.id;
  } finally {
    await store.close();
  }
}

interface Final {
  assignment: Assignment;
  runs: AssignmentRun[];
}

/** Polls the daemon's store (read-only) until the assignment is in a final state. */
async function waitFinal(
  gw: GatewayChild,
  id: string,
  startedAt: number,
  responderError: () => unknown,
): Promise<Final> {
  const store = openSqliteStore({ path: join(gw.home, "switchyard.db"), readonly: true });
  try {
    let lastReport = performance.now();
    for (;;) {
      if (gw.child.exitCode !== null || gw.child.signalCode !== null)
        throw new Error(`gateway exited (${gw.child.exitCode ?? gw.child.signalCode}):\n${gw.stderrTail()}`);
      const failed = responderError();
      if (failed) throw new Error(`the simulated model could not answer: ${String(failed)}`);
      const a = await store.assignments.get(id);
      if (!a) throw new Error(`assignment ${id} is not in the store`);
      if (!["active", "sleeping", "requires_action"].includes(a.state))
        return { assignment: a, runs: await store.assignments.runs(id, MAX_RUNS + 10) };
      const elapsed = performance.now() - startedAt;
      if (elapsed > LIMIT_MS)
        throw new Error(
          `assignment ${id} still ${a.state} after ${LIMIT_MS / 1000} s (${a.checkpoint.runs} runs; ${a.stateReason ?? "no reason"})`,
        );
      if (performance.now() - lastReport > 5_000) {
        lastReport = performance.now();
        progress(`assignment: ${a.checkpoint.runs}/${RUNS} runs after ${fmt(elapsed / 1000, 1)} s`);
      }
      await sleep(POLL_MS);
    }
  } finally {
    await store.close();
  }
}

/**
 * The model-call baseline: bench/model-call-child.ts streams `body` through the gateway's
 * AnthropicProvider to the simulator; resolves with its CPU per call (ms, all threads): of all
 * its measured calls, and of their second half.
 */
async function modelCallBaseline(
  simulatorUrl: string,
  body: unknown,
): Promise<{ allMs: number; secondHalfMs: number }> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      CALL_CHILD,
      simulatorUrl,
      BASELINE_KEY,
      String(BASELINE_WARMUP),
      String(BASELINE_CALLS),
    ],
    { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME }, stdio: ["pipe", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-4096);
  });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  child.stdin.end(JSON.stringify(body));
  const timer = setTimeout(() => child.kill("SIGKILL"), BASELINE_LIMIT_MS);
  try {
    const code = await exited;
    if (code !== 0) throw new Error(`model-call baseline exited ${code ?? "on a signal"}:\n${err}`);
    const r = JSON.parse(out) as { cpuMsPerCall: number; secondHalfMsPerCall: number };
    return { allMs: r.cpuMsPerCall, secondHalfMs: r.secondHalfMsPerCall };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

/** A 200-run assignment with the simulator answering at once. */
export const assignmentBench: Benchmark = {
  id: "assignment",
  async run(): Promise<BenchRow[]> {
    const simulator = new ModelSimulator({ keepRequests: 1 });
    const client = new HttpClient({ maxSockets: 1, timeoutMs: 1_000 });
    let gw: GatewayChild | undefined;
    try {
      await simulator.start();
      let id = "";
      let pid = -1;
      let calls = 0;
      let others = 0;
      let lastBody: unknown;
      let lastTurn: ScriptedTurn | undefined;
      let responderError: string | undefined;
      const prompts = new Map<number, PromptSize>();
      const cpuAt = new Map<number, RunCpuSample>();
      simulator.setDefault((request) => {
        if (request.apiKey === BASELINE_KEY && lastTurn) return lastTurn;
        calls++;
        const handoff = handoffOf(request.body);
        if (!handoff || handoff.id !== id) {
          others++;
          return { text: "(not an assignment run)" };
        }
        // The child waits for this answer: its CPU now is that of the runs before this call.
        if (CPU_AT.includes(handoff.runNo) && !cpuAt.has(handoff.runNo))
          cpuAt.set(handoff.runNo, { runNo: handoff.runNo, ...cpuOf(pid) });
        if (PROMPT_AT.includes(handoff.runNo) && !prompts.has(handoff.runNo))
          prompts.set(handoff.runNo, promptSize(request));
        try {
          const turn = runTurn(handoff.id, handoff.runNo, handoff.text);
          if (handoff.runNo === RUNS) [lastBody, lastTurn] = [request.body, turn];
          return turn;
        } catch (err) {
          responderError ??= err instanceof Error ? err.message : String(err);
          throw err;
        }
      });
      gw = await spawnGateway({
        configYaml: configYaml(simulator.url),
        prepareHome: async (home) => {
          id = await seedAssignment(home, simulator.url);
        },
      });
      pid = gw.pid;
      await waitReady(gw, client);
      client.close();
      progress(`assignment: ${id} started`);
      const { assignment: a, runs } = await waitFinal(gw, id, performance.now(), () => responderError);
      if (a.state !== "done")
        throw new Error(
          `assignment ${id} ended ${a.state} after ${a.checkpoint.runs} runs: ${a.stateReason ?? "no reason given"}`,
        );
      const workspace = workspaceDirOf(parseConfig(CONFIG(simulator.url), undefined), gw.home);
      const notes = readFileSync(join(workspace, "projects", id, "notes.md"), "utf8");
      const noted = notes.split("\n").filter((l) => /^- run \d+: /.test(l)).length;
      const [first, half, last] = CPU_AT.map((n) => cpuAt.get(n));
      const p1 = prompts.get(1);
      const pN = prompts.get(RUNS);
      if (a.checkpoint.runs !== RUNS || runs.length !== RUNS || !first || !half || !last || !p1 || !pN)
        throw new Error(`expected ${RUNS} runs, got ${a.checkpoint.runs} (${runs.length} in the ledger)`);
      if (noted !== RUNS) throw new Error(`notes.md holds ${noted} run lines, expected ${RUNS}`);
      if (a.items.length !== ITEMS || a.items.some((i) => i.status !== "done"))
        throw new Error(`work items: ${a.items.map((i) => `#${i.id} ${i.status}`).join(", ")}`);
      await gw.kill(); // the baseline gets the machine to itself
      gw = undefined;
      const baseline = await modelCallBaseline(simulator.url, lastBody);
      const baselineMs = baseline.allMs;

      const cycles = RUNS - 1;
      const all = perRun(first, last);
      const warm = perRun(half, last);
      const callsPerRun = (a.checkpoint.turns + others) / RUNS;
      const modelMs = baselineMs * callsPerRun;
      const warmModelMs = baseline.secondHalfMs * callsPerRun;
      const beyondMs = all.cpuMs - modelMs;
      const warmBeyondMs = warm.cpuMs - warmModelMs;
      const sorted = [...runs].sort((x, y) => x.runNo - y.runNo);
      const wallMs = (sorted.at(-1)?.endedAt ?? Number.NaN) - (sorted[0]?.startedAt ?? Number.NaN);
      const runWalls = sorted.map((r) => (r.endedAt ?? Number.NaN) - r.startedAt);
      const gaps = sorted
        .slice(1)
        .map((r, i) => r.startedAt - ((sorted[i] as AssignmentRun).endedAt ?? Number.NaN));
      const ratio = pN.chars / p1.chars;
      const tokenRatio = pN.tokens / p1.tokens;
      const sizeOf = (n: number) => {
        const p = prompts.get(n);
        return p ? `${p.chars} chars / ${p.tokens} tok` : "?";
      };
      progress(
        `assignment: ${RUNS} runs in ${fmt(wallMs / 1000, 2)} s (run p50 ${fmt(median(runWalls), 1)} ms, ` +
          `next run starts p50 ${fmt(median(gaps), 1)} / p99 ${fmt(percentile(gaps, 99), 1)} ms after); ` +
          `CPU per run ${fmt(all.cpuMs)} ms (main thread ${fmt(all.mainMs)}, other threads ${fmt(all.cpuMs - all.mainMs)}, ` +
          `stat ticks ${fmt(all.ticksMs)}); runs ${HALF}-${RUNS} alone ${fmt(warm.cpuMs)} ms (main ${fmt(warm.mainMs)}); ` +
          `model-call baseline ${fmt(baselineMs)} ms/call (second half ${fmt(baseline.secondHalfMs)}); ${calls} model calls (${others} not of a run); ` +
          `prompts: run 1 ${sizeOf(1)}, run 2 ${sizeOf(2)}, run ${RUNS / 2} ${sizeOf(RUNS / 2)}, run ${RUNS} ${sizeOf(RUNS)}`,
      );
      return [
        {
          benchmark: `Assignment: gateway CPU per run beyond the model calls, ${RUNS}-run assignment, built daemon, simulator answering at once (ms; all threads, ${cycles} run cycles)`,
          figure:
            `${fmt(beyondMs)} ms/run = ${fmt(all.cpuMs)} in all (main thread ${fmt(all.mainMs)}) − ${fmt(modelMs)} model-call client ` +
            `(${fmt(callsPerRun)} calls/run × ${fmt(baselineMs)} ms, its first ${BASELINE_CALLS} calls measured apart); runs ${HALF}-${RUNS} alone: ` +
            `${fmt(warmBeyondMs)} beyond, ${fmt(warm.cpuMs)} in all − ${fmt(warmModelMs)}`,
          target: `< ${CPU_TARGET_MS} ms`,
          met: beyondMs < CPU_TARGET_MS,
          values: {
            beyondModelMsPerRun: beyondMs,
            cpuMsPerRun: all.cpuMs,
            mainThreadMsPerRun: all.mainMs,
            ticksMsPerRun: all.ticksMs,
            warmBeyondModelMsPerRun: warmBeyondMs,
            warmCpuMsPerRun: warm.cpuMs,
            warmMainThreadMsPerRun: warm.mainMs,
            modelCallMs: baselineMs,
            warmModelCallMs: baseline.secondHalfMs,
            modelCallsPerRun: callsPerRun,
            runs: RUNS,
          },
        },
        {
          benchmark: `Assignment: prompt size of run ${RUNS} vs run 1 (request body chars; simulator's token estimate)`,
          figure:
            `run 1 ${p1.chars} chars / ${p1.tokens} tok, run ${RUNS} ${pN.chars} / ${pN.tokens} ` +
            `(×${fmt(ratio, 3)} chars, ×${fmt(tokenRatio, 3)} tokens; run 2 ${sizeOf(2)}, run ${RUNS / 2} ${sizeOf(RUNS / 2)})`,
          target: `run ${RUNS} within ${PROMPT_TOLERANCE * 100}% of run 1`,
          met: Math.abs(ratio - 1) <= PROMPT_TOLERANCE && Math.abs(tokenRatio - 1) <= PROMPT_TOLERANCE,
          values: {
            run1Chars: p1.chars,
            run1Tokens: p1.tokens,
            lastRunChars: pN.chars,
            lastRunTokens: pN.tokens,
            charsRatio: ratio,
            tokensRatio: tokenRatio,
          },
        },
        {
          benchmark: `Assignment: wall time of the ${RUNS} runs (s; run 1's start to run ${RUNS}'s end, run ledger)`,
          figure: `${fmt(wallMs / 1000, 2)} s (run p50 ${fmt(median(runWalls), 1)} ms; next run starts p50 ${fmt(median(gaps), 1)} / p99 ${fmt(percentile(gaps, 99), 1)} ms after)`,
          target: "—",
          values: {
            wallMs,
            runP50Ms: median(runWalls),
            gapP50Ms: median(gaps),
            gapP99Ms: percentile(gaps, 99),
          },
        },
      ];
    } finally {
      client.close();
      await gw?.kill();
      await simulator.close();
    }
  },
};
