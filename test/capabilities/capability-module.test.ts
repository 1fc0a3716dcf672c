/**
 * A new capability is one folder and one registry line: a test adds a dummy capability module
 * after the registry's, and the gateway builds it, offers its tool to the model (through the
 * tool policy like any tool), runs its turn hook, runs the tool when the model calls it, answers
 * its chat command (listed in /help), starts it once intake is open and stops it at shutdown —
 * with no other code changed.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { buildCapabilities } from "../../src/capabilities/build.js";
import { capabilityModules } from "../../src/capabilities/registry.js";
import type { Capability, CapabilityModule } from "../../src/capabilities/types.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

/** What the dummy saw, in order. */
const seen: string[] = [];

const dummyModule: CapabilityModule = {
  name: "dummy",
  create: ({ capability }): Capability => {
    seen.push(`create (exec built before: ${capability("exec") !== undefined})`);
    return {
      tools: [
        {
          name: "dummy_echo",
          description: "Echoes its text back.",
          parameters: z.strictObject({ text: z.string() }),
          groups: ["web"],
          run: async (args) => ({ content: `dummy says ${String(args.text)}` }),
        },
      ],
      hooks: [
        {
          beforeToolCall: async (call) => {
            seen.push(`hook ${call.name}`);
            return undefined;
          },
        },
      ],
      commands: [
        {
          name: "dummy",
          description: "say what the dummy saw",
          run: async (args, sessionKey) => `dummy command: ${args} in ${sessionKey}`,
        },
      ],
      attach: () => void seen.push("attach"),
      start: () => void seen.push("start"),
      stop: () => void seen.push("stop"),
    };
  },
};

describe("a capability module added with one registry line", () => {
  it("is built, offered, run, hooked, started and stopped", async () => {
    seen.length = 0;
    const sim = new ModelSimulator();
    await sim.start();
    const gw = await startTestGateway(
      { ...simulatorConfig(sim, "anthropic"), tools: { exec: { enabled: true } } },
      { capabilityModules: [...capabilityModules, dummyModule] },
    );
    try {
      expect(seen).toEqual(["create (exec built before: true)", "attach", "start"]);
      sim.script({ toolCalls: [{ name: "dummy_echo", args: { text: "hi" } }] }, { text: "ok" });
      const res = await gw.chat("ada", "use the dummy");
      expect(res.body.replies?.[0]?.text).toBe("ok");
      const first = sim.requests.at(-2)?.body as { tools?: Array<{ name: string }> };
      expect(first.tools?.map((t) => t.name)).toContain("dummy_echo");
      expect(JSON.stringify(sim.requests.at(-1)?.body)).toContain("dummy says hi");
      expect(seen).toContain("hook dummy_echo");
      // Its chat command is the router's: answered without a model call, and listed in /help.
      const before = sim.requests.length;
      const command = await gw.chat("ada", "/dummy hello");
      expect(command.body.replies?.[0]?.text).toMatch(/^dummy command: hello in agent:/);
      const help = await gw.chat("ada", "/help");
      expect(help.body.replies?.[0]?.text).toMatch(
        /\/tasks — list the assignments in progress\n(?:\/[a-z]+ — [^\n]*\n)*\/dummy — say what the dummy saw\n\/help — /,
      );
      expect(sim.requests.length).toBe(before);
    } finally {
      await gw.stop();
      await sim.close();
    }
    expect(seen.at(-1)).toBe("stop");
  });

  it("is not built when its enabled() says no, and a failed build stops those built before", async () => {
    const stopped: string[] = [];
    const ok: CapabilityModule = { name: "ok", create: () => ({ stop: () => void stopped.push("ok") }) };
    const off: CapabilityModule = { name: "off", enabled: () => false, create: () => ({}) };
    const bad: CapabilityModule = {
      name: "bad",
      create: () => {
        throw new Error("bad settings");
      },
    };
    const built: string[] = [];
    const ctx = {} as Parameters<typeof buildCapabilities>[1];
    await expect(buildCapabilities([ok, off, bad], ctx, (name) => built.push(name))).rejects.toThrow(
      "bad settings",
    );
    expect(built).toEqual(["ok"]);
    const caps = await buildCapabilities([ok, off], ctx);
    expect(caps.names()).toEqual(["ok"]);
    await caps.stop(() => {});
    expect(stopped).toEqual(["ok"]);
    await expect(buildCapabilities([ok, ok], ctx)).rejects.toThrow('"ok" is listed twice');
  });
});
