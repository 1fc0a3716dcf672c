/**
 * The benchmark program (`npm run bench`): runs every benchmark in bench/benchmarks.ts (or only
 * those whose ids are given as arguments), prints progress to stderr, then one markdown table
 * and one JSON line to stdout. A failing benchmark becomes a "FAILED" row and exit code 1. A
 * watchdog ends the whole run after 480 s; spawned gateways are always killed, also on exit,
 * SIGINT and SIGTERM.
 */
import { cpus } from "node:os";
import { benchmarks } from "./benchmarks.js";
import { killAllChildren } from "./gateway-child.js";
import { renderJson, renderTable } from "./report.js";
import { fmt, progress } from "./stats.js";
import type { BenchRow } from "./types.js";

const WATCHDOG_MS = 480_000;

async function main(argv: string[]): Promise<number> {
  const known = new Set(benchmarks.map((b) => b.id));
  const unknown = argv.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown benchmark ${unknown.join(", ")}; known: ${[...known].join(", ")}\n`);
    return 2;
  }
  const selected = argv.length > 0 ? benchmarks.filter((b) => argv.includes(b.id)) : benchmarks;
  const rows: BenchRow[] = [];
  let failures = 0;
  const started = performance.now();
  for (const bench of selected) {
    const t0 = performance.now();
    progress(`${bench.id}: start`);
    try {
      const loaded = await bench.load();
      if (loaded.id !== bench.id) throw new Error(`registry id ${bench.id} loads benchmark ${loaded.id}`);
      rows.push(...(await loaded.run()));
    } catch (error) {
      failures++;
      const message = error instanceof Error ? error.message : String(error);
      progress(`${bench.id}: FAILED: ${message}`);
      rows.push({
        benchmark: bench.id,
        figure: `FAILED: ${headline(message)}`,
        target: "—",
        values: {},
      });
    }
    progress(`${bench.id}: done in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  }
  const totalS = (performance.now() - started) / 1000;
  progress(`all done in ${fmt(totalS, 1)} s`);
  process.stdout.write(`${renderTable(rows)}\n\n`);
  const meta = {
    node: process.version,
    cpus: cpus().length,
    date: new Date().toISOString(),
    totalSeconds: Number(totalS.toFixed(1)),
  };
  process.stdout.write(`${renderJson(rows, meta)}\n`);
  return failures > 0 ? 1 : 0;
}

/** The line of an error message worth a table cell: its `…Error…:` line if any, else the first. */
function headline(message: string): string {
  const lines = message.split("\n").map((l) => l.trim());
  const line = lines.find((l) => /^(\w*Error\b|Error \[)/.test(l)) ?? lines[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

process.on("exit", killAllChildren);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    process.stderr.write(`bench: ${signal}: stopping\n`);
    process.exit(130); // the exit handler kills the children
  });
}
const watchdog = setTimeout(() => {
  process.stderr.write(`bench: still running after ${WATCHDOG_MS / 1000} s; giving up\n`);
  killAllChildren();
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

process.exitCode = await main(process.argv.slice(2));
