/**
 * The README and docs/architecture.md say what exists: every platform the channel registry knows
 * has its place in the README (a section, or for the terminal its command), the README's opening
 * paragraph names each, and no "coming" / "not yet" / "later issue" claim names something that
 * exists. (The README said "Discord is coming" a release after Discord landed.)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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
});
