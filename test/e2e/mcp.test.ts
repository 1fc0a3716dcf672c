/**
 * MCP servers end to end: a real gateway over the HTTP channel, the model simulator scripting the
 * calls, the real SDK on both sides — a stdio server (test/fakes/mcp-server.mjs, run with node)
 * and a Streamable HTTP one (test/fakes/mcp-http-server.ts). Tools are offered as
 * `<server>__<tool>`, results reach the model in an untrusted block, a killed server's calls
 * fail with one line until its restart, list_changed is honoured, a server that prints garbage
 * or hangs does not take the gateway down, and stop ends every server process.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execModule } from "../../src/capabilities/exec/module.js";
import { mcpModule } from "../../src/capabilities/mcp/module.js";
import type { McpToolSource } from "../../src/capabilities/mcp/mcp-tool-source.js";
import type { Capability, CapabilityModule } from "../../src/capabilities/types.js";
import { ManualClock } from "../../src/util/clock.js";
import { FakeMcpHttpServer } from "../fakes/mcp-http-server.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { pidGone } from "../helpers/pid-gone.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until, untilAdvancing } from "../helpers/until.js";

const FAKE = join(import.meta.dirname, "../fakes/mcp-server.mjs");
const GATEWAY_ENV = { PATH: process.env.PATH, ANTHROPIC_API_KEY: "sk-ant-from-the-environment-123456" };
const dir = mkdtempSync(join(tmpdir(), "sy-mcp-"));
const pidFile = (server: string): string => join(dir, `${server}.pid`);
const pidOf = (server: string): number => Number(readFileSync(pidFile(server), "utf8").trim());

function stdio(name: string, mode: string, extra: Record<string, unknown> = {}) {
  return {
    command: "node",
    args: [FAKE, mode],
    env: { FAKE_PID_FILE: pidFile(name), FAKE_ENV_DUMP: join(dir, `${name}.env`) },
    ...extra,
  };
}

/** The mcp module, with its built capability kept for the test to look at. */
function watchedMcp(): { module: CapabilityModule; sources: () => McpToolSource[] } {
  let built: Capability | undefined;
  return {
    module: {
      ...mcpModule,
      create: async (ctx) => {
        built = await mcpModule.create(ctx);
        return built;
      },
    },
    sources: () => [...((built?.toolSources ?? []) as McpToolSource[])],
  };
}

const toolsOf = (sim: ModelSimulator, i: number): string[] =>
  (((sim.requests[i]?.body ?? {}) as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name);
const lastMessage = (sim: ModelSimulator): string =>
  JSON.stringify(((sim.requests.at(-1)?.body ?? {}) as { messages?: unknown[] }).messages?.at(-1) ?? null);

describe("MCP servers", () => {
  let sim: ModelSimulator;
  let notes: FakeMcpHttpServer;
  let gw: TestGateway;
  const clock = new ManualClock(Date.now());
  const mcp = watchedMcp();
  const source = (name: string): McpToolSource => {
    const s = mcp.sources().find((x) => x.name === name);
    if (!s) throw new Error(`no source ${name}`);
    return s;
  };

  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    notes = new FakeMcpHttpServer();
    await notes.start();
    gw = await startTestGateway(
      {
        ...simulatorConfig(sim, "anthropic"),
        heartbeat: { everyMs: 0 },
        mcp: {
          servers: {
            fake: stdio("fake", "normal"),
            odd: stdio("odd", "bad-schema"),
            junk: stdio("junk", "garbage", { timeoutMs: 1_500 }),
            stuck: stdio("stuck", "hang", { timeoutMs: 1_500 }),
            notes: { url: notes.url, headers: { Authorization: "Bearer notes-token" } },
          },
        },
      },
      { env: GATEWAY_ENV, clock, capabilityModules: [execModule, mcp.module] },
    );
  }, 30_000);
  afterAll(async () => {
    await gw?.stop();
    await notes?.close();
    await sim?.close();
  });

  it("starts nothing until a turn may use it", () => {
    expect(mcp.sources().map((s) => s.connection.state)).toEqual(Array(5).fill("not started"));
    expect(existsSync(pidFile("fake"))).toBe(false);
  });

  it("offers each server's tools as <server>__<tool>; a call's result reaches the model in an untrusted block", async () => {
    const before = sim.requests.length;
    sim.script({ toolCalls: [{ name: "fake__echo", args: { text: "hi" } }] }, { text: "done" });
    const r = await gw.chat("owner", "echo hi");
    expect(r.body.replies?.[0]?.text).toBe("done");
    const offered = toolsOf(sim, before);
    expect(offered).toEqual(
      expect.arrayContaining(["fake__echo", "fake__shell", "fake__fail", "notes__lookup", "odd__good"]),
    );
    // A schema that is not an object schema, one over the cap, and servers that never answered: dropped.
    expect(offered.filter((n) => /^(odd__stringy|odd__huge|junk__|stuck__)/.test(n))).toEqual([]);
    expect(
      source("odd")
        .dropped()
        .map((d) => d.name),
    ).toEqual(["stringy", "huge"]);
    expect(source("junk").connection.state).toBe("crashed");
    expect(source("stuck").connection.reason).toBe("start failed: did not answer within 1500 ms");
    const body = (sim.requests[before]?.body ?? {}) as {
      tools?: Array<{ name: string; input_schema: unknown }>;
    };
    const spec = body.tools?.find((t) => t.name === "fake__echo");
    expect(spec?.input_schema).toMatchObject({ type: "object", properties: { text: { type: "string" } } });
    expect(lastMessage(sim)).toContain(
      `<<<untrusted source=\\"mcp fake.echo\\">>>\\necho from ${pidOf("fake")}: hi`,
    );
  });

  it("gives a stdio server only PATH, HOME, LANG, TZ and its own env", () => {
    const names = readFileSync(join(dir, "fake.env"), "utf8").split("\n");
    expect(names).not.toContain("ANTHROPIC_API_KEY");
    expect(names).toContain("FAKE_PID_FILE");
    expect(
      names.every((n) => ["PATH", "HOME", "LANG", "TZ", "FAKE_PID_FILE", "FAKE_ENV_DUMP"].includes(n)),
    ).toBe(true);
  });

  it("calls an HTTP server with its headers", async () => {
    sim.script({ toolCalls: [{ name: "notes__lookup", args: { key: "sky" } }] }, { text: "done" });
    await gw.chat("owner", "look it up");
    expect(lastMessage(sim)).toContain("notes: sky = blue");
    expect(notes.authorization).toBe("Bearer notes-token");
  });

  it("guards a tool that takes a command, and reports an isError result as an error", async () => {
    sim.script({ toolCalls: [{ name: "fake__shell", args: { command: "rm -rf ~" } }] }, { text: "ok" });
    await gw.chat("owner", "clean home");
    expect(lastMessage(sim)).toContain("Blocked by the command guard (rm-recursive-outside-workspace)");
    expect(lastMessage(sim)).toContain('"is_error":true');
    expect(lastMessage(sim)).not.toContain("would run");
    sim.script({ toolCalls: [{ name: "fake__shell", args: { command: "ls build" } }] }, { text: "ok" });
    await gw.chat("owner", "list");
    expect(lastMessage(sim)).toContain("would run: ls build");
    sim.script({ toolCalls: [{ name: "fake__fail", args: {} }] }, { text: "ok" });
    await gw.chat("owner", "fail");
    expect(lastMessage(sim)).toContain("the thing broke");
    expect(lastMessage(sim)).toContain('"is_error":true');
  });

  it("honours tools/list_changed: the new tool is offered on the next turn", async () => {
    sim.script({ toolCalls: [{ name: "fake__grow", args: {} }] }, { text: "grown" });
    await gw.chat("owner", "grow");
    await until(
      () =>
        source("fake")
          .tools()
          .some((t) => t.name === "fake__extra"),
      "the re-listed tools",
    );
    const before = sim.requests.length;
    sim.script({ toolCalls: [{ name: "fake__extra", args: {} }] }, { text: "ok" });
    await gw.chat("owner", "extra");
    expect(toolsOf(sim, before)).toContain("fake__extra");
    expect(lastMessage(sim)).toContain("extra ran");
  });

  it("a killed server's calls fail with one line until it is restarted after the backoff; then it works", async () => {
    const first = pidOf("fake");
    process.kill(first, "SIGKILL");
    await until(() => source("fake").connection.state === "crashed", "the crash noticed");
    sim.script({ toolCalls: [{ name: "fake__echo", args: { text: "again" } }] }, { text: "ok" });
    await gw.chat("owner", "echo again");
    expect(lastMessage(sim)).toMatch(
      /error \(failed\): mcp server fake is restarting \(crashed: signal SIGKILL\); try again in \d+ s/,
    );
    await untilAdvancing(clock, () => source("fake").connection.state === "running", "the restart");
    sim.script({ toolCalls: [{ name: "fake__echo", args: { text: "back" } }] }, { text: "ok" });
    await gw.chat("owner", "echo back");
    expect(pidOf("fake")).not.toBe(first);
    expect(lastMessage(sim)).toContain(`echo from ${pidOf("fake")}: back`);
    const r = await gw.chat("owner", "still there?");
    expect(r.status).toBe(200);
  });

  it("stop ends every server process", async () => {
    const pids = ["fake", "odd", "stuck"].map(pidOf);
    await gw.stop();
    await until(() => pids.every(pidGone), "every server gone");
  });
});

describe("MCP and the tool policy", () => {
  it("a channel whose policy denies mcp:<server> is not offered it, does not start it, and is refused a call", async () => {
    const sim = new ModelSimulator();
    await sim.start();
    const pf = join(dir, "denied.pid");
    const gw = await startTestGateway(
      {
        ...simulatorConfig(sim, "anthropic"),
        heartbeat: { everyMs: 0 },
        tools: { byChannel: { http: { deny: ["group:mcp:fake"] } } },
        mcp: { servers: { fake: { command: "node", args: [FAKE, "normal"], env: { FAKE_PID_FILE: pf } } } },
      },
      { env: GATEWAY_ENV },
    );
    try {
      sim.script({ toolCalls: [{ name: "fake__echo", args: { text: "hi" } }] }, { text: "no" });
      await gw.chat("someone", "echo");
      expect(toolsOf(sim, 0)).not.toContain("fake__echo");
      expect(toolsOf(sim, 0)).toContain("read_file");
      expect(existsSync(pf)).toBe(false);
      expect(lastMessage(sim)).toContain("error (unknown_tool)");
    } finally {
      await gw.stop();
      await sim.close();
    }
  });
});
