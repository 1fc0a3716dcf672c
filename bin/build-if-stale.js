// In a source checkout, compiles src/ into dist/ when a source file is newer than the last
// build, so `npm start` and `npx switchyard` never run stale code and never pay for a compile
// they do not need (checking ~100 file times takes a few milliseconds; tsc takes seconds).
// An installed package has no src/ and is used as built.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const INPUTS = ["tsconfig.json", "tsconfig.build.json"];

/** The stamp `build()` writes: its time is when the last successful build started. */
function stampOf(root) {
  return join(root, "dist", ".build-stamp");
}

/** Newest modification time (ms) among the .ts files under `dir`. */
function newestTs(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestTs(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** True when `root`'s dist/ is missing or older than a source file or a tsconfig. */
export function isStale(root = ROOT) {
  const stamp = stampOf(root);
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  const inputs = INPUTS.map((f) => join(root, f)).filter((f) => existsSync(f));
  return newestTs(join(root, "src")) > built || inputs.some((f) => statSync(f).mtimeMs > built);
}

/** Builds when stale; returns false (after printing tsc's output) when the build fails. */
export function buildIfStale() {
  if (!existsSync(join(ROOT, "src")) || !isStale()) return true;
  process.stderr.write("switchyard: sources changed since the last build; compiling (a few seconds)…\n");
  return build({ quiet: false });
}

/** Compiles src/ into dist/ and stamps it; false when the build fails. */
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
  writeFileSync(stampOf(ROOT), `${stampTime.toISOString()}\n`);
  utimesSync(stampOf(ROOT), stampTime, stampTime);
  if (!quiet)
    process.stderr.write(`switchyard: compiled in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return true;
}

// `node bin/build-if-stale.js` (npm run build): build unconditionally.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = build() ? 0 : 1;
}
