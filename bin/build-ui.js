// Builds the control page (ui/src → dist/ui): esbuild bundles ui/src/main.ts (ES2020 modules,
// minified, split so the charting library is a chunk of its own that only the Models view
// loads) and ui/src/styles.css (uPlot's stylesheet included) into dist/ui/assets/ with content
// hashes in their names; then writes dist/ui/index.html, which names them (no inline script or
// style: the page's CSP allows neither), and dist/ui/manifest.json: every file with its bytes
// and gzip bytes, and the first load's total (index, stylesheet, main script and the chunks it
// imports statically).
import { gzipSync } from "node:zlib";
import { createRequire } from "node:module";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where the gateway serves the page; index.html names the assets under it. */
const BASE = "/ui/";

/** The page's HTML: the stylesheet and the module script, by their hashed names. */
function indexHtml(script, stylesheet) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Switchyard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${BASE}${stylesheet}">
<script type="module" src="${BASE}${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Switchyard control page needs JavaScript.</noscript>
</body>
</html>
`;
}

/** Assets of earlier builds are removed once this old: a page loaded before a rebuild still loads. */
const OLD_ASSET_MS = 3_600_000;

/** Writes `path` whole: a reader sees the old file or the new one, never a part. */
function writeAtomic(path, contents) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}

/**
 * Builds the page into `outDir` (default `<root>/dist/ui`; earlier builds' assets are removed
 * once an hour old). Returns `{ ok,
 * files, firstLoad }`: each file's `path` (relative to outDir), `bytes` and `gzipBytes` (level 9,
 * as the gateway serves it), and the first load's files and totals. Prints the sizes unless
 * `quiet`; prints esbuild's errors either way and returns `{ ok: false }` when it fails.
 */
export function buildUi({ root = ROOT, outDir = join(root, "dist", "ui"), quiet = true } = {}) {
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)("esbuild");
  } catch {
    process.stderr.write("switchyard: esbuild is not installed: run `npm install`\n");
    return { ok: false, files: [], firstLoad: undefined };
  }
  const src = join(root, "ui", "src");
  const assets = join(outDir, "assets");
  // Nothing is emptied: a gateway may be serving this folder (a test, another build's gateway),
  // so files appear by rename and old assets go only once they are an hour old (below).
  mkdirSync(assets, { recursive: true });
  let result;
  try {
    result = esbuild.buildSync({
      entryPoints: { main: join(src, "main.ts"), styles: join(src, "styles.css") },
      absWorkingDir: root,
      nodePaths: [join(root, "node_modules")],
      tsconfig: join(root, "ui", "tsconfig.json"),
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "browser",
      target: "es2020",
      minify: true,
      outdir: assets,
      entryNames: "[name]-[hash]",
      chunkNames: "[name]-[hash]",
      assetNames: "[name]-[hash]",
      metafile: true,
      write: false,
      logLevel: "warning",
    });
  } catch {
    process.stderr.write("switchyard: building the control page failed (see above)\n");
    return { ok: false, files: [], firstLoad: undefined };
  }
  // The entry outputs, by their entry points (the metafile's paths are relative to root).
  const outputs = result.metafile.outputs;
  const entryOutput = (file) => {
    const want = relative(root, join(src, file)).split(sep).join("/");
    const found = Object.keys(outputs).find((path) => outputs[path].entryPoint === want);
    if (!found) throw new Error(`esbuild wrote no output for ${want}`);
    return found;
  };
  const asServed = (output) => `assets/${basename(output)}`;
  /** An output and every chunk it imports statically: what loading it fetches (dynamic imports wait). */
  const withStaticImports = (output, seen = new Set()) => {
    if (seen.has(output)) return seen;
    seen.add(output);
    for (const i of outputs[output]?.imports ?? [])
      if (i.kind === "import-statement" && !i.external) withStaticImports(i.path, seen);
    return seen;
  };
  // A hashed name is its content: a file already there is left alone; a new one appears whole.
  const built = new Set();
  for (const file of result.outputFiles) {
    built.add(basename(file.path));
    if (!existsSync(file.path)) writeAtomic(file.path, file.contents);
  }
  for (const name of readdirSync(assets))
    if (!built.has(name) && Date.now() - statSync(join(assets, name)).mtimeMs > OLD_ASSET_MS)
      rmSync(join(assets, name), { force: true });
  const mainOutput = entryOutput("main.ts");
  const script = asServed(mainOutput);
  const stylesheet = asServed(entryOutput("styles.css"));
  writeAtomic(join(outDir, "index.html"), indexHtml(script, stylesheet));
  const sized = (path) => {
    const body = readFileSync(join(outDir, path));
    return { path, bytes: body.length, gzipBytes: gzipSync(body, { level: 9 }).length };
  };
  const files = ["index.html", ...[...built].sort().map((name) => `assets/${name}`)].map(sized);
  const firstPaths = new Set(["index.html", stylesheet, ...[...withStaticImports(mainOutput)].map(asServed)]);
  const first = files.filter((f) => firstPaths.has(f.path));
  const firstLoad = {
    files: first.map((f) => f.path),
    bytes: first.reduce((n, f) => n + f.bytes, 0),
    gzipBytes: first.reduce((n, f) => n + f.gzipBytes, 0),
  };
  writeAtomic(join(outDir, "manifest.json"), `${JSON.stringify({ files, firstLoad }, null, 2)}\n`);
  if (!quiet) {
    const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
    for (const f of files)
      process.stderr.write(
        `  ${f.path.padEnd(40)} ${kb(f.bytes).padStart(9)}  gzip ${kb(f.gzipBytes).padStart(8)}\n`,
      );
    process.stderr.write(
      `switchyard: control page built into ${outDir}; first load ${kb(firstLoad.bytes)} (gzip ${kb(firstLoad.gzipBytes)})\n`,
    );
  }
  return { ok: true, files, firstLoad };
}

// `node bin/build-ui.js [outDir]`: build and print the sizes.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = process.argv[2];
  process.exitCode = buildUi({ ...(out ? { outDir: out } : {}), quiet: false }).ok ? 0 : 1;
}
