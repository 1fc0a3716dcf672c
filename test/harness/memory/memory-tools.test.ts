/**
 * memory_search, memory_get and memory_write through the tool boundary (ToolRegistry), on real
 * files: output formats, path refusals, daily notes dated in a time zone, section edits of
 * MEMORY.md, the size cap, and the index kept fresh by writes.
 */
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryIndex } from "../../../src/harness/memory/memory-index.js";
import { MAX_WRITE_CHARS, memoryTools } from "../../../src/harness/memory/memory-tools.js";
import { ToolRegistry, type ToolResult } from "../../../src/harness/tools/registry.js";
import { ManualClock } from "../../../src/util/clock.js";

let tmp: string;
let ws: string;
let index: MemoryIndex;
let tools: ToolRegistry;
/** 2025-03-15 05:00 UTC: still 2025-03-14 in Los Angeles. */
const NOW = Date.UTC(2025, 2, 15, 5, 0, 0);

const TEMPLATE = `# MEMORY.md — long-term memory

Curated memory that should last.

## About my person

## Decisions and preferences

- Reports go out on Fridays.

## Active work

## Lessons

- Old lesson one.
- Old lesson two.

### A subsection of Lessons

Still part of Lessons.
`;

beforeEach(async () => {
  tmp = await realpath(await mkdtemp(path.join(tmpdir(), "switchyard-memtools-")));
  ws = path.join(tmp, "ws");
  await mkdir(path.join(ws, "memory"), { recursive: true });
  await writeFile(path.join(ws, "MEMORY.md"), TEMPLATE);
  await writeFile(path.join(ws, "USER.md"), "# USER.md\n");
  await writeFile(
    path.join(ws, "memory", "2025-03-13.md"),
    "# 2025-03-13\n\n- one\n- two dentist\n- three\n- four\n- five\n",
  );
  index = new MemoryIndex({ workspaceDir: ws, dbPath: path.join(tmp, "memory-index.db") });
  tools = new ToolRegistry();
  for (const t of memoryTools(index, { clock: new ManualClock(NOW), timeZone: "America/Los_Angeles" })) {
    tools.register(t);
  }
});

afterEach(async () => {
  index.close();
  await rm(tmp, { recursive: true, force: true });
});

function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return tools.execute(name, JSON.stringify(args), {
    workspaceDir: ws,
    sessionKey: "s",
    runId: "r",
    signal: new AbortController().signal,
  });
}

describe("memory tools", () => {
  it("declares three tools with strict, described parameters", () => {
    expect(tools.specs().map((s) => s.name)).toEqual(["memory_search", "memory_get", "memory_write"]);
    for (const spec of tools.specs()) {
      expect(spec.parameters.additionalProperties, spec.name).toBe(false);
      for (const prop of Object.values(spec.parameters.properties ?? {})) {
        expect(typeof prop === "object" && typeof prop.description === "string", spec.name).toBe(true);
      }
    }
  });

  it("memory_search lists `path:start-end: snippet`, or says there is no match", async () => {
    expect(await call("memory_search", { query: "dentist" })).toEqual({
      content: "memory/2025-03-13.md:4-4: - two **dentist**",
      isError: false,
    });
    expect((await call("memory_search", { query: "fridays" })).content).toBe(
      "MEMORY.md:9-9: - Reports go out on **Fridays**.",
    );
    expect((await call("memory_search", { query: "zeppelin (" })).content).toBe(
      'no matches for "zeppelin (" in MEMORY.md or memory/',
    );
    expect(await call("memory_search", { query: "x", limit: 51 })).toMatchObject({
      isError: true,
      code: "invalid_arguments",
    });
  });

  it("memory_get returns lines of a memory file, with where they are", async () => {
    expect((await call("memory_get", { path: "memory/2025-03-13.md", from: 4, lines: 2 })).content).toBe(
      "- two dentist\n- three\n\n[memory/2025-03-13.md lines 4–5 of 7; continue with from=6]",
    );
    expect((await call("memory_get", { path: "./memory//2025-03-13.md", from: 7 })).content).toBe(
      "- five\n\n[memory/2025-03-13.md lines 7–7 of 7]",
    );
    expect((await call("memory_get", { path: "memory\\2025-03-13.md" })).content).toBe(
      "# 2025-03-13\n\n- one\n- two dentist\n- three\n- four\n- five",
    );
    expect((await call("memory_get", { path: "MEMORY.md", lines: 1 })).content).toContain(
      "# MEMORY.md — long-term memory\n\n[MEMORY.md lines 1–1 of 20; continue with from=2]",
    );
    expect(await call("memory_get", { path: "memory/2025-03-13.md", from: 99 })).toMatchObject({
      isError: true,
      code: "invalid_arguments",
      content: expect.stringContaining("has 7 lines"),
    });
    expect(await call("memory_get", { path: "memory/2020-01-01.md" })).toMatchObject({
      isError: true,
      code: "not_found",
      content: expect.stringContaining("memory/2020-01-01.md does not exist"),
    });
  });

  it("memory_get refuses everything but MEMORY.md and memory/, naming what is allowed", async () => {
    const outside = path.join(tmp, "outside");
    await mkdir(outside);
    await writeFile(path.join(outside, "secret.md"), "top secret");
    await symlink(path.join(outside, "secret.md"), path.join(ws, "memory", "evil.md"));
    const cases: [string, string][] = [
      ["../outside/secret.md", "path_outside_workspace"],
      ["memory/../../outside/secret.md", "path_outside_workspace"],
      ["memory/../USER.md", "path_outside_workspace"],
      ["/etc/passwd", "path_outside_workspace"],
      ["C:\\Windows\\win.ini", "path_outside_workspace"],
      ["memory/evil.md", "path_outside_workspace"],
      ["USER.md", "invalid_arguments"],
      ["memory", "invalid_arguments"],
      ["memory/x\u0000.md", "invalid_arguments"],
    ];
    for (const [p, code] of cases) {
      const r = await call("memory_get", { path: p });
      expect(r, p).toMatchObject({ isError: true, code });
      expect(r.content, p).not.toContain("top secret");
    }
    expect((await call("memory_get", { path: "USER.md" })).content).toContain(
      "MEMORY.md and files under memory/",
    );
  });

  it("memory_write daily appends to today's note in the person's time zone, creating it with its date", async () => {
    expect(
      await call("memory_write", { target: "daily", text: "- Called the bank about the card." }),
    ).toEqual({
      content: "appended 33 characters to memory/2025-03-14.md (created)",
      isError: false,
    });
    expect((await call("memory_write", { target: "daily", text: "- Ordered a new card.\n\n" })).content).toBe(
      "appended 21 characters to memory/2025-03-14.md",
    );
    expect(await readFile(path.join(ws, "memory", "2025-03-14.md"), "utf8")).toBe(
      "# 2025-03-14\n\n- Called the bank about the card.\n- Ordered a new card.\n",
    );
    // Found at once, with the right lines.
    expect((await call("memory_search", { query: "bank card" })).content).toBe(
      "memory/2025-03-14.md:3-3: - Called the **bank** about the **card**.",
    );
  });

  it("memory_write daily uses UTC without a time zone", async () => {
    const utc = new ToolRegistry();
    for (const t of memoryTools(index, { clock: new ManualClock(NOW) })) utc.register(t);
    const r = await utc.execute("memory_write", JSON.stringify({ target: "daily", text: "x" }), {
      workspaceDir: ws,
      sessionKey: "s",
      runId: "r",
      signal: new AbortController().signal,
    });
    expect(r.content).toBe("appended 1 characters to memory/2025-03-15.md (created)");
  });

  it("memory_write memory with a section replaces that section's body up to the next ## heading", async () => {
    expect(
      (await call("memory_write", { target: "memory", section: "lessons", text: "- New lesson." })).content,
    ).toBe('replaced the body of "## lessons" in MEMORY.md (13 characters)');
    expect(
      (await call("memory_write", { target: "memory", section: "## Active work", text: "- Tax return" }))
        .content,
    ).toBe('replaced the body of "## Active work" in MEMORY.md (12 characters)');
    expect(
      (await call("memory_write", { target: "memory", section: "Health", text: "- Peanut allergy." }))
        .content,
    ).toBe('added section "## Health" to MEMORY.md (17 characters)');
    expect(await readFile(path.join(ws, "MEMORY.md"), "utf8")).toBe(`# MEMORY.md — long-term memory

Curated memory that should last.

## About my person

## Decisions and preferences

- Reports go out on Fridays.

## Active work

- Tax return

## Lessons

- New lesson.

## Health

- Peanut allergy.
`);
    expect((await call("memory_search", { query: "subsection" })).content).toContain("no matches");
    expect((await call("memory_search", { query: "peanut" })).content).toBe(
      "MEMORY.md:21-21: - **Peanut** allergy.",
    );
  });

  it("memory_write memory without a section appends; a missing MEMORY.md is created", async () => {
    await call("memory_write", { target: "memory", text: "- Appended fact." });
    expect(await readFile(path.join(ws, "MEMORY.md"), "utf8")).toBe(`${TEMPLATE}- Appended fact.\n`);
    await rm(path.join(ws, "MEMORY.md"));
    expect((await call("memory_write", { target: "memory", text: "First." })).content).toBe(
      "appended 6 characters to MEMORY.md (created)",
    );
    expect(await readFile(path.join(ws, "MEMORY.md"), "utf8")).toBe("# MEMORY.md\n\nFirst.\n");
    await rm(path.join(ws, "MEMORY.md"));
    await call("memory_write", { target: "memory", section: "Lessons", text: "One." });
    expect(await readFile(path.join(ws, "MEMORY.md"), "utf8")).toBe("# MEMORY.md\n\n## Lessons\n\nOne.\n");
  });

  it("memory_write refuses text over the cap, telling the limit, and other misuse", async () => {
    const big = await call("memory_write", { target: "daily", text: "x".repeat(MAX_WRITE_CHARS + 1) });
    expect(big).toMatchObject({ isError: true, code: "invalid_arguments" });
    expect(big.content).toContain(`at most ${MAX_WRITE_CHARS} characters`);
    const direct = memoryTools(index).find((t) => t.name === "memory_write");
    await expect(
      direct?.run(
        { target: "daily", text: "y".repeat(MAX_WRITE_CHARS + 5) },
        {
          workspaceDir: ws,
          sessionKey: "s",
          runId: "r",
          signal: new AbortController().signal,
        },
      ),
    ).rejects.toThrow(`takes at most ${MAX_WRITE_CHARS} per call`);
    expect(await call("memory_write", { target: "daily", text: "x", section: "Lessons" })).toMatchObject({
      isError: true,
      code: "invalid_arguments",
      content: expect.stringContaining('section applies to target "memory" only'),
    });
    expect(await call("memory_write", { target: "memory", text: "x", section: "a\nb" })).toMatchObject({
      isError: true,
      code: "invalid_arguments",
    });
    expect(await call("memory_write", { target: "daily", text: "  \n " })).toMatchObject({
      isError: true,
      code: "invalid_arguments",
    });
    expect(await call("memory_write", { target: "notes", text: "x" })).toMatchObject({
      isError: true,
      code: "invalid_arguments",
    });
  });

  it("writes atomically: no temp file left, permissions kept, a linked MEMORY.md stays a link", async () => {
    await chmod(path.join(ws, "MEMORY.md"), 0o640);
    await call("memory_write", { target: "memory", text: "- kept mode" });
    expect((await stat(path.join(ws, "MEMORY.md"))).mode & 0o777).toBe(0o640);
    await call("memory_write", { target: "daily", text: "- new note" });
    expect((await stat(path.join(ws, "memory", "2025-03-14.md"))).mode & 0o777).toBe(0o600);
    expect((await readdir(ws)).filter((n) => n.includes(".tmp"))).toEqual([]);
    expect((await readdir(path.join(ws, "memory"))).filter((n) => n.includes(".tmp"))).toEqual([]);

    await mkdir(path.join(ws, "notes"));
    await writeFile(path.join(ws, "notes", "long-term.md"), "# Long term\n");
    await rm(path.join(ws, "MEMORY.md"));
    await symlink(path.join(ws, "notes", "long-term.md"), path.join(ws, "MEMORY.md"));
    await call("memory_write", { target: "memory", text: "- via link" });
    expect((await lstat(path.join(ws, "MEMORY.md"))).isSymbolicLink()).toBe(true);
    expect(await readFile(path.join(ws, "notes", "long-term.md"), "utf8")).toBe(
      "# Long term\n\n- via link\n",
    );
  });

  it("refuses to write through a memory/ folder that links out of the workspace", async () => {
    const outside = path.join(tmp, "outside");
    await mkdir(outside);
    await rm(path.join(ws, "memory"), { recursive: true });
    await symlink(outside, path.join(ws, "memory"));
    expect(await call("memory_write", { target: "daily", text: "x" })).toMatchObject({
      isError: true,
      code: "path_outside_workspace",
    });
    expect(await readdir(outside)).toEqual([]);
  });

  it("serializes concurrent writes to one note: nothing is lost", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call("memory_write", { target: "daily", text: `- entry ${i}` })),
    );
    expect(results.every((r) => !r.isError)).toBe(true);
    const text = await readFile(path.join(ws, "memory", "2025-03-14.md"), "utf8");
    for (let i = 0; i < 20; i++) expect(text).toContain(`- entry ${i}\n`);
    expect(text.startsWith("# 2025-03-14\n\n")).toBe(true);
  });

  it("refuses an unknown time zone when the tools are built", () => {
    expect(() => memoryTools(index, { timeZone: "Mars/Olympus_Mons" })).toThrow(
      /memoryTools timeZone must be an IANA time zone.*Mars\/Olympus_Mons/,
    );
  });
});
