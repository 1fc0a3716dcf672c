/**
 * The memory index against real files in temp folders: building and ranking, freshness after
 * hand edits and deletions, queries full of FTS5 syntax, files that are not UTF-8, and what is
 * left out (README, hidden files, links out of the workspace).
 */
import {
  appendFile,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryIndexError } from "../../../src/harness/memory/memory-index-error.js";
import { MemoryIndex } from "../../../src/harness/memory/memory-index.js";
import type { MemoryWarnings } from "../../../src/harness/memory/types.js";
import { ManualClock } from "../../../src/util/clock.js";

let tmp: string;
let ws: string;
let dbPath: string;
let warnings: string[];
let index: MemoryIndex;

const logger: MemoryWarnings = { warn: (_ctx, message) => warnings.push(message) };
/** A clock an hour ahead: every file written by the test is old enough for its mtime to be trusted. */
const later = () => new ManualClock(Date.now() + 3_600_000);

beforeEach(async () => {
  tmp = await realpath(await mkdtemp(path.join(tmpdir(), "switchyard-memidx-")));
  ws = path.join(tmp, "ws");
  dbPath = path.join(tmp, "home", "memory-index.db");
  warnings = [];
  await mkdir(path.join(ws, "memory"), { recursive: true });
  await writeFile(
    path.join(ws, "MEMORY.md"),
    [
      "# MEMORY.md", // 1
      "", // 2
      "## About my person", // 3
      "", // 4
      "- Ann lives in Lisbon and prefers short replies.", // 5
      "- Allergic to peanuts.", // 6
      "", // 7
      "## Lessons", // 8
      "", // 9
      "- Check the calendar before promising a time.", // 10
    ].join("\n"),
  );
  await writeFile(
    path.join(ws, "memory", "2025-03-14.md"),
    [
      "# 2025-03-14", // 1
      "", // 2
      "- Booked the dentist for Tue 18 Mar, 09:30.", // 3
      "- Dentist reminder: dentist visit the evening before.", // 4
      "- Open: ask Sam for the venue shortlist.", // 5
    ].join("\n"),
  );
  index = new MemoryIndex({ workspaceDir: ws, dbPath, logger, clock: later() });
});

afterEach(async () => {
  index.close();
  await rm(tmp, { recursive: true, force: true });
});

describe("MemoryIndex", () => {
  it("finds chunks with their line ranges, the best match first, the match highlighted", async () => {
    const hits = await index.search("dentist");
    expect(hits.map((h) => [h.path, h.startLine, h.endLine])).toEqual([
      ["memory/2025-03-14.md", 4, 4],
      ["memory/2025-03-14.md", 3, 3],
    ]);
    expect(hits[0]?.snippet).toBe("- **Dentist** reminder: **dentist** visit the evening before.");
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? Number.POSITIVE_INFINITY);

    const lisbon = await index.search("lisbon");
    expect(lisbon).toEqual([
      {
        path: "MEMORY.md",
        startLine: 5,
        endLine: 5,
        snippet: "- Ann lives in **Lisbon** and prefers short replies.",
        score: expect.any(Number),
      },
    ]);
  });

  it("stems and folds accents: 'reminders' finds reminder, 'cafe' finds Café", async () => {
    await writeFile(path.join(ws, "memory", "food.md"), "Café Nicola serves the best coffee.\n");
    expect((await index.search("reminders")).map((h) => h.startLine)).toEqual([4]);
    expect((await index.search("cafe")).map((h) => h.path)).toEqual(["memory/food.md"]);
  });

  it("wants every word, and falls back to any word when no chunk has them all", async () => {
    expect((await index.search("dentist evening")).map((h) => h.startLine)).toEqual([4]);
    const any = await index.search("peanuts shortlist");
    expect(any.map((h) => `${h.path}:${h.startLine}`).sort()).toEqual([
      "MEMORY.md:6",
      "memory/2025-03-14.md:5",
    ]);
    expect(await index.search("zeppelin")).toEqual([]);
  });

  it("respects the limit and refuses a bad one", async () => {
    expect(await index.search("dentist", { limit: 1 })).toHaveLength(1);
    await expect(index.search("dentist", { limit: 0 })).rejects.toThrow(RangeError);
    await expect(index.search("dentist", { limit: 101 })).rejects.toThrow(/1 to 100/);
  });

  it("finds a line a person appended by hand, and forgets a deleted file", async () => {
    expect(await index.search("plumber")).toEqual([]);
    await appendFile(path.join(ws, "memory", "2025-03-14.md"), "\n- The plumber comes on Thursday.\n");
    const hits = await index.search("plumber");
    expect(hits.map((h) => [h.path, h.startLine, h.endLine, h.snippet])).toEqual([
      ["memory/2025-03-14.md", 6, 6, "- The **plumber** comes on Thursday."],
    ]);

    await rm(path.join(ws, "memory", "2025-03-14.md"));
    expect(await index.search("plumber")).toEqual([]);
    expect(await index.search("dentist")).toEqual([]);
    expect((await index.search("lisbon")).map((h) => h.path)).toEqual(["MEMORY.md"]);
  });

  it("indexes notes in subfolders and a new file, but not memory/README.md, hidden files, other files", async () => {
    await mkdir(path.join(ws, "memory", "people"), { recursive: true });
    await mkdir(path.join(ws, "memory", ".trash"), { recursive: true });
    await writeFile(path.join(ws, "memory", "people", "sam.md"), "# Sam\n\nSam plays the cello.\n");
    await writeFile(path.join(ws, "memory", "README.md"), "Example: cello lessons\n");
    await writeFile(path.join(ws, "memory", ".draft.md"), "cello draft\n");
    await writeFile(path.join(ws, "memory", ".trash", "old.md"), "cello old\n");
    await writeFile(path.join(ws, "memory", "cello.txt"), "cello text\n");
    await writeFile(path.join(ws, "USER.md"), "cello user\n");
    expect((await index.search("cello")).map((h) => `${h.path}:${h.startLine}`)).toEqual([
      "memory/people/sam.md:3",
    ]);
  });

  it("re-reads only what changed: a scan of unchanged files is just stats", async () => {
    for (let i = 0; i < 100; i++) {
      await writeFile(path.join(ws, "memory", `note-${String(i).padStart(3, "0")}.md`), `- item ${i} kiwi\n`);
    }
    expect(await index.refresh()).toEqual({ indexed: 102, removed: 0, unchanged: 0, skipped: 0 });
    expect(await index.refresh()).toEqual({ indexed: 0, removed: 0, unchanged: 102, skipped: 0 });
    await appendFile(path.join(ws, "memory", "note-007.md"), "- mango\n");
    await rm(path.join(ws, "memory", "note-008.md"));
    expect(await index.refresh()).toEqual({ indexed: 1, removed: 1, unchanged: 100, skipped: 0 });
    expect((await index.search("mango")).map((h) => h.path)).toEqual(["memory/note-007.md"]);
    expect(await index.search("kiwi", { limit: 100 })).toHaveLength(99);
  });

  it("re-reads a file modified within the mtime's resolution even when mtime and size look unchanged", async () => {
    const file = path.join(ws, "memory", "2025-03-14.md");
    // Whole seconds, so that utimes can put back exactly the mtime the index saw.
    const mtime = new Date(Math.floor(Date.now() / 1000) * 1000);
    const sameSizeEdit = async (from: string, to: string) => {
      await writeFile(file, (await readFile(file, "utf8")).replace(from, to));
      await utimes(file, mtime, mtime);
    };
    await utimes(file, mtime, mtime);
    // An mtime as old as the clock's "now": it may still change within its resolution.
    index.close();
    index = new MemoryIndex({ workspaceDir: ws, dbPath, logger, clock: new ManualClock(mtime.getTime()) });
    expect(await index.search("gammas")).toEqual([]);
    await sameSizeEdit("dentist", "gammas!");
    expect((await index.search("gammas")).map((h) => h.startLine)).toEqual([3]);

    // Long after that mtime, (mtime, size) is trusted: the same trick goes unnoticed (the cost of stats only).
    index.close();
    index = new MemoryIndex({ workspaceDir: ws, dbPath, logger, clock: later() });
    expect((await index.search("gammas")).map((h) => h.startLine)).toEqual([3]);
    await sameSizeEdit("gammas!", "deltas!");
    expect((await index.search("deltas")).map((h) => h.startLine)).toEqual([]);
  });

  it("never throws on FTS5 syntax in a query: every term is searched as text", async () => {
    await appendFile(
      path.join(ws, "MEMORY.md"),
      '\n- Wi-Fi password hint: "blue" (ask Ann)\n- C++ and key:value notes\n',
    );
    const queries = [
      '"',
      '"unbalanced',
      "(",
      "dentist)",
      "-",
      "Wi-Fi",
      "key:value",
      "C++",
      "*",
      "dent*",
      "^dentist",
      "AND",
      "dentist OR",
      "NOT dentist",
      "NEAR(dentist venue)",
      "{col}: x",
      "text:dentist",
      "'; DROP TABLE chunks; --",
    ];
    for (const q of queries) await expect(index.search(q), q).resolves.toBeInstanceOf(Array);
    expect(await index.search("-")).toEqual([]);
    expect(await index.search("   ")).toEqual([]);
    expect((await index.search("dentist)")).map((h) => h.startLine)).toEqual([4, 3]);
    expect((await index.search("Wi-Fi")).map((h) => h.startLine)).toEqual([11]);
    expect((await index.search('"blue"')).map((h) => h.startLine)).toEqual([11]);
    expect((await index.search("key:value")).map((h) => h.startLine)).toEqual([12]);
    expect((await index.search("text:dentist")).map((h) => h.startLine)).toEqual([]);
  });

  it("indexes a file that is not UTF-8 with replacement characters, and skips a binary one, with warnings", async () => {
    const latin1 = Buffer.concat([
      Buffer.from("Caf"),
      Buffer.from([0xe9]),
      Buffer.from(" with the oboist\n"),
    ]);
    await writeFile(path.join(ws, "memory", "latin1.md"), latin1);
    await writeFile(path.join(ws, "memory", "blob.md"), Buffer.from([0x6f, 0x62, 0x6f, 0x65, 0x00, 0x01]));
    const hits = await index.search("oboist");
    expect(hits.map((h) => [h.path, h.snippet])).toEqual([
      ["memory/latin1.md", "Caf\uFFFD with the **oboist**"],
    ]);
    expect(warnings.sort()).toEqual([
      "memory index: memory/blob.md not indexed: a binary file, not text",
      "memory index: memory/latin1.md is not valid UTF-8: indexed with replacement characters",
    ]);
    // Unchanged files are not read again, so not reported again.
    await index.search("oboist");
    expect(warnings).toHaveLength(2);
  });

  it("does not follow links out of the workspace, nor linked folders", async () => {
    const outside = path.join(tmp, "outside");
    await mkdir(outside);
    await writeFile(path.join(outside, "secret.md"), "the vault code is zebra\n");
    await symlink(path.join(outside, "secret.md"), path.join(ws, "memory", "secret.md"));
    await symlink(outside, path.join(ws, "memory", "linked"));
    await writeFile(path.join(ws, "inside.md"), "zebra crossing inside\n");
    await symlink(path.join(ws, "inside.md"), path.join(ws, "memory", "inside-link.md"));
    expect((await index.search("zebra")).map((h) => h.path)).toEqual(["memory/inside-link.md"]);
  });

  it("does not index a memory/ folder that is a link out of the workspace", async () => {
    const outside = path.join(tmp, "outside");
    await mkdir(outside);
    await writeFile(path.join(outside, "x.md"), "zebra\n");
    await rm(path.join(ws, "memory"), { recursive: true });
    await symlink(outside, path.join(ws, "memory"));
    expect(await index.search("zebra")).toEqual([]);
  });

  it("finds nothing, without failing, when the workspace does not exist", async () => {
    index.close();
    index = new MemoryIndex({ workspaceDir: path.join(tmp, "nope"), dbPath, logger });
    expect(await index.search("dentist")).toEqual([]);
  });

  it("keeps the index across instances, and empties it for another workspace", async () => {
    expect(await index.search("lisbon")).toHaveLength(1);
    index.close();
    index = new MemoryIndex({ workspaceDir: ws, dbPath, logger, clock: later() });
    expect(await index.refresh()).toEqual({ indexed: 0, removed: 0, unchanged: 2, skipped: 0 });
    index.close();
    const other = path.join(tmp, "other");
    await mkdir(other);
    await writeFile(path.join(other, "MEMORY.md"), "Bob lives in Porto\n");
    index = new MemoryIndex({ workspaceDir: other, dbPath, logger });
    expect(await index.search("lisbon")).toEqual([]);
    expect((await index.search("porto")).map((h) => h.path)).toEqual(["MEMORY.md"]);
  });

  it("creates its database owner-only, and rebuilds a damaged one", async () => {
    await index.search("lisbon");
    expect((await stat(dbPath)).mode & 0o777).toBe(0o600);
    index.close();
    await writeFile(dbPath, "this is not a database, just text that fills the header and more ".repeat(20));
    await rm(`${dbPath}-wal`, { force: true });
    await rm(`${dbPath}-shm`, { force: true });
    index = new MemoryIndex({ workspaceDir: ws, dbPath, logger });
    // The database opens on first use.
    expect(await index.search("lisbon")).toHaveLength(1);
    expect(warnings.some((w) => w.includes("is damaged") && w.includes("rebuilding"))).toBe(true);
  });

  it("fails with code closed after close()", async () => {
    index.close();
    const err = await index.search("dentist").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MemoryIndexError);
    expect((err as MemoryIndexError).code).toBe("closed");
    index.close(); // idempotent
  });

  it("refuses bad options, naming the field", () => {
    expect(() => new MemoryIndex({ workspaceDir: "", dbPath })).toThrow(/workspaceDir/);
    expect(() => new MemoryIndex({ workspaceDir: ws, dbPath: " " })).toThrow(/dbPath/);
    expect(() => new MemoryIndex({ workspaceDir: ws, dbPath, busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs/);
  });

  it("stops at an aborted signal with its reason", async () => {
    const controller = new AbortController();
    controller.abort(new Error("run aborted"));
    await expect(index.search("dentist", { signal: controller.signal })).rejects.toThrow("run aborted");
    expect(await index.search("dentist")).toHaveLength(2);
  });

  it("serves concurrent searches from one instance", async () => {
    const results = await Promise.all([index.search("dentist"), index.search("lisbon"), index.search("sam")]);
    expect(results.map((r) => r.length)).toEqual([2, 1, 1]);
  });
});
