/**
 * `switchyard memory search`: run as a process against a home folder's workspace, with the
 * index file `<home>/memory-index.db` kept fresh across runs.
 */
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

/** A home folder whose default workspace holds MEMORY.md and one daily note. */
function home(): string {
  const dir = tempDir();
  const ws = join(dir, "workspace");
  mkdirSync(join(ws, "memory"), { recursive: true });
  writeFileSync(join(ws, "MEMORY.md"), "# MEMORY.md\n\n## About my person\n\n- Ann lives in Lisbon.\n");
  writeFileSync(
    join(ws, "memory", "2025-03-14.md"),
    "# 2025-03-14\n\n- Booked the dentist for Tuesday.\n- Dentist: bring the dentist card.\n",
  );
  return dir;
}

describe("switchyard memory search", () => {
  it("prints `path:start-end  snippet` lines, best first, and creates the index in the home folder", async () => {
    const dir = home();
    const r = await runCli(["memory", "search", "dentist", "--home", dir]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      "memory/2025-03-14.md:4-4  - **Dentist**: bring the **dentist** card.\n" +
        "memory/2025-03-14.md:3-3  - Booked the **dentist** for Tuesday.\n",
    );
    expect(existsSync(join(dir, "memory-index.db"))).toBe(true);

    const one = await runCli(["memory", "search", "dentist", "--limit", "1", "--home", dir]);
    expect(one.out.trimEnd().split("\n")).toHaveLength(1);
  });

  it("takes a query of several words without quotes, and FTS syntax as text", async () => {
    const dir = home();
    const r = await runCli(["memory", "search", "ann", "lisbon", "--home", dir]);
    expect(r.out).toBe("MEMORY.md:5-5  - **Ann** lives in **Lisbon**.\n");
    const syntax = await runCli(["memory", "search", '"lisbon', "(", "--home", dir]);
    expect(syntax.code).toBe(0);
    expect(syntax.out).toBe("MEMORY.md:5-5  - Ann lives in **Lisbon**.\n");
  });

  it("says no matches, and finds what was added by hand since the last run", async () => {
    const dir = home();
    const none = await runCli(["memory", "search", "plumber", "--home", dir]);
    expect(none).toMatchObject({ code: 0, out: "no matches\n", err: "" });
    appendFileSync(join(dir, "workspace", "memory", "2025-03-14.md"), "- The plumber comes Thursday.\n");
    const found = await runCli(["memory", "search", "plumber", "--home", dir]);
    expect(found.out).toBe("memory/2025-03-14.md:5-5  - The **plumber** comes Thursday.\n");
  });

  it("prints JSON with --json", async () => {
    const dir = home();
    const r = await runCli(["memory", "search", "lisbon", "--json", "--home", dir]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      query: "lisbon",
      workspaceDir: join(dir, "workspace"),
      results: [
        {
          path: "MEMORY.md",
          startLine: 5,
          endLine: 5,
          snippet: "- Ann lives in **Lisbon**.",
          score: expect.any(Number),
        },
      ],
    });
  });

  it("uses agent.workspace from the configuration, relative to the home folder", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "elsewhere", "memory"), { recursive: true });
    writeFileSync(join(dir, "elsewhere", "memory", "notes.md"), "The cello is in the attic.\n");
    const cwd = tempDir();
    writeFileSync(join(cwd, "switchyard.yaml"), "agent:\n  workspace: elsewhere\n");
    const r = await runCli(["memory", "search", "cello", "--home", dir], { cwd });
    expect(r.err).toBe("");
    expect(r.out).toBe("memory/notes.md:1-1  The **cello** is in the attic.\n");
  });

  it("exits 2 without a query or with an unknown action, 1 without a workspace", async () => {
    const dir = home();
    const noQuery = await runCli(["memory", "search", "--home", dir]);
    expect(noQuery.code).toBe(2);
    expect(noQuery.err).toContain("no query given");
    expect(noQuery.err).toContain("usage: switchyard memory search <query> [--limit N] [--json]");
    const blank = await runCli(["memory", "search", "  ", "--home", dir]);
    expect(blank.code).toBe(2);
    const noAction = await runCli(["memory", "--home", dir]);
    expect(noAction.code).toBe(2);
    expect(noAction.err).toContain("usage: switchyard memory search");
    const unknown = await runCli(["memory", "list", "--home", dir]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown action "list"');
    const badLimit = await runCli(["memory", "search", "x", "--limit", "0", "--home", dir]);
    expect(badLimit.code).toBe(2);
    expect(badLimit.err).toContain("--limit");
    const bigLimit = await runCli(["memory", "search", "x", "--limit", "500", "--home", dir]);
    expect(bigLimit.code).toBe(2);

    const empty = tempDir();
    const noWorkspace = await runCli(["memory", "search", "x", "--home", empty]);
    expect(noWorkspace.code).toBe(1);
    expect(noWorkspace.err).toContain(`no workspace at ${join(empty, "workspace")}`);
    expect(existsSync(join(empty, "memory-index.db"))).toBe(false);
  });
});
