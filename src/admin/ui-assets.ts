/**
 * The control page's files (`dist/ui`, built by `npm run build`), served at `/ui/`: read from
 * disk on first request and kept in memory with their gzip form, so a gateway whose page is never
 * opened spends nothing on it. `index.html` is read afresh for each request and never cached by
 * the browser (it names the current assets, which a rebuild replaces); the assets carry a content hash in their names and are cached for a year. Every
 * answer has a strict Content-Security-Policy (scripts and styles from this origin only, no
 * inline script), `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`.
 */
import { readFile, stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { gzipSync } from "node:zlib";

/** The page's security headers (also sent with its 404s). */
export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".map": "application/json; charset=utf-8",
};

interface Asset {
  body: Buffer;
  gzip: Buffer | undefined;
  type: string;
  immutable: boolean;
}

/** Owns the in-memory copies of the page's files, loaded on first request. */
export class UiAssets {
  readonly #root: string;
  readonly #cache = new Map<string, Promise<Asset | undefined>>();

  /** @param root the built page's folder (`dist/ui`). */
  constructor(root: string) {
    this.#root = root;
  }

  /** Answers `GET /ui/…`: a file, or index.html for the page's own routes; 404 for a missing asset. */
  async serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const rel = url.pathname === "/ui" || url.pathname === "/ui/" ? "index.html" : url.pathname.slice(4);
    // Paths with no file extension are the page's routes: the page itself answers them.
    const file = extname(rel) === "" ? "index.html" : rel;
    const asset = await this.#load(file);
    if (!asset) {
      const missing = file === "index.html";
      const text = missing
        ? "The control page is not built: run `npm run build` (it writes dist/ui), then reload.\n"
        : `no such file: /ui/${rel}\n`;
      res.writeHead(missing ? 503 : 404, {
        ...UI_SECURITY_HEADERS,
        "content-type": "text/plain; charset=utf-8",
        "cache-control": "no-store",
      });
      res.end(text);
      return;
    }
    const gzip = asset.gzip && /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
    const body = gzip ? (asset.gzip as Buffer) : asset.body;
    res.writeHead(200, {
      ...UI_SECURITY_HEADERS,
      "content-type": asset.type,
      "content-length": body.length,
      "cache-control": asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
      vary: "accept-encoding",
      ...(gzip ? { "content-encoding": "gzip" } : {}),
    });
    res.end(req.method === "HEAD" ? undefined : body);
  }

  #load(rel: string): Promise<Asset | undefined> {
    // index.html names the current assets: a rebuild while the gateway runs replaces it (and
    // removes the old assets), so it is read afresh each time (a few hundred bytes).
    if (rel === "index.html") return this.#read(rel);
    let pending = this.#cache.get(rel);
    if (!pending) {
      pending = this.#read(rel);
      this.#cache.set(rel, pending);
      // A file that was missing may be built later: forget the miss.
      pending.then((a) => a ?? this.#cache.delete(rel)).catch(() => this.#cache.delete(rel));
    }
    return pending;
  }

  async #read(rel: string): Promise<Asset | undefined> {
    const path = normalize(join(this.#root, rel));
    if (!path.startsWith(this.#root + sep)) return undefined; // "..": outside the page
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    const body = await readFile(path);
    const type = TYPES[extname(path)] ?? "application/octet-stream";
    const compressible =
      type.startsWith("text/") || type.startsWith("application/json") || type.includes("svg");
    const gzip = compressible && body.length > 512 ? gzipSync(body, { level: 9 }) : undefined;
    return { body, gzip, type, immutable: rel.startsWith("assets/") };
  }
}
