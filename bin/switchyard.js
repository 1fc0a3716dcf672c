#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/. In a source checkout it is rebuilt first when
// a source file changed since the last build (bin/build-if-stale.js); otherwise it starts at once.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildIfStale } from "./build-if-stale.js";

if (!buildIfStale()) process.exit(1);
// The bundle when there is one (see build-if-stale.js); the compiled modules otherwise.
const bundled = new URL("../dist/bundle/main.js", import.meta.url);
const entry = existsSync(fileURLToPath(bundled)) ? bundled : new URL("../dist/main.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write("switchyard: dist/ is missing; run `npm run build` first.\n");
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
