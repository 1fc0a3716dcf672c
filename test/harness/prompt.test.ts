import { mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PromptFileCache, assembleSystemPrompt } from "../../src/harness/prompt.js";

let ws: string;
beforeEach(async () => {
  ws = await mkdtemp(path.join(tmpdir(), "switchyard-prompt-"));
});
afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

async function writeAll(files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(ws, name), text);
}

describe("assembleSystemPrompt", () => {
  it("injects the files in a fixed order under headers, after the preamble", async () => {
    // Written in a different order than injected.
    await writeAll({
      "TOOLS.md": "tools",
      "USER.md": "user",
      "AGENTS.md": "agents",
      "IDENTITY.md": "id",
      "SOUL.md": "soul",
    });
    const prompt = await assembleSystemPrompt({ workspaceDir: ws, preamble: "You are an assistant." });
    expect(prompt.text.startsWith("You are an assistant.\n\n")).toBe(true);
    const positions = ["AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "TOOLS.md"].map((n) =>
      prompt.text.indexOf(`## ${n}\n`),
    );
    expect(positions[0]).toBeGreaterThan(0);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(prompt.text).toContain("## SOUL.md\n\nsoul\n\n## USER.md\n\nuser");
    expect(prompt.files.map((f) => f.name)).toEqual([
      "AGENTS.md",
      "SOUL.md",
      "USER.md",
      "IDENTITY.md",
      "TOOLS.md",
    ]);
    expect(prompt.files[0]).toEqual({
      name: "AGENTS.md",
      rawChars: 6,
      injectedChars: 6,
      truncated: false,
      missing: false,
    });
  });

  it("marks a missing file in one line", async () => {
    await writeAll({ "AGENTS.md": "agents" });
    const prompt = await assembleSystemPrompt({ workspaceDir: ws, files: ["AGENTS.md", "USER.md"] });
    expect(prompt.text).toContain("## USER.md\n\n(missing)\n");
    expect(prompt.files[1]).toEqual({
      name: "USER.md",
      rawChars: 0,
      injectedChars: 0,
      truncated: false,
      missing: true,
    });
  });

  it("keeps the head 70% and tail 20% of the cap with a marker", async () => {
    const body = Array.from({ length: 3000 }, (_, i) => `${i}`.padStart(4, "0")).join(""); // 12_000 chars
    await writeAll({ "AGENTS.md": body });
    const prompt = await assembleSystemPrompt({
      workspaceDir: ws,
      files: ["AGENTS.md"],
      maxCharsPerFile: 1000,
    });
    const section = prompt.text.slice(prompt.text.indexOf("## AGENTS.md\n\n") + "## AGENTS.md\n\n".length);
    const [head, marker, tail] = section.trimEnd().split("\n");
    expect(head).toBe(body.slice(0, 700));
    expect(tail).toBe(body.slice(body.length - 200));
    expect(marker).toContain("11100 of 12000 characters of AGENTS.md cut");
    expect(marker).toContain("read_file");
    expect(prompt.files[0]).toMatchObject({ rawChars: 12_000, injectedChars: 900, truncated: true });
  });

  it("shares the total budget between files", async () => {
    await writeAll({ "AGENTS.md": "a".repeat(800), "SOUL.md": "s".repeat(800), "USER.md": "u".repeat(800) });
    const prompt = await assembleSystemPrompt({
      workspaceDir: ws,
      files: ["AGENTS.md", "SOUL.md", "USER.md"],
      maxCharsPerFile: 1000,
      maxTotalChars: 1700,
    });
    expect(prompt.files.map((f) => [f.injectedChars, f.truncated])).toEqual([
      [800, false],
      [800, false],
      [0, true],
    ]);
    expect(prompt.text).toContain("omitted");
  });

  it("is byte-stable across calls for unchanged files", async () => {
    const template = path.resolve("workspace");
    for (const n of ["AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "TOOLS.md"]) {
      await writeFile(path.join(ws, n), await readFile(path.join(template, n)));
    }
    const a = await assembleSystemPrompt({ workspaceDir: ws, preamble: "base" });
    const b = await assembleSystemPrompt({
      workspaceDir: ws,
      preamble: "base",
      cache: new PromptFileCache(),
    });
    const c = await assembleSystemPrompt({ workspaceDir: ws, preamble: "base" });
    expect(b.text).toBe(a.text);
    expect(c.text).toBe(a.text);
    expect(a.files.every((f) => !f.missing && !f.truncated)).toBe(true);
  });

  it("rejects a cap that is not a positive integer", async () => {
    await expect(assembleSystemPrompt({ workspaceDir: ws, maxCharsPerFile: 0 })).rejects.toThrow(
      /maxCharsPerFile/,
    );
  });
});

describe("PromptFileCache", () => {
  it("reads unchanged files once and re-reads when a file changes", async () => {
    let reads = 0;
    const cache = new PromptFileCache({
      readFile: (p) => {
        reads++;
        return readFile(p, "utf8");
      },
    });
    await writeAll({ "AGENTS.md": "version one" });
    const options = { workspaceDir: ws, files: ["AGENTS.md"], cache };
    expect((await assembleSystemPrompt(options)).text).toContain("version one");
    await assembleSystemPrompt(options);
    expect(reads).toBe(1);

    // Same size, new mtime.
    await writeFile(path.join(ws, "AGENTS.md"), "version two");
    const later = new Date(Date.now() + 5_000);
    await utimes(path.join(ws, "AGENTS.md"), later, later);
    expect((await assembleSystemPrompt(options)).text).toContain("version two");
    expect(reads).toBe(2);

    // New size.
    await writeFile(path.join(ws, "AGENTS.md"), "version three");
    expect((await assembleSystemPrompt(options)).text).toContain("version three");
    expect(reads).toBe(3);
  });

  it("stays bounded", async () => {
    const cache = new PromptFileCache({ maxEntries: 2 });
    await writeAll({ "a.md": "a", "b.md": "b", "c.md": "c" });
    await assembleSystemPrompt({ workspaceDir: ws, files: ["a.md", "b.md", "c.md"], cache });
    expect(cache.size).toBe(2);
  });
});
