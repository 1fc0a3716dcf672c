// In a source checkout, compiles src/ into dist/ when a source file is newer than the last
// build, so `npm start` and `npx switchyard` never run stale code and never pay for a compile
// they do not need (checking ~100 file times takes a few milliseconds; tsc takes seconds).
// An installed package has no src/ and is used as built.
//
// The build is tsc (type-checked; a failed build leaves dist/ as it was), then esbuild bundles
// dist/main.js into dist/bundle/ — one module for the gateway and one chunk per lazily imported
// part (each command, the model SDKs) — which the launcher starts. Loading ~150 compiled
// modules and the model SDK's ~360 one by one cost a restart about half a second on a 2-core
// VM; the platform SDKs, native better-sqlite3, pg and the tokenizer stay packages of their own.
// The control page (ui/src) is built last, into dist/ui (see build-ui.js).
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildUi } from "./build-ui.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const INPUTS = ["tsconfig.json", "tsconfig.build.json"];

/** The stamp `build()` writes: its time is when the last successful build started. */
function stampOf(root) {
  return join(root, "dist", ".build-stamp");
}

/** Newest modification time (ms) among the files under `dir` whose names end in one of `endings` (0: none, or no `dir`). */
function newestOf(dir, endings = [".ts"]) {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestOf(path, endings));
    else if (endings.some((e) => entry.name.endsWith(e))) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** True when `root`'s dist/ is missing or older than a source file (src/, or the page's ui/src .ts/.css) or a tsconfig. */
export function isStale(root = ROOT) {
  const stamp = stampOf(root);
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  const inputs = INPUTS.map((f) => join(root, f)).filter((f) => existsSync(f));
  return (
    newestOf(join(root, "src")) > built ||
    newestOf(join(root, "ui", "src"), [".ts", ".css"]) > built ||
    inputs.some((f) => statSync(f).mtimeMs > built)
  );
}

/** Builds when stale; returns false (after printing tsc's output) when the build fails. */
export function buildIfStale() {
  if (!existsSync(join(ROOT, "src")) || !isStale()) return true;
  process.stderr.write("switchyard: sources changed since the last build; compiling (a few seconds)…\n");
  return build({ quiet: false });
}

/** Compiles src/ into dist/ and the page into dist/ui, and stamps it; false when the build fails. */
export function build({ quiet = true } = {}) {
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  if (!existsSync(tsc)) {
    process.stderr.write(
      "switchyard: dist/ is out of date and TypeScript is not installed: run `npm install`\n",
    );
    return false;
  }
  const started = Date.now();
  // The stamp is taken before compiling: a file saved during the build counts as newer.
  const stampTime = new Date(started);
  const result = spawnSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json")], {
    stdio: "inherit",
  });
  if (result.status !== 0) {
    process.stderr.write("switchyard: the build failed (see above); dist/ was left as it was\n");
    return false;
  }
  if (!bundle()) return false;
  // The page's sizes are printed when asked (`npm run build -- --verbose`).
  if (existsSync(join(ROOT, "ui", "src")) && !buildUi({ root: ROOT, quiet }).ok) return false;
  writeFileSync(stampOf(ROOT), `${stampTime.toISOString()}\n`);
  utimesSync(stampOf(ROOT), stampTime, stampTime);
  if (!quiet)
    process.stderr.write(`switchyard: compiled in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return true;
}

/** Packages the bundle leaves to Node: native code, and what only a configured channel or a long context loads. */
const EXTERNAL = [
  "better-sqlite3",
  "discord.js",
  "@slack/bolt",
  "@slack/socket-mode",
  "grammy",
  "js-tiktoken",
  "pino-pretty",
  "pg",
];

/** Bundles dist/main.js into dist/bundle/ (see the header); false when esbuild fails. */
function bundle() {
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)("esbuild");
  } catch {
    process.stderr.write("switchyard: esbuild is not installed: run `npm install`\n");
    return false;
  }
  const out = join(ROOT, "dist", "bundle");
  rmSync(out, { recursive: true, force: true });
  try {
    esbuild.buildSync({
      entryPoints: [join(ROOT, "dist", "main.js")],
      bundle: true,
      splitting: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outdir: out,
      logLevel: "warning",
      external: EXTERNAL,
      // Bundled CommonJS packages call require(); an ES module has none of its own.
      banner: {
        js: "import { createRequire as __syRequire } from 'node:module'; const require = __syRequire(import.meta.url);",
      },
    });
    return true;
  } catch {
    // esbuild has printed what went wrong.
    process.stderr.write("switchyard: bundling failed (see above); dist/ was left unstamped\n");
    return false;
  }
}

// `node bin/build-if-stale.js [--verbose]` (npm run build): build unconditionally.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = build({ quiet: !process.argv.includes("--verbose") }) ? 0 : 1;
}
