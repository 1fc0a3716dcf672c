/**
 * The bench's browser-like first load (bench/page-load.ts) on a fixture page served by the
 * gateway's own UiAssets: it finds what the HTML names and what the main script imports
 * statically (minified or not), leaves dynamic imports alone, and counts gzip and raw bytes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UiAssets } from "../../src/admin/ui-assets.js";
import { htmlReferences, loadPage, staticImports } from "../../bench/page-load.js";

const MAIN = `import{h as e,r as t}from"./vendor-a1b2c3.js";import"./side-d4e5f6.js";
const later=()=>import("./route-logs-0f0f0f.js");${"e(t,'a fairly repetitive page body');".repeat(200)}`;

describe("loadPage", () => {
  let dir: string;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sy-page-load-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(
      join(dir, "index.html"),
      `<!doctype html><html><head><link rel="stylesheet" href="./assets/index-9z8y7x.css">
<link rel="icon" href="/ui/favicon.svg"><script type="module" src="./assets/index-1a2b3c.js"></script>
<script src="https://cdn.example.com/x.js"></script></head><body><div id="app"></div></body></html>`,
    );
    writeFileSync(join(dir, "assets", "index-1a2b3c.js"), MAIN);
    writeFileSync(join(dir, "assets", "vendor-a1b2c3.js"), `export{x as h,y as r}from"./side-d4e5f6.js";`);
    writeFileSync(join(dir, "assets", "side-d4e5f6.js"), "export const x=1,y=2;");
    writeFileSync(join(dir, "assets", "route-logs-0f0f0f.js"), "export const never=1;");
    writeFileSync(join(dir, "assets", "index-9z8y7x.css"), `body{margin:0}${".a{color:red}".repeat(100)}`);
    writeFileSync(join(dir, "favicon.svg"), "<svg/>");
    const ui = new UiAssets(dir);
    server = createServer((req, res) => {
      ui.serve(req, res, new URL(req.url ?? "/", "http://localhost")).catch(() => res.destroy());
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((done) => server.close(done));
    rmSync(dir, { recursive: true, force: true });
  });

  it("finds the HTML's files and the static imports, not the dynamic ones or other origins", () => {
    expect(htmlReferences('<script src="./a.js"></script><link href="b.css">', "/ui/")).toEqual([
      "/ui/a.js",
      "/ui/b.css",
    ]);
    expect(staticImports(MAIN, "/ui/assets/index-1a2b3c.js")).toEqual([
      "/ui/assets/vendor-a1b2c3.js",
      "/ui/assets/side-d4e5f6.js",
    ]);
    expect(staticImports('import { a } from "../x.js";\nexport * from "./y.js"', "/ui/assets/m.js")).toEqual([
      "/ui/x.js",
      "/ui/assets/y.js",
    ]);
  });

  it("loads the page as a browser's first visit, each file once, gzip where the server compresses", async () => {
    const load = await loadPage(url);
    expect(load.files.map((f) => f.path).sort()).toEqual([
      "/ui/",
      "/ui/assets/index-1a2b3c.js",
      "/ui/assets/index-9z8y7x.css",
      "/ui/assets/side-d4e5f6.js",
      "/ui/assets/vendor-a1b2c3.js",
      "/ui/favicon.svg",
    ]);
    expect(load.files.every((f) => f.status === 200)).toBe(true);
    const main = load.files.find((f) => f.path.endsWith("index-1a2b3c.js"));
    expect(main?.gzip).toBe(true);
    expect(main?.rawBytes).toBe(Buffer.byteLength(MAIN));
    expect(main?.wireBytes).toBeLessThan(main?.rawBytes ?? 0);
    expect(load.rawBytes).toBe(load.files.reduce((n, f) => n + f.rawBytes, 0));
    expect(load.wireBytes).toBeLessThan(load.rawBytes);
  });

  it("throws when the page is not built", async () => {
    await expect(loadPage(url, "/ui/missing-dir/")).resolves.toBeDefined(); // a route: index.html
    const empty = mkdtempSync(join(tmpdir(), "sy-page-none-"));
    const bare = new UiAssets(empty);
    const s = createServer((req, res) => {
      bare.serve(req, res, new URL(req.url ?? "/", "http://localhost")).catch(() => res.destroy());
    });
    await new Promise<void>((done) => s.listen(0, "127.0.0.1", done));
    try {
      await expect(loadPage(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)).rejects.toThrow(/503/);
    } finally {
      await new Promise((done) => s.close(done));
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
