/**
 * The design's dependency rules, checked on the import graph:
 * channels → gateway → harness → providers; cron only enqueues; vendor SDKs only in their
 * adapters; platform SDKs only in channel adapters.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const SRC = join(ROOT, "src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
  /** `import("…")`: loaded when the code runs, not with the module. */
  dynamic: boolean;
}

function imports(): Edge[] {
  const edges: Edge[] = [];
  const re =
    /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;
  for (const file of files(SRC)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(re)) {
      const spec = m[3] ?? m[4];
      if (!spec) continue;
      const to = spec.startsWith(".")
        ? relative(SRC, resolve(dirname(file), spec)).replace(/\.js$/, ".ts")
        : spec;
      edges.push({ from: relative(SRC, file), to, typeOnly: Boolean(m[2]), dynamic: m[4] !== undefined });
    }
  }
  return edges;
}

const edges = imports();
/** The chat platforms' libraries. */
const PLATFORM_SDK = /^(discord\.js|@slack\/[a-z-]+|grammy)(\/|$)/;
const violations = (pred: (e: Edge) => boolean) => edges.filter(pred).map((e) => `${e.from} → ${e.to}`);

describe("architecture", () => {
  it("finds the source files", () => {
    expect(edges.length).toBeGreaterThan(20);
  });

  it("harness never imports the gateway, channels, cron or the CLI", () => {
    expect(
      violations(
        (e) => e.from.startsWith("harness/") && /^(gateway|channels|cron|cli)\/|^main\.ts$/.test(e.to),
      ),
    ).toEqual([]);
  });

  it("providers depend only on their own folder and util", () => {
    expect(
      violations(
        (e) =>
          e.from.startsWith("harness/providers/") &&
          !e.to.startsWith("harness/providers/") &&
          !e.to.startsWith("util/") &&
          /^[a-z]+\//.test(e.to) &&
          !e.to.startsWith("node:") &&
          !e.to.startsWith("@") &&
          !["openai"].includes(e.to),
      ),
    ).toEqual([]);
  });

  it("only provider adapters import vendor SDKs", () => {
    expect(
      violations(
        (e) => /^(openai|@anthropic-ai\/sdk)(\/|$)/.test(e.to) && !e.from.startsWith("harness/providers/"),
      ),
    ).toEqual([]);
  });

  it("only channel adapters import platform SDKs", () => {
    expect(violations((e) => PLATFORM_SDK.test(e.to) && !e.from.startsWith("channels/"))).toEqual([]);
  });

  it("loading the channel registry loads no platform SDK: each is imported when its channel starts", () => {
    const reached = new Set<string>(["channels/registry.ts"]);
    for (const file of reached) {
      for (const e of edges) if (e.from === file && !e.typeOnly && !e.dynamic) reached.add(e.to);
    }
    expect([...reached].filter((m) => PLATFORM_SDK.test(m))).toEqual([]);
    expect(
      [...reached].filter((m) => /^channels\/(slack|telegram|discord)\/.*-channel\.ts$/.test(m)),
    ).toEqual([]);
  });

  it("the gateway uses channels only through their contracts", () => {
    expect(
      violations(
        (e) =>
          e.from.startsWith("gateway/") &&
          e.to.startsWith("channels/") &&
          !["channels/types.ts", "channels/errors.ts", "channels/chunking.ts"].includes(e.to),
      ),
    ).toEqual([]);
  });

  it("the store depends on nothing but contracts and util", () => {
    expect(
      violations(
        (e) =>
          e.from.startsWith("store/") && /^(gateway|harness|channels|cron|cli)\//.test(e.to) && !e.typeOnly,
      ),
    ).toEqual([]);
  });

  it("cron only enqueues lane tasks", () => {
    expect(
      violations((e) => e.from.startsWith("cron/") && /^(channels|harness|cli)\//.test(e.to) && !e.typeOnly),
    ).toEqual([]);
  });

  it("the simulator stands alone (node built-ins only)", () => {
    expect(
      violations(
        (e) => e.from.startsWith("simulator/") && !e.to.startsWith("node:") && !e.to.startsWith("simulator/"),
      ),
    ).toEqual([]);
  });

  it("has no import cycles between folders", () => {
    const folder = (f: string) => (f.includes("/") ? (f.split("/")[0] as string) : f.replace(/\.ts$/, ""));
    const graph = new Map<string, Set<string>>();
    for (const e of edges) {
      if (e.typeOnly || !e.to.endsWith(".ts") || e.to.startsWith("..")) continue;
      const [a, b] = [folder(e.from), folder(e.to)];
      if (a === b) continue;
      graph.set(a, (graph.get(a) ?? new Set()).add(b));
    }
    const cycles: string[] = [];
    const visit = (node: string, path: string[]) => {
      if (path.includes(node)) {
        cycles.push([...path.slice(path.indexOf(node)), node].join(" → "));
        return;
      }
      for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    };
    for (const node of graph.keys()) visit(node, []);
    expect([...new Set(cycles)]).toEqual([]);
  });

  it("channels never import the gateway", () => {
    expect(violations((e) => e.from.startsWith("channels/") && e.to.startsWith("gateway/"))).toEqual([]);
  });

  it("only the launcher's entry imports the composition root (main.ts, app/)", () => {
    expect(
      violations(
        (e) =>
          (e.to === "main.ts" || e.to.startsWith("app/")) &&
          e.from !== "main.ts" &&
          !e.from.startsWith("app/"),
      ),
    ).toEqual([]);
  });

  it("keeps types.ts files and the store's repository contracts free of runtime code", () => {
    const offenders = files(SRC)
      .filter((f) => f.endsWith("/types.ts") || relative(SRC, f).startsWith("store/repos/"))
      .flatMap((f) => {
        const code = readFileSync(f, "utf8")
          .replace(/\/\*[\s\S]*?\*\//g, "")
          .replace(/\/\/.*$/gm, "");
        return [...code.matchAll(/^(?:export\s+)?(?:class|function|const|let|var|enum)\s+(\w+)/gm)].map(
          (m) => `${relative(SRC, f)}: ${m[1]}`,
        );
      });
    expect(offenders).toEqual([]);
  });

  it("has no default exports", () => {
    const offenders = files(SRC).filter((f) => /^export default /m.test(readFileSync(f, "utf8")));
    expect(offenders.map((f) => relative(SRC, f))).toEqual([]);
  });
});
