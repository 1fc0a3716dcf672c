/**
 * The tool guards' cost (#24): what the policy (tool-policy.ts, with private-paths.ts resolving a
 * `path` argument on disk) and the command guard (checkCommand) add to one tool call, and `exec`
 * of `true` end to end through the exec tool and the gateway's CommandRunner (spawn dominated).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { checkCommand } from "../src/harness/tools/command-guard.js";
import { CommandRunner } from "../src/harness/tools/exec/command-runner.js";
import { execTool } from "../src/harness/tools/exec/exec-tool.js";
import { chooseSandbox } from "../src/harness/tools/exec/sandbox-choice.js";
import { ToolRegistry } from "../src/harness/tools/registry.js";
import { ToolPolicy } from "../src/harness/tools/tool-policy.js";
import type { Tool, ToolContext } from "../src/harness/tools/types.js";
import { fmt, percentile, progress } from "./stats.js";
import type { BenchRow, Benchmark } from "./types.js";

const CALLS = 20_000;
const EXECS = 200;
const TARGET_US = 50;

/** A tool that does nothing: what is left of a call is the boundary and the policy. */
const noop: Tool = {
  name: "read_file",
  description: "noop",
  groups: ["fs"],
  parameters: z.strictObject({ path: z.string() }),
  run: async () => ({ content: "ok" }),
};

function context(workspaceDir: string, group: boolean): ToolContext {
  return {
    workspaceDir,
    sessionKey: group ? "agent:main:telegram:group:-1001" : "agent:main:main",
    runId: "bench",
    signal: new AbortController().signal,
    replyTarget: { channel: "telegram", accountId: "default", chatId: group ? "-1001" : "42" },
    asker: { senderId: "42", privateChat: !group, groupChat: group },
  };
}

/** Per-call µs of `calls` sequential calls (after a warm-up of a tenth as many). */
async function timeCalls(calls: number, once: () => Promise<unknown> | unknown): Promise<number[]> {
  for (let i = 0; i < calls / 10; i++) await once();
  const out = new Array<number>(calls);
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    await once();
    out[i] = (performance.now() - t0) * 1000;
  }
  return out;
}

const p = (values: number[], q: number) => percentile(values, q);

/** Tool-call guard overhead (µs) and exec of `true` end to end (ms). */
export const toolGuards: Benchmark = {
  id: "tool-guards",
  async run(): Promise<BenchRow[]> {
    const ws = mkdtempSync(join(tmpdir(), "bench-guards-"));
    const runner = new CommandRunner();
    try {
      mkdirSync(join(ws, "notes"));
      writeFileSync(join(ws, "notes", "todo.md"), "x\n");
      writeFileSync(join(ws, "MEMORY.md"), "m\n");
      const args = JSON.stringify({ path: "notes/todo.md" });
      const bare = new ToolRegistry().register(noop);
      const guarded = new ToolRegistry({ policy: new ToolPolicy() }).register(noop);
      const owner = context(ws, false);
      const group = context(ws, true);
      // A file tool's call: the policy, and in a group chat its `path` resolved on disk.
      const without = await timeCalls(CALLS, () => bare.execute("read_file", args, group));
      const privateChat = await timeCalls(CALLS, () => guarded.execute("read_file", args, owner));
      const groupChat = await timeCalls(CALLS, () => guarded.execute("read_file", args, group));
      // An exec call: the policy (no path argument) and the command guard.
      const command = "git status && npm test -- --reporter=dot 2>&1 | tail -n 20";
      const guardCtx = { workspaceDir: ws, homeDir: "/home/agent", cwd: ws };
      const guard = await timeCalls(CALLS, () => checkCommand(command, guardCtx));
      const fileAdded = p(groupChat, 50) - p(without, 50);
      const execAdded = p(privateChat, 50) - p(without, 50) + p(guard, 50);
      const met = fileAdded < TARGET_US && execAdded < TARGET_US;
      progress(
        `tool-guards: execute p50 ${fmt(p(without, 50))} µs bare, ${fmt(p(privateChat, 50))} owner, ${fmt(p(groupChat, 50))} group; checkCommand ${fmt(p(guard, 50))} µs`,
      );

      const exec = new ToolRegistry({ policy: new ToolPolicy() }).register(
        execTool({ runner, env: { PATH: process.env.PATH, HOME: ws } }),
      );
      const trueArgs = JSON.stringify({ command: "true" });
      const execMs = (
        await timeCalls(EXECS, async () => {
          const r = await exec.execute("exec", trueArgs, owner);
          if (r.isError) throw new Error(`exec true failed: ${r.content}`);
        })
      ).map((us) => us / 1000);
      // The same through bubblewrap, as `sandbox: auto` runs it where bwrap works.
      const decision = await chooseSandbox("auto", { pathEnv: process.env.PATH ?? "" });
      let bwrapMs: number[] = [];
      if (decision.type === "bwrap") {
        const sandboxed = new ToolRegistry({ policy: new ToolPolicy() }).register(
          execTool({ runner, env: { PATH: process.env.PATH, HOME: ws }, sandbox: async () => decision }),
        );
        bwrapMs = (
          await timeCalls(EXECS, async () => {
            const r = await sandboxed.execute("exec", trueArgs, owner);
            if (r.isError) throw new Error(`exec true in bwrap failed: ${r.content}`);
          })
        ).map((us) => us / 1000);
      }
      return [
        {
          benchmark: `Tool-call guards added to one call (µs, p50 of ${CALLS / 1000}k calls each over a bare ToolRegistry.execute): a file tool in a group chat (policy + its \`path\` resolved on disk); an exec call (policy + checkCommand)`,
          figure: `file call +${fmt(fileAdded)} (p50 ${fmt(p(without, 50))} bare → ${fmt(p(groupChat, 50))}); exec call +${fmt(execAdded)} (policy ${fmt(p(privateChat, 50) - p(without, 50))} + checkCommand ${fmt(p(guard, 50))}, its p99 ${fmt(p(guard, 99))})`,
          target: `< ${TARGET_US} µs each`,
          met,
          values: {
            fileAddedUs: fileAdded,
            execAddedUs: execAdded,
            bareP50Us: p(without, 50),
            ownerP50Us: p(privateChat, 50),
            groupP50Us: p(groupChat, 50),
            groupP99Us: p(groupChat, 99),
            checkCommandP50Us: p(guard, 50),
            checkCommandP99Us: p(guard, 99),
          },
        },
        {
          benchmark: `\`exec\` of \`true\` end to end: registry, policy, guard, CommandRunner spawn of /bin/sh in its own process group (ms; ${EXECS} sequential)`,
          figure: `p50 ${fmt(p(execMs, 50))} / p99 ${fmt(p(execMs, 99))}; in bubblewrap (sandbox auto) ${bwrapMs.length > 0 ? `p50 ${fmt(p(bwrapMs, 50))} / p99 ${fmt(p(bwrapMs, 99))}` : `not measured: ${decision.type === "none" ? "no bwrap here" : decision.type}`}`,
          target: "— (spawn dominated)",
          values: {
            p50Ms: p(execMs, 50),
            p99Ms: p(execMs, 99),
            runs: EXECS,
            ...(bwrapMs.length > 0 ? { bwrapP50Ms: p(bwrapMs, 50), bwrapP99Ms: p(bwrapMs, 99) } : {}),
          },
        },
      ];
    } finally {
      await runner.killAll();
      rmSync(ws, { recursive: true, force: true });
    }
  },
};
