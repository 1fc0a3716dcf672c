/**
 * The control page's build: index.html names hashed assets that exist, carries no inline script
 * or style, the first load stays under 150 KB gzip, the charting library is a chunk of its own,
 * and the manifest lists every file. Also: a changed page source makes dist/ stale.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isStale } from "../../bin/build-if-stale.js";
import { type UiBuild, buildUi } from "../../bin/build-ui.js";

const temp = mkdtempSync(join(tmpdir(), "sy-ui-"));
const out = join(temp, "ui");
let built: UiBuild;
afterAll(() => rmSync(temp, { recursive: true, force: true }));
beforeAll(() => {
  built = buildUi({ outDir: out });
}, 60_000);

describe("the control page's build", () => {
  it("writes index.html naming hashed assets that exist, with no inline script or style", () => {
    expect(built.ok).toBe(true);
    const html = readFileSync(join(out, "index.html"), "utf8");
    const script = /<script type="module" src="\/ui\/(assets\/main-[A-Z0-9]{8}\.js)"><\/script>/.exec(
      html,
    )?.[1];
    const css = /<link rel="stylesheet" href="\/ui\/(assets\/styles-[A-Z0-9]{8}\.css)">/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect(css).toBeDefined();
    expect(existsSync(join(out, script as string))).toBe(true);
    expect(existsSync(join(out, css as string))).toBe(true);
    // Every script has a src and an empty body; no style element or attribute; no on… handlers.
    for (const m of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
      expect(m[1]).toMatch(/\ssrc="/);
      expect(m[2]).toBe("");
    }
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
  });

  it("keeps the first load under 150 KB gzip, and uPlot out of it", () => {
    const first = built.firstLoad;
    // index.html, the stylesheet, the main script and the chunks it imports (not uPlot's).
    expect(first?.files.length).toBeGreaterThanOrEqual(3);
    const html = readFileSync(join(out, "index.html"), "utf8");
    for (const f of first?.files ?? [])
      if (!f.startsWith("assets/chunk-") && f !== "index.html") expect(html).toContain(f);
    expect(first?.gzipBytes).toBeLessThan(150 * 1024);
    const mainJs = first?.files.find((f) => /main-.*\.js$/.test(f)) as string;
    const main = readFileSync(join(out, mainJs), "utf8");
    // uPlot's own class names live in its chunk, which only the Models view imports.
    expect(main).not.toContain("cursor-pt");
    const chunks = built.files.filter((f) => f.path.endsWith(".js") && !first?.files.includes(f.path));
    expect(chunks.some((c) => readFileSync(join(out, c.path), "utf8").includes("cursor-pt"))).toBe(true);
    // uPlot's stylesheet is part of the page's one stylesheet.
    const css = readFileSync(join(out, first?.files.find((f) => f.endsWith(".css")) as string), "utf8");
    expect(css).toContain(".uplot");
  });

  it("lists every file in the manifest with its bytes and gzip bytes", () => {
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")) as {
      files: Array<{ path: string; bytes: number; gzipBytes: number }>;
      firstLoad: { gzipBytes: number };
    };
    expect(manifest.files.map((f) => f.path)).toContain("index.html");
    for (const f of manifest.files) {
      expect(existsSync(join(out, f.path)), f.path).toBe(true);
      expect(f.bytes).toBe(readFileSync(join(out, f.path)).length);
      expect(f.gzipBytes).toBeGreaterThan(0);
    }
    expect(manifest.firstLoad.gzipBytes).toBe(built.firstLoad?.gzipBytes);
  });
});

describe("build-if-stale and the page", () => {
  it("counts a changed .ts or .css under ui/src as a reason to build", () => {
    const root = join(temp, "stale");
    mkdirSync(join(root, "src"), { recursive: true });
    mkdirSync(join(root, "ui", "src"), { recursive: true });
    mkdirSync(join(root, "dist"));
    const at = (path: string, seconds: number) => utimesSync(path, seconds, seconds);
    const stamp = join(root, "dist", ".build-stamp");
    const css = join(root, "ui", "src", "styles.css");
    writeFileSync(join(root, "src", "a.ts"), "\n");
    writeFileSync(css, "\n");
    writeFileSync(stamp, "\n");
    at(join(root, "src", "a.ts"), 1_000);
    at(css, 1_000);
    at(stamp, 2_000);
    expect(isStale(root)).toBe(false);
    at(css, 3_000);
    expect(isStale(root)).toBe(true);
  });
});
