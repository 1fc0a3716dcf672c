#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (npm run build).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write(
    "switchyard: dist/ is missing; run `npm run build` first (npm start does it for you).\n",
  );
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
