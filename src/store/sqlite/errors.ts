/**
 * The one place where SQLite (and file-system) failures become StoreErrors: a table of
 * error-code patterns, each with a stable StoreError code and a plain-words message.
 */
import { accessSync, constants } from "node:fs";
import { dirname, resolve } from "node:path";
import { StoreError } from "../store-error.js";

interface ErrorRule {
  /** better-sqlite3 result codes (extended codes match their base) or Node errno codes. */
  codes: readonly string[];
  /** Extra condition, for codes that mean different things in different situations. */
  when?: (path: string) => boolean;
  code: StoreError["code"];
  message: (path: string, original: string) => string;
}

/** First match wins. */
const RULES: readonly ErrorRule[] = [
  {
    codes: ["SQLITE_BUSY", "SQLITE_LOCKED"],
    code: "locked",
    message: (path) => `database ${path} is locked by another process (is another gateway running?)`,
  },
  {
    codes: ["SQLITE_CORRUPT", "SQLITE_NOTADB"],
    code: "corrupt",
    message: (path) =>
      `database ${path} is not a valid switchyard database or is damaged; move it aside and restart to create a fresh one`,
  },
  {
    codes: ["SQLITE_READONLY", "EACCES", "EPERM", "EROFS"],
    code: "read_only",
    message: (path) => `database ${path} is read-only; check the permissions of the file and its folder`,
  },
  {
    codes: ["SQLITE_CANTOPEN"],
    when: (path) => !isWritableDir(dirname(resolve(path))),
    code: "read_only",
    message: (path) => `database ${path} cannot be opened: its folder is not writable`,
  },
  {
    codes: ["SQLITE_FULL", "ENOSPC"],
    code: "disk_full",
    message: (path) => `database ${path} cannot be written: the disk is full`,
  },
];

/**
 * Converts any failure of a database call into a StoreError with a stable code, a message
 * naming the database path, and the original error as `cause`. StoreErrors pass through.
 */
export function toStoreError(err: unknown, path: string): StoreError {
  if (err instanceof StoreError) return err;
  const code = errorCode(err);
  const original = err instanceof Error ? err.message : String(err);
  for (const rule of RULES) {
    if (!rule.codes.some((c) => code === c || code.startsWith(`${c}_`))) continue;
    if (rule.when && !rule.when(path)) continue;
    return new StoreError(rule.code, rule.message(path, original), { cause: err });
  }
  return new StoreError("io", `database ${path} failed: ${original}`, { cause: err });
}

/** Runs one synchronous database step, rethrowing any failure through `toStoreError`. */
export function guard<T>(path: string, step: () => T): T {
  try {
    return step();
  } catch (err) {
    throw toStoreError(err, path);
  }
}

function errorCode(err: unknown): string {
  if (typeof err === "object" && err !== null && "code" in err && typeof err.code === "string")
    return err.code;
  return "";
}

/** True unless the folder exists and this process may not write to it. */
function isWritableDir(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch (err) {
    return errorCode(err) === "ENOENT";
  }
}
