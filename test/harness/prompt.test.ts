/** The prompt's file cache: reads a file once while unchanged, re-reads on change, stays bounded. */
import { mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PromptFileCache } from "../../src/harness/prompt.js";

let ws: string;
beforeEach(async () => {
  ws = await mkdtemp(path.join(tmpdir(), "switchyard-prompt-"));
});
afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

describe("PromptFileCache", () => {
  it("reads unchanged files once, returns the same string, and re-reads when a file changes", async () => {
    let reads = 0;
    const cache = new PromptFileCache({
      readFile: (p) => {
        reads++;
        return readFile(p, "utf8");
      },
    });
    const file = path.join(ws, "AGENTS.md");
    await writeFile(file, "version one");
    const first = await cache.read(file);
    expect(first).toEqual({ type: "ok", text: "version one" });
    const again = await cache.read(file);
    expect(again.type === "ok" && first.type === "ok" && again.text === first.text).toBe(true);
    expect(reads).toBe(1);

    // Same size, new mtime.
    await writeFile(file, "version two");
    const later = new Date(Date.now() + 5_000);
    await utimes(file, later, later);
    expect(await cache.read(file)).toEqual({ type: "ok", text: "version two" });
    expect(reads).toBe(2);

    // New size.
    await writeFile(file, "version three");
    expect(await cache.read(file)).toEqual({ type: "ok", text: "version three" });
    expect(reads).toBe(3);
  });

  it("says missing for an absent file and strips a byte-order mark", async () => {
    const cache = new PromptFileCache();
    expect(await cache.read(path.join(ws, "nope.md"))).toEqual({ type: "missing" });
    await writeFile(path.join(ws, "bom.md"), "\uFEFFhello");
    expect(await cache.read(path.join(ws, "bom.md"))).toEqual({ type: "ok", text: "hello" });
  });

  it("stays bounded", async () => {
    const cache = new PromptFileCache({ maxEntries: 2 });
    for (const name of ["a.md", "b.md", "c.md"]) {
      await writeFile(path.join(ws, name), name);
      await cache.read(path.join(ws, name));
    }
    expect(cache.size).toBe(2);
    expect(() => new PromptFileCache({ maxEntries: 0 })).toThrow(/maxEntries must be a positive integer/);
  });
});
