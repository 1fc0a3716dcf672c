/**
 * A page's first load as a browser makes it, over node:http (so the client's own CPU stays out
 * of the server's figures): GET the page with `accept-encoding: gzip`, then every file its HTML
 * names (`<script src>`, `<link href>`), then the modules each loaded script imports statically
 * (`import … from "./chunk-HASH.js"`, `export … from`, `import "./x.js"`), as a browser follows
 * them before it runs the page. Dynamic `import()` is not followed: it loads later, on demand.
 */
import { Agent, request } from "node:http";
import { gunzipSync } from "node:zlib";

/** One file of the load. */
export interface LoadedFile {
  /** Its path on the server, e.g. `/ui/assets/index-3f2a.js`. */
  path: string;
  status: number;
  /** Body bytes as sent (gzip when the server compressed it). */
  wireBytes: number;
  /** Body bytes after decompression. */
  rawBytes: number;
  gzip: boolean;
}

/** A whole load. */
export interface PageLoad {
  files: LoadedFile[];
  wireBytes: number;
  rawBytes: number;
  /** From the first request to the last byte of the last file (ms). */
  wallMs: number;
}

/** Options of {@link loadPage}. */
export interface LoadPageOptions {
  /** Connections per host, as a browser opens over HTTP/1.1; default 6. */
  maxSockets?: number;
  /** Per-request limit; default 10_000 ms. */
  timeoutMs?: number;
}

const SCRIPT_SRC = /<script\b[^>]*?\bsrc\s*=\s*["']([^"']+)["']/gi;
const LINK_HREF = /<link\b[^>]*?\bhref\s*=\s*["']([^"']+)["']/gi;
/** Static imports and re-exports of a relative module, minified or not. */
const STATIC_IMPORT =
  /(?:^|[;\s})])(?:import|export)\s*(?:[\w$*{}\s,]*?\bfrom\s*)?["'](\.{1,2}\/[^"']+?\.m?js)["']/g;

/** The same-origin files a page's HTML references, as absolute paths. */
export function htmlReferences(html: string, pagePath: string): string[] {
  const refs = [...html.matchAll(SCRIPT_SRC), ...html.matchAll(LINK_HREF)].map((m) => m[1] as string);
  return sameOrigin(refs, pagePath);
}

/** The modules a script imports statically, as absolute paths. */
export function staticImports(source: string, scriptPath: string): string[] {
  return sameOrigin(
    [...source.matchAll(STATIC_IMPORT)].map((m) => m[1] as string),
    scriptPath,
  );
}

function sameOrigin(refs: string[], base: string): string[] {
  const origin = "http://page.invalid";
  const out: string[] = [];
  for (const ref of refs) {
    const url = new URL(ref, origin + base);
    if (url.origin === origin && !out.includes(url.pathname)) out.push(url.pathname);
  }
  return out;
}

/**
 * Loads `pagePath` (default `/ui/`) from `baseUrl` the way a browser's first visit does (see the
 * file header). Throws when the page itself is not a 200; a referenced file that fails is kept
 * with its status, for the caller to judge.
 */
export async function loadPage(
  baseUrl: string,
  pagePath = "/ui/",
  options: LoadPageOptions = {},
): Promise<PageLoad> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 6 });
  const timeoutMs = options.timeoutMs ?? 10_000;
  const files: LoadedFile[] = [];
  const seen = new Set<string>([pagePath]);
  const start = performance.now();
  try {
    const page = await get(agent, baseUrl + pagePath, timeoutMs);
    files.push({ path: pagePath, ...page.file });
    if (page.file.status !== 200)
      throw new Error(`GET ${pagePath}: ${page.file.status} ${page.body.toString().slice(0, 200)}`);
    let wave = htmlReferences(page.body.toString(), pagePath);
    while (wave.length > 0) {
      for (const p of wave) seen.add(p);
      const got = await Promise.all(wave.map((p) => get(agent, baseUrl + p, timeoutMs)));
      const next: string[] = [];
      got.forEach((g, i) => {
        const path = wave[i] as string;
        files.push({ path, ...g.file });
        if (g.file.status === 200 && /\.m?js$/.test(path))
          for (const dep of staticImports(g.body.toString(), path)) if (!seen.has(dep)) next.push(dep);
      });
      wave = [...new Set(next)];
    }
    const wallMs = performance.now() - start;
    return {
      files,
      wireBytes: files.reduce((n, f) => n + f.wireBytes, 0),
      rawBytes: files.reduce((n, f) => n + f.rawBytes, 0),
      wallMs,
    };
  } finally {
    agent.destroy();
  }
}

function get(
  agent: Agent,
  url: string,
  timeoutMs: number,
): Promise<{ file: Omit<LoadedFile, "path">; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { "accept-encoding": "gzip" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const wire = Buffer.concat(chunks);
        const gzip = res.headers["content-encoding"] === "gzip";
        try {
          const body = gzip ? gunzipSync(wire) : wire;
          resolve({
            file: { status: res.statusCode ?? 0, wireBytes: wire.length, rawBytes: body.length, gzip },
            body,
          });
        } catch (error) {
          reject(error);
        }
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`GET ${url}: no answer in ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  });
}
