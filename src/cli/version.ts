/**
 * The installed package's version, read from its package.json. The file is found relative to this
 * module, which sits two folders below the package root both in `src/cli/` (run through tsx) and
 * in `dist/cli/` (built, or installed with `npm install -g`).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const PACKAGE_JSON = new URL("../../package.json", import.meta.url);

let cached: string | undefined;

/**
 * The `version` field of switchyard's package.json, read once. Throws when the file is missing or
 * has no version: the package is broken, and saying "unknown" would hide that.
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  const parsed: unknown = JSON.parse(readFileSync(PACKAGE_JSON, "utf8"));
  const version =
    typeof parsed === "object" && parsed !== null ? (parsed as { version?: unknown }).version : undefined;
  if (typeof version !== "string" || version === "")
    throw new Error(`${fileURLToPath(PACKAGE_JSON)} has no "version" field`);
  cached = version;
  return version;
}
