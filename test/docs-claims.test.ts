/**
 * The README and docs/architecture.md say what exists: every platform the channel registry knows
 * has its place in the README (a section, or for the terminal its command), the README's opening
 * paragraph names each, and no "coming" / "not yet" / "later issue" claim names something that
 * exists. (The README said "Discord is coming" a release after Discord landed.)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { capabilityModules } from "../src/capabilities/registry.js";
import { subagentSettings } from "../src/capabilities/subagents/settings.js";
import { channelModules } from "../src/channels/registry.js";

const ROOT = join(import.meta.dirname, "..");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const architecture = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");

/** How the README names each registry entry: its section heading, or its command. */
const PLACES: Record<string, { heading?: string; mention: RegExp; opening: RegExp }> = {
  telegram: { heading: "## Telegram", mention: /telegram/i, opening: /\*\*Telegram\*\*/ },
  slack: { heading: "## Slack", mention: /slack/i, opening: /\*\*Slack\*\*/ },
  discord: { heading: "## Discord", mention: /discord/i, opening: /\*\*Discord\*\*/ },
  http: { heading: "## HTTP API", mention: /http|openai-compatible/i, opening: /\*\*plain\s+HTTP\*\*/ },
  console: {
    mention: /terminal|switchyard chat|console/i,
    opening: /\*\*terminal\*\* \(`switchyard chat`\)/,
  },
};

/** Sentences that promise something for later. */
function promises(text: string): string[] {
  return text
    .replace(/\s+/g, " ")
    .split(/(?<=[.;:!?])\s/)
    .filter((s) =>
      /\b(is|are) coming\b|\bcoming soon\b|\bnot yet (built|supported|available)\b|\ba later issue\b/i.test(
        s,
      ),
    );
}

describe("what the docs claim", () => {
  it("gives every platform in the channel registry its place in the README", () => {
    const opening = readme.split("\n## ")[0] ?? "";
    for (const name of Object.keys(channelModules)) {
      const place = PLACES[name];
      expect(place, `the README test does not know channel "${name}": add it to PLACES`).toBeDefined();
      if (place?.heading) expect(readme.split("\n"), name).toContain(place.heading);
      expect(opening, `the README's opening paragraph names ${name}`).toMatch(place?.opening ?? /$^/);
    }
  });

  it("promises nothing that exists already", () => {
    for (const [doc, text] of [
      ["README.md", readme],
      ["docs/architecture.md", architecture],
    ] as const) {
      for (const sentence of promises(text)) {
        for (const [name, place] of Object.entries(PLACES))
          expect(place.mention.test(sentence), `${doc} promises ${name}, which exists: "${sentence}"`).toBe(
            false,
          );
        expect(/compaction/i.test(sentence), `${doc}: "${sentence}"`).toBe(false);
      }
    }
  });

  it("keeps measurement history out of the README and every CLI command in the architecture page", () => {
    // The README keeps the current figures; how they were measured and what moved them is in
    // docs/benchmarks.md, which the README links.
    expect(readme).toContain("(docs/benchmarks.md)");
    expect(readFileSync(join(ROOT, "docs/benchmarks.md"), "utf8")).toMatch(/^# Benchmarks/);
    expect(readme).not.toMatch(/\bbench-history\b/);
    // The commands the CLI's usage text lists (src/cli/main.ts, between "commands:" and "common options:").
    const usage = /commands:\n([\s\S]*?)\ncommon options:/.exec(
      readFileSync(join(ROOT, "src/cli/main.ts"), "utf8"),
    );
    const commands = [...(usage?.[1] ?? "").matchAll(/^ {2}([a-z]+) /gm)]
      .map((m) => m[1] as string)
      .filter((c) => c !== "help");
    expect(commands.length).toBeGreaterThan(10);
    const cliRow = architecture.split("\n").find((l) => l.startsWith("| `src/cli/`")) ?? "";
    for (const command of new Set(commands))
      expect(cliRow, `docs/architecture.md's src/cli row names ${command}`).toContain(`\`${command}\``);
  });

  it("states the sub-agent limits as the schema's defaults, /agents, and every capability folder", () => {
    const section = readme.split("\n## Let it work in parallel\n")[1]?.split("\n## ")[0] ?? "";
    expect(section, 'the README has a "Let it work in parallel" section').not.toBe("");
    const yaml = /```yaml\nsubagents:\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    const stated = Object.fromEntries(
      [...yaml.matchAll(/^ {2}(\w+): (\S+)/gm)].map(([, key, value]) => [key, JSON.parse(value as string)]),
    );
    // Every setting, each at its default: the README cannot drift from settings.ts.
    expect(stated).toEqual(subagentSettings.parse(undefined));
    for (const claim of ["spawn_agent", "wait_agents", "`/agents stop <id>`", "`/stop`", "maxParallelTools"])
      expect(section, `the section names ${claim}`).toContain(claim);
    const chatCommands = readme.split("\n").findIndex((l) => l.startsWith("In any chat:"));
    expect(
      readme
        .split("\n")
        .slice(chatCommands, chatCommands + 5)
        .join(" "),
    ).toContain("`/agents`");
    const row = architecture.split("\n").find((l) => l.startsWith("| `src/capabilities/`")) ?? "";
    for (const m of capabilityModules)
      expect(row, `docs/architecture.md's src/capabilities row names ${m.name}`).toContain(m.name);
    expect(architecture).toContain("## Sub-agents");
  });

  it("shows a systemd unit that runs unprivileged and waits for the network it orders after", () => {
    const unit = /```ini\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    expect(unit).toMatch(/^\[Service\]$/m);
    expect(unit, "the agent's file tools must not run as root").toMatch(/^User=\S+$/m);
    if (/^After=.*network-online\.target/m.test(unit))
      expect(unit).toMatch(/^Wants=network-online\.target$/m);
    // A system unit's paths and User= do not work under systemctl --user: the README must not say so.
    expect(readme).not.toMatch(/`systemctl --user` or system-wide/);
  });
});
