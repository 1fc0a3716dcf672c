/**
 * Plan and execute modes end to end over the HTTP channel, the real provider SDK and the model
 * simulator: `/plan` narrows what the model is offered (the request's tools and the stable
 * prompt's tool list) to read-only tools and write_file, a call to anything else — write_file to
 * a file but PLAN.md, exec — is refused naming the mode and changes nothing, PLAN.md is written,
 * and the volatile part says so; `/execute` offers every tool again and puts PLAN.md into the next
 * turn's context. The mode is session state: it survives a restart on the same home and a
 * compaction.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

const ENV = { PATH: process.env.PATH };
const REFUSED =
  "was not run — plan mode: only read-only tools and write_file to PLAN.md; /execute leaves plan mode";

interface Body {
  system?: unknown;
  tools?: Array<{ name: string }>;
  messages?: Array<{ role: string; content: unknown }>;
}

const bodyOf = (sim: ModelSimulator, i: number): Body => (sim.requests[i]?.body ?? {}) as Body;
const toolNames = (sim: ModelSimulator, i: number): string[] =>
  (bodyOf(sim, i).tools ?? []).map((t) => t.name);
/** The stable prompt's tool list lines (`- name: …`). */
const listedTools = (sim: ModelSimulator, i: number): string[] =>
  [...JSON.stringify(bodyOf(sim, i).system).matchAll(/\\n- ([a-z_]+): /g)].map((m) => m[1] ?? "");
/** The newest user message: where the volatile context rides. */
const lastUser = (sim: ModelSimulator, i: number): string =>
  JSON.stringify(
    bodyOf(sim, i)
      .messages?.filter((m) => m.role === "user")
      .at(-1)?.content ?? "",
  );

function config(sim: ModelSimulator, extra: Record<string, unknown> = {}) {
  return {
    ...simulatorConfig(sim, "anthropic"),
    tools: { exec: { enabled: true, sandbox: "none" } },
    heartbeat: { everyMs: 0 },
    ...extra,
  };
}

describe("plan and execute modes over /v1/chat", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    gw = await startTestGateway(config(sim), { env: ENV });
  });
  afterAll(async () => {
    await gw.stop();
    await sim.close();
  });
  afterEach(() => sim.clearScript());

  it("in plan mode offers only read-only tools and write_file, refuses the rest, writes only PLAN.md", async () => {
    const ws = gw.running.workspaceDir;
    const normal = sim.requests.length;
    await gw.chat("ann", "hello");
    expect(toolNames(sim, normal)).toEqual(expect.arrayContaining(["exec", "edit_file", "cron_add"]));
    expect(listedTools(sim, normal)).toEqual(expect.arrayContaining(["exec", "edit_file"]));

    const plan = await gw.chat("ann", "/plan");
    expect(plan.body.replies?.[0]?.text).toBe(
      "📝 Plan mode: I look around and write the plan into PLAN.md, changing nothing else; /execute when you approve it.",
    );
    const first = sim.requests.length;
    sim.script(
      {
        toolCalls: [
          { name: "write_file", args: { path: "notes.md", content: "not yet" } },
          { name: "exec", args: { command: "touch ran.txt" } },
          { name: "write_file", args: { path: "PLAN.md", content: "1. Add the flag\n2. Test it\n" } },
        ],
      },
      { text: "The plan is in PLAN.md." },
    );
    const r = await gw.chat("ann", "plan the flag");
    expect(r.body.replies?.[0]?.text).toBe("The plan is in PLAN.md.");

    // Layer 2: offered neither in the request's tools nor in the stable prompt's list.
    const offered = toolNames(sim, first);
    expect(offered).toEqual(expect.arrayContaining(["read_file", "list_files", "write_file"]));
    for (const hidden of ["exec", "edit_file", "memory_write", "cron_add"]) {
      expect(offered).not.toContain(hidden);
      expect(listedTools(sim, first)).not.toContain(hidden);
    }
    // Layer 1: the volatile part says what plan mode is and where the plan goes.
    expect(lastUser(sim, first)).toContain("# Mode: plan");
    expect(lastUser(sim, first)).toContain("Write the plan into PLAN.md");
    expect(JSON.stringify(bodyOf(sim, first).system)).not.toContain("Mode: plan");
    // The environment block says which tools the mode withholds, and how to get them back.
    expect(lastUser(sim, first)).toMatch(
      /Not available here: [^(]*edit_file[^(]*\(plan mode: \/execute leaves it\)/,
    );
    // Layer 3: called anyway, refused naming the mode; nothing ran; PLAN.md was written.
    const results = JSON.stringify(bodyOf(sim, first + 1).messages?.at(-1));
    expect(results).toContain(`error (denied): write_file to notes.md ${REFUSED}`);
    expect(results).toContain(`error (denied): exec ${REFUSED}`);
    expect(results).toContain("wrote 27 characters to PLAN.md (created)");
    expect(existsSync(join(ws, "notes.md"))).toBe(false);
    expect(existsSync(join(ws, "ran.txt"))).toBe(false);
    expect(readFileSync(join(ws, "PLAN.md"), "utf8")).toBe("1. Add the flag\n2. Test it\n");

    expect((await gw.chat("ann", "/mode")).body.replies?.[0]?.text).toBe(
      "Mode: plan — read-only tools; the plan goes into PLAN.md (in the workspace); /execute follows it.",
    );
  });

  it("/execute offers every tool again and the next turn's context carries PLAN.md", async () => {
    const ws = gw.running.workspaceDir;
    const ex = await gw.chat("ann", "/execute");
    expect(ex.body.replies?.[0]?.text).toBe(
      "▶️ Execute mode: I follow the plan in PLAN.md, with every tool again; /mode normal ends it.",
    );
    const next = sim.requests.length;
    sim.script(
      { toolCalls: [{ name: "write_file", args: { path: "notes.md", content: "step 1 done" } }] },
      { text: "Step 1 done." },
    );
    await gw.chat("ann", "go");
    expect(toolNames(sim, next)).toEqual(expect.arrayContaining(["exec", "edit_file", "write_file"]));
    expect(lastUser(sim, next)).toContain("# Mode: execute");
    expect(lastUser(sim, next)).toContain("## PLAN.md\\n\\n1. Add the flag\\n2. Test it");
    expect(readFileSync(join(ws, "notes.md"), "utf8")).toBe("step 1 done");
    expect((await gw.chat("ann", "/mode")).body.replies?.[0]?.text).toBe(
      "Mode: execute — following the plan in PLAN.md (in the workspace); /mode normal ends it.",
    );
  });

  it("/execute outside plan mode answers in one line and changes nothing", async () => {
    const asked = sim.requests.length;
    const r = await gw.chat("bob", "/execute");
    expect(r.body.replies?.map((x) => x.text)).toEqual([
      "This chat is not in plan mode (it is normal): /plan starts planning.",
    ]);
    expect(sim.requests.length).toBe(asked);
    expect((await gw.running.store.sessions.get("agent:main:http:dm:bob"))?.mode ?? "normal").toBe("normal");
  });
});

describe("the mode is session state", () => {
  let sim: ModelSimulator;
  const home = mkdtempSync(join(tmpdir(), "sy-modes-home-"));
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
  });
  afterAll(async () => {
    await sim.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** Whether request `i` was a plan-mode turn: the mode's block, and no edit_file offered. */
  const inPlanMode = (i: number): boolean =>
    lastUser(sim, i).includes("# Mode: plan") && !toolNames(sim, i).includes("edit_file");

  it("survives a restart of the gateway on the same home, and a compaction", async () => {
    const cfg = config(sim, {
      agent: { ...simulatorConfig(sim, "anthropic").agent, compaction: { keepRecentTokens: 1_000 } },
    });
    let gw = await startTestGateway(cfg, { env: ENV, home });
    try {
      expect((await gw.chat("cy", "/plan")).body.replies?.[0]?.text).toContain("Plan mode");
    } finally {
      await gw.stop();
    }
    gw = await startTestGateway(cfg, { env: ENV, home });
    try {
      const after = sim.requests.length;
      await gw.chat("cy", "what now?");
      expect(inPlanMode(after)).toBe(true);

      // Enough history that older turns fall outside the 1,000 tokens kept verbatim.
      for (let i = 1; i <= 4; i++)
        await gw.chat("cy", `note ${i}: ${"the harbour keeps its lamps lit all night. ".repeat(60)}`);
      expect((await gw.chat("cy", "/compact")).body.replies?.[0]?.text).toMatch(/compacted/);
      const turn = sim.requests.length;
      await gw.chat("cy", "and now?");
      const key = "agent:main:http:dm:cy";
      const session = await gw.running.store.sessions.get(key);
      const events = await gw.running.store.transcript.tail(key, session?.sessionId ?? "", 500);
      expect(events.some((e) => e.payload.type === "compaction")).toBe(true);
      expect(session?.mode).toBe("plan");
      // The turn's own call (the last one) is still a plan-mode call.
      expect(inPlanMode(sim.requests.length - 1)).toBe(true);
      expect(sim.requests.length).toBeGreaterThan(turn + 1);
    } finally {
      await gw.stop();
    }
  });
});
