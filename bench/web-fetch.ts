/**
 * `web_fetch` of a realistic 1 MB article page (bench/web-page.ts) from a local server: the
 * gateway's CPU per call (process.cpuUsage around the tool's run: the guarded fetch, the string
 * pass, linkedom, Readability, turndown, the untrusted block). The page is served by a child
 * process so its CPU is not counted. The first call, which loads the three HTML libraries, is
 * reported on its own; then 3 warm-up calls and 20 measured ones, at the default maxChars
 * (20,000) and at the largest a call may ask for (100,000).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_CALL_CHARS, webFetchTool } from "../src/capabilities/web/web-fetch-tool.js";
import type { ToolContext } from "../src/harness/tools/types.js";
import { fmt, percentile, progress } from "./stats.js";
import type { Benchmark, BenchRow } from "./types.js";
import { benchArticlePage } from "./web-page.js";

const WARMUP = 3;
const CALLS = 20;
const TARGET_CPU_MS = 150;

/** Serves one file as text/html on 127.0.0.1; prints its port. */
const SERVER = `
const http = require("node:http");
const body = require("node:fs").readFileSync(process.argv[1]);
const server = http.createServer((req, res) => {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": body.length });
  res.end(body);
});
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;

async function startPageServer(file: string): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, ["-e", SERVER, file], { stdio: ["ignore", "pipe", "inherit"] });
  const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
  return { child, origin: `http://127.0.0.1:${chunk.toString().trim()}` };
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The web_fetch benchmark (see the file header). */
export const webFetchBench: Benchmark = {
  id: "web-fetch",
  async run(): Promise<BenchRow[]> {
    const html = benchArticlePage();
    const dir = mkdtempSync(join(tmpdir(), "sy-bench-web-"));
    const file = join(dir, "article.html");
    writeFileSync(file, html);
    const { child, origin } = await startPageServer(file);
    try {
      const tool = webFetchTool({ allowHosts: ["127.0.0.1"] });
      const ctx: ToolContext = {
        workspaceDir: dir,
        sessionKey: "bench",
        runId: "bench",
        signal: new AbortController().signal,
      };
      const url = `${origin}/article`;
      const call = async (maxChars?: number) => {
        const before = cpuMs();
        const out = await tool.run(maxChars === undefined ? { url } : { url, maxChars }, ctx);
        const ms = cpuMs() - before;
        if (!out.content.includes("How the gateway keeps sessions apart") || out.isError)
          throw new Error(`web_fetch did not return the article: ${out.content.slice(0, 200)}`);
        return { ms, chars: out.content.length };
      };
      const first = await call();
      progress(`web-fetch: first call ${fmt(first.ms, 0)} ms CPU (loads linkedom, Readability, turndown)`);
      const rows: BenchRow[] = [];
      for (const maxChars of [undefined, MAX_CALL_CHARS]) {
        for (let i = 0; i < WARMUP; i++) await call(maxChars);
        const samples: number[] = [];
        let chars = 0;
        for (let i = 0; i < CALLS; i++) {
          const r = await call(maxChars);
          samples.push(r.ms);
          chars = r.chars;
        }
        const p50 = percentile(samples, 50);
        const p90 = percentile(samples, 90);
        const label = maxChars === undefined ? "default maxChars 20,000" : `maxChars ${MAX_CALL_CHARS}`;
        progress(`web-fetch (${label}): p50 ${fmt(p50, 0)} ms, p90 ${fmt(p90, 0)} ms CPU`);
        rows.push({
          benchmark: `web_fetch of a ${fmt(Buffer.byteLength(html) / 1e6, 2)} MB article page from a local server, gateway CPU ms (${label}; ${CALLS} calls)`,
          figure: `p50 ${fmt(p50, 0)} / p90 ${fmt(p90, 0)} ms; ${chars} chars to the model${maxChars === undefined ? `; first call ${fmt(first.ms, 0)} ms (loads the libraries)` : ""}`,
          target: maxChars === undefined ? `< ${TARGET_CPU_MS} ms` : "—",
          ...(maxChars === undefined ? { met: p50 < TARGET_CPU_MS } : {}),
          values: {
            p50CpuMs: p50,
            p90CpuMs: p90,
            resultChars: chars,
            pageBytes: Buffer.byteLength(html),
            ...(maxChars === undefined ? { firstCallCpuMs: first.ms } : {}),
          },
        });
      }
      return rows;
    } finally {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
