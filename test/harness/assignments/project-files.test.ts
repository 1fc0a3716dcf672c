/** An assignment's project files: the bounded handoff reads, the fingerprint and the mirrors. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HANDOFF_CHARS, ProjectFiles } from "../../../src/harness/assignments/project-files.js";
import { assignmentFixture } from "../../helpers/assignment-fixture.js";

let ws: string;
let files: ProjectFiles;
const ID = "tproj001";
const dir = () => path.join(ws, "projects", ID);
const put = (name: string, text: string) => writeFileSync(path.join(dir(), name), text);

beforeEach(async () => {
  ws = mkdtempSync(path.join(tmpdir(), "sy-project-"));
  files = new ProjectFiles(ws);
  await files.ensure(ID);
});

afterEach(() => rmSync(ws, { recursive: true, force: true }));

describe("ProjectFiles.handoff", () => {
  it("hands over the agent's files whole while they are under their caps", async () => {
    put("session-state.md", "# Session state\n\nPool 2 is next.\n");
    put("notes.md", "# Notes\n\n- pool 1: 14 species\n");
    const h = await files.handoff(ID);
    expect(h.sessionState).toBe("# Session state\n\nPool 2 is next.");
    expect(h.notes).toBe("# Notes\n\n- pool 1: 14 species");
    expect(h.workingBuffer).toMatch(/^# Working buffer/);
  });

  it("shows the end of a notes file of a megabyte, marked as cut", async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `- run ${i}: measured the pool`);
    put("notes.md", `${lines.join("\n")}\n`);
    const h = await files.handoff(ID);
    expect(h.notes.startsWith("[… earlier notes are in the file]\n")).toBe(true);
    expect(h.notes.endsWith("- run 19999: measured the pool")).toBe(true);
    expect(h.notes.length).toBeLessThanOrEqual(HANDOFF_CHARS.notesTail + 40);
  });

  it("cuts the start of a long session state, and never splits a character", async () => {
    put("session-state.md", "é".repeat(50_000)); // 2 bytes each: the read stops mid-file
    put("notes.md", `x${"🌊".repeat(20_000)}`); // 4 bytes each: the tail starts mid-character
    const h = await files.handoff(ID);
    expect(h.sessionState).toBe(
      `${"é".repeat(HANDOFF_CHARS.sessionState)}\n[… cut: the file is longer; read it for the rest]`,
    );
    expect(h.notes).not.toContain("\uFFFD");
    expect(h.notes.endsWith("🌊🌊")).toBe(true);
  });

  it("hands over nothing for a file that is gone", async () => {
    rmSync(path.join(dir(), "working-buffer.md"));
    expect((await files.handoff(ID)).workingBuffer).toBe("");
  });
});

describe("ProjectFiles.fingerprint", () => {
  it("changes with a file's content, also when rewritten at once with the same size", async () => {
    put("out.md", "aaaa");
    const first = await files.fingerprint(ID, []);
    put("out.md", "bbbb");
    const second = await files.fingerprint(ID, []);
    expect(second).not.toBe(first);
    put("out.md", "aaaa");
    expect(await files.fingerprint(ID, [])).toBe(first);
  });

  it("remembers old files by their stat, and still sees them change", async () => {
    put("old.md", "settled");
    const past = new Date(Date.now() - 60_000);
    utimesSync(path.join(dir(), "old.md"), past, past);
    const before = await files.fingerprint(ID, []);
    expect(await files.fingerprint(ID, [])).toBe(before);
    put("old.md", "changed");
    expect(await files.fingerprint(ID, [])).not.toBe(before);
  });

  it("leaves out the mirrors and hidden files, and takes in the contract's paths", async () => {
    const before = await files.fingerprint(ID, ["report.md"]);
    await files.write(assignmentFixture({ id: ID }));
    put(".draft.tmp", "x");
    expect(await files.fingerprint(ID, ["report.md"])).toBe(before);
    writeFileSync(path.join(ws, "report.md"), "# Report\n");
    expect(await files.fingerprint(ID, ["report.md"])).not.toBe(before);
  });
});

describe("ProjectFiles.fingerprint of a large tree", () => {
  it("stops walking past 2,000 files: only that there are more counts", async () => {
    mkdirSync(path.join(dir(), "out"));
    for (let i = 0; i < 2_001; i++)
      writeFileSync(path.join(dir(), "out", `f${String(i).padStart(4, "0")}.txt`), "x");
    const before = await files.fingerprint(ID, []);
    put("zz-later.md", "sorted after the cap"); // the walk never reaches it
    expect(await files.fingerprint(ID, [])).toBe(before);
    writeFileSync(path.join(dir(), "out", "f0000.txt"), "changed"); // within the cap: seen
    expect(await files.fingerprint(ID, [])).not.toBe(before);
  });
});

describe("ProjectFiles.write (the mirrors)", () => {
  it("rewrites PROGRESS.md and checkpoint.json in place, shorter ones cut to length", async () => {
    const a = assignmentFixture({ id: ID, goal: "A long goal ".repeat(20) });
    await files.write(a);
    await files.write({ ...a, goal: "Short", state: "done" });
    const progress = readFileSync(path.join(dir(), "PROGRESS.md"), "utf8");
    expect(progress.startsWith(`# ${ID}: Short\n`)).toBe(true);
    expect(progress).not.toContain("A long goal");
    const checkpoint = JSON.parse(readFileSync(path.join(dir(), "checkpoint.json"), "utf8"));
    expect(checkpoint.state).toBe("done");
    expect(statSync(path.join(dir(), "PROGRESS.md")).mode & 0o077).toBe(0);
  });

  it("makes the folder again when it was removed", async () => {
    rmSync(dir(), { recursive: true });
    await files.write(assignmentFixture({ id: ID }));
    expect(readFileSync(path.join(dir(), "PROGRESS.md"), "utf8")).toContain(ID);
    expect(readFileSync(path.join(dir(), "notes.md"), "utf8")).toMatch(/^# Notes/);
  });
});
