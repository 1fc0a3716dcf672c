/**
 * `npm start` compiles only when a source changed: the launcher compares the newest source
 * (and tsconfig) time with the stamp of the last build.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isStale } from "../../bin/build-if-stale.js";

const root = mkdtempSync(join(tmpdir(), "sy-build-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const at = (path: string, seconds: number) => utimesSync(path, seconds, seconds);

describe("build-if-stale", () => {
  it("builds when dist was never built, then only after a source or tsconfig changes", () => {
    mkdirSync(join(root, "src", "deep"), { recursive: true });
    mkdirSync(join(root, "dist"));
    const source = join(root, "src", "deep", "a.ts");
    const stamp = join(root, "dist", ".build-stamp");
    const tsconfig = join(root, "tsconfig.json");
    writeFileSync(source, "export const a = 1;\n");
    writeFileSync(tsconfig, "{}\n");
    at(source, 1_000);
    at(tsconfig, 1_000);
    expect(isStale(root)).toBe(true); // never built

    writeFileSync(stamp, "built\n");
    at(stamp, 2_000);
    expect(isStale(root)).toBe(false); // a second start does not compile

    at(source, 3_000);
    expect(isStale(root)).toBe(true); // a source changed
    at(stamp, 4_000);
    at(tsconfig, 5_000);
    expect(isStale(root)).toBe(true); // the compiler options changed
    writeFileSync(join(root, "src", "notes.md"), "not a source\n");
    at(stamp, 6_000);
    expect(isStale(root)).toBe(false);
  });
});
