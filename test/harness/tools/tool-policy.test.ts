import { subagentTools } from "../../../src/capabilities/subagents/subagent-tools.js";
import { describe, expect, it } from "vitest";
import { cronTools } from "../../../src/capabilities/cron/cron-tools.js";
import { assignmentChatTools } from "../../../src/capabilities/assignments/assignment-chat.js";
import { HeartbeatAcks, heartbeatTools } from "../../../src/capabilities/heartbeat/heartbeat.js";
import { wakeTools } from "../../../src/capabilities/cron/wake-tools.js";
import { assignmentTools } from "../../../src/harness/assignments/assignment-tools.js";
import { memoryTools } from "../../../src/harness/memory/memory-tools.js";
import type { MemoryIndex } from "../../../src/harness/memory/memory-index.js";
import { skillTool } from "../../../src/harness/memory/skills.js";
import { fileTools } from "../../../src/harness/tools/file-tools.js";
import { TOOL_CATALOG, type ToolGroup } from "../../../src/harness/tools/tool-groups.js";
import {
  type PolicyContext,
  ToolPolicy,
  toolPolicyProblems,
} from "../../../src/harness/tools/tool-policy.js";
import { isPrivateMemoryPath } from "../../../src/harness/tools/private-paths.js";
import type { Tool } from "../../../src/harness/tools/types.js";

const dm: PolicyContext = { channel: "telegram", privateChat: true, groupChat: false };
const group: PolicyContext = { channel: "discord", privateChat: false, groupChat: true };
const http: PolicyContext = { channel: "http", privateChat: false, groupChat: false };

const g = (name: string): readonly ToolGroup[] => TOOL_CATALOG[name] ?? [];
const decide = (p: ToolPolicy, name: string, ctx: PolicyContext) => p.decide(name, g(name), ctx);

describe("TOOL_CATALOG", () => {
  it("equals the groups every built-in tool declares", () => {
    // The factories' dependencies are never called: only names and groups are read.
    const none = {} as never;
    const tools: Tool[] = [
      ...fileTools(),
      ...memoryTools({} as MemoryIndex),
      skillTool("/tmp/none"),
      ...cronTools(none),
      ...wakeTools(none),
      ...heartbeatTools(new HeartbeatAcks({ now: () => 0 } as never), "heartbeat"),
      ...assignmentChatTools({ deps: {} } as never),
      ...assignmentTools(none),
      ...subagentTools(none),
    ];
    const declared = Object.fromEntries(tools.map((t) => [t.name, [...t.groups]]));
    const catalog = Object.fromEntries(Object.entries(TOOL_CATALOG).filter(([name]) => name in declared));
    expect(declared).toEqual(catalog);
    // Only tools built elsewhere (exec, web) are in the catalog without a factory here.
    expect(
      Object.keys(TOOL_CATALOG)
        .filter((n) => !(n in declared))
        .sort(),
    ).toEqual(["exec", "web_fetch", "web_search"]);
  });
});

describe("ToolPolicy", () => {
  it("full offers everything in a private chat; the default denies exec and file writes in groups", () => {
    const p = new ToolPolicy();
    for (const name of Object.keys(TOOL_CATALOG)) expect(decide(p, name, dm).allowed).toBe(true);
    expect(decide(p, "exec", group)).toEqual({
      allowed: false,
      reason: "denied by tools.groups.deny (group:exec) in a group chat",
    });
    expect(decide(p, "write_file", group).reason).toBe(
      "denied by tools.groups.deny (group:fs-write) in a group chat",
    );
    expect(decide(p, "read_file", group).allowed).toBe(true);
  });

  it("profiles are sets of groups", () => {
    const messaging = new ToolPolicy({ profile: "messaging" });
    expect(decide(messaging, "read_file", dm).reason).toBe("not in tools.profile messaging");
    expect(decide(messaging, "exec", dm).allowed).toBe(false);
    expect(decide(messaging, "cron_add", dm).allowed).toBe(true);
    const minimal = new ToolPolicy({ profile: "minimal" });
    expect(decide(minimal, "memory_get", dm).allowed).toBe(true);
    expect(decide(minimal, "cron_add", dm).allowed).toBe(false);
    const coding = new ToolPolicy({ profile: "coding" });
    expect(decide(coding, "exec", dm).allowed).toBe(true);
    expect(coding.decide("t", ["mcp:github"], dm).allowed).toBe(false);
    expect(new ToolPolicy().decide("t", ["mcp:github"], dm).allowed).toBe(true);
  });

  it("allow replaces the profile; deny always wins", () => {
    const p = new ToolPolicy({ allow: ["read_file", "group:schedule"], deny: ["cron_add"] });
    expect(decide(p, "read_file", dm).allowed).toBe(true);
    expect(decide(p, "cron_list", dm).allowed).toBe(true);
    expect(decide(p, "write_file", dm).reason).toBe("not in tools.allow");
    expect(decide(p, "cron_add", dm).reason).toBe("denied by tools.deny (cron_add)");
  });

  it("byChannel narrows one channel only", () => {
    const p = new ToolPolicy({
      byChannel: { discord: { deny: ["group:schedule"] }, slack: { allow: ["read_file"] } },
    });
    expect(decide(p, "cron_add", group).reason).toBe(
      "denied by tools.byChannel.discord.deny (group:schedule)",
    );
    expect(decide(p, "cron_add", dm).allowed).toBe(true);
    const slack = { ...dm, channel: "slack" };
    expect(decide(p, "read_file", slack).allowed).toBe(true);
    expect(decide(p, "cron_add", slack).reason).toBe("not in tools.byChannel.slack.allow");
  });

  it("group rules apply in group chats only", () => {
    const p = new ToolPolicy({ groups: { deny: ["group:fs"] } });
    expect(decide(p, "read_file", group).reason).toBe(
      "denied by tools.groups.deny (group:fs) in a group chat",
    );
    expect(decide(p, "read_file", http).allowed).toBe(true);
    const allowOnly = new ToolPolicy({ groups: { allow: ["memory_search"] } });
    expect(decide(allowOnly, "cron_add", group).reason).toBe("not in tools.groups.allow in a group chat");
  });

  it("keeps private memory to the owner's private chat", () => {
    const p = new ToolPolicy();
    for (const name of ["memory_get", "memory_search", "memory_write"]) {
      expect(decide(p, name, dm).allowed).toBe(true);
      expect(decide(p, name, group).allowed).toBe(false);
      expect(decide(p, name, http).allowed).toBe(false);
    }
    const read = (path: string, ctx: PolicyContext) =>
      p.decideCall("read_file", g("read_file"), { path }, ctx);
    expect(read("MEMORY.md", group).reason).toBe(
      "denied: MEMORY.md is private memory, only for the owner's private chat",
    );
    expect(read("./memory/2026-01-01.md", http).allowed).toBe(false);
    expect(read("MEMORY.md", dm).allowed).toBe(true);
    expect(read("notes/memory.md", group).allowed).toBe(true);
    expect(isPrivateMemoryPath("a/../Memory.md")).toBe(true);
    expect(isPrivateMemoryPath("memory")).toBe(true);
    expect(isPrivateMemoryPath("memoryx.md")).toBe(false);
  });

  it("names unknown tools and groups with their key", () => {
    expect(
      toolPolicyProblems({
        allow: ["read_fil"],
        deny: ["group:shell"],
        byChannel: { discord: { deny: ["group:exec", "nope"] } },
        groups: { deny: ["group:mcp:github", "group:mcp:"] },
      }),
    ).toEqual([
      [["allow", 0], 'unknown tool "read_fil" (a tool name or group:<name>)'],
      [["deny", 0], expect.stringContaining('unknown tool group "shell"')],
      [["byChannel", "discord", "deny", 1], 'unknown tool "nope" (a tool name or group:<name>)'],
      [["groups", "deny", 1], expect.stringContaining('unknown tool group "mcp:"')],
    ]);
  });
});
