/**
 * Which tools a turn may use (`tools:` in the configuration). One pure decision per tool and
 * context: the registry offers the model only allowed tools and refuses a call to any other,
 * so both layers apply the same rules. Private memory (MEMORY.md, memory/) is the owner's:
 * outside the owner's private chat no tool reads or writes it, nor another chat's saved tool
 * outputs (private-paths.ts decides on the real path, symlinks resolved).
 */
import { privatePathKind } from "./private-paths.js";
import { TOOL_CATALOG, TOOL_PROFILES, type ToolGroup, type ToolProfile, isToolGroup } from "./tool-groups.js";

/** One allow/deny rule set: tool names or `group:<name>`. */
export interface ToolRuleSet {
  allow?: readonly string[];
  deny?: readonly string[];
}

/** The `tools:` settings, defaults applied. */
export interface ToolPolicySettings {
  /** Named set of groups (tool-groups.ts TOOL_PROFILES). Default `full`. */
  profile: ToolProfile;
  /** Tool names or `group:<name>`; empty: the profile's set. Default []. */
  allow: readonly string[];
  /** Tool names or `group:<name>`; always wins. Default []. */
  deny: readonly string[];
  /** Narrower sets per channel (`discord`, `http`, …). Default {}. */
  byChannel: Readonly<Record<string, ToolRuleSet>>;
  /** Applies in any group chat. Default `{ deny: [group:exec, group:fs-write] }`. */
  groups: ToolRuleSet;
}

/** The context of a turn the policy decides for. */
export interface PolicyContext {
  /** The channel the turn answers in; absent: background work. */
  channel?: string | undefined;
  /** The owner's private chat (a direct chat on a platform, or the agent's own background work). */
  privateChat: boolean;
  /** A group chat. */
  groupChat: boolean;
  /** The workspace a `path` argument is resolved in (symlinks followed); absent: by name only. */
  workspaceDir?: string | undefined;
  /** The turn's session: its own chat's saved outputs stay readable outside the private chat. */
  sessionKey?: string | undefined;
}

/** A decision: allowed, or denied with the rule that denied it. */
export interface PolicyDecision {
  allowed: boolean;
  /** One line naming the rule, e.g. `denied by tools.groups.deny (group:exec) in a group chat`. */
  reason?: string;
}

/** The tools that read or write private memory whatever their arguments. */
const MEMORY_TOOLS = new Set(["memory_search", "memory_get", "memory_write"]);

/** Defaults of `tools:`. */
export const DEFAULT_TOOL_POLICY: ToolPolicySettings = {
  profile: "full",
  allow: [],
  deny: [],
  byChannel: {},
  groups: { deny: ["group:exec", "group:fs-write"] },
};

/** Decides, per tool and turn context, whether the tool is offered and may run. */
export class ToolPolicy {
  readonly #s: ToolPolicySettings;

  constructor(settings: Partial<ToolPolicySettings> = {}) {
    this.#s = { ...DEFAULT_TOOL_POLICY, ...settings };
  }

  /** Whether a tool of these groups is offered in this context, and if not, which rule said no. */
  decide(name: string, groups: readonly ToolGroup[], ctx: PolicyContext): PolicyDecision {
    const s = this.#s;
    const hit = (rules: readonly string[] | undefined): string | undefined =>
      rules?.find((r) => matches(r, name, groups));
    let rule = hit(s.deny);
    if (rule) return denied(`denied by tools.deny (${rule})`);
    const channel = ctx.channel !== undefined ? s.byChannel[ctx.channel] : undefined;
    rule = hit(channel?.deny);
    if (rule) return denied(`denied by tools.byChannel.${ctx.channel}.deny (${rule})`);
    if (ctx.groupChat) {
      rule = hit(s.groups.deny);
      if (rule) return denied(`denied by tools.groups.deny (${rule}) in a group chat`);
    }
    if (s.allow.length > 0) {
      if (!hit(s.allow)) return denied("not in tools.allow");
    } else {
      const set = TOOL_PROFILES[s.profile];
      if (!set.includes("*") && !groups.some((g) => set.includes(g)))
        return denied(`not in tools.profile ${s.profile}`);
    }
    if (channel?.allow && channel.allow.length > 0 && !hit(channel.allow))
      return denied(`not in tools.byChannel.${ctx.channel}.allow`);
    if (ctx.groupChat && s.groups.allow && s.groups.allow.length > 0 && !hit(s.groups.allow))
      return denied("not in tools.groups.allow in a group chat");
    if (!ctx.privateChat && MEMORY_TOOLS.has(name))
      return denied("denied: private memory is only for the owner's private chat");
    return { allowed: true };
  }

  /**
   * `decide`, plus the argument rule: outside the owner's private chat a `path` argument that
   * names MEMORY.md or memory/, or a saved tool output of another chat (private-paths.ts:
   * by name, then by real path in `ctx.workspaceDir`), is refused.
   */
  decideCall(name: string, groups: readonly ToolGroup[], args: unknown, ctx: PolicyContext): PolicyDecision {
    const d = this.decide(name, groups, ctx);
    if (!d.allowed || ctx.privateChat) return d;
    const p = typeof args === "object" && args !== null ? (args as Record<string, unknown>).path : undefined;
    if (typeof p !== "string") return d;
    const kind = privatePathKind(p, ctx);
    if (kind === "memory") return denied(`denied: ${p} is private memory, only for the owner's private chat`);
    if (kind === "saved-output")
      return denied(`denied: ${p} is a saved tool output of another chat, readable only there`);
    return d;
  }
}

/**
 * Problems with `tools:` rule names: `[path, message]` for every unknown tool or group, where
 * `knownTools` are the names of every tool (default: the catalog's).
 */
export function toolPolicyProblems(
  s: Pick<ToolPolicySettings, "allow" | "deny" | "byChannel" | "groups">,
  knownTools: readonly string[] = Object.keys(TOOL_CATALOG),
): Array<[(string | number)[], string]> {
  const problems: Array<[(string | number)[], string]> = [];
  const check = (rules: readonly string[] | undefined, at: (string | number)[]): void => {
    for (const [i, rule] of (rules ?? []).entries()) {
      if (rule.startsWith("group:")) {
        const g = rule.slice("group:".length);
        if (!isToolGroup(g))
          problems.push([
            [...at, i],
            `unknown tool group "${g}" (known: fs, fs-write, memory, schedule, assignment, exec, web, agents, mcp:<server>)`,
          ]);
      } else if (!knownTools.includes(rule)) {
        problems.push([[...at, i], `unknown tool "${rule}" (a tool name or group:<name>)`]);
      }
    }
  };
  check(s.allow, ["allow"]);
  check(s.deny, ["deny"]);
  for (const [channel, set] of Object.entries(s.byChannel)) {
    check(set.allow, ["byChannel", channel, "allow"]);
    check(set.deny, ["byChannel", channel, "deny"]);
  }
  check(s.groups.allow, ["groups", "allow"]);
  check(s.groups.deny, ["groups", "deny"]);
  return problems;
}

function matches(rule: string, name: string, groups: readonly ToolGroup[]): boolean {
  if (rule.startsWith("group:")) return (groups as readonly string[]).includes(rule.slice("group:".length));
  return rule === name;
}

function denied(reason: string): PolicyDecision {
  return { allowed: false, reason };
}
