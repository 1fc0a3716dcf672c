import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryIndex } from "../../../src/harness/memory/memory-index.js";
import { loadSkills } from "../../../src/harness/memory/skills.js";
import { defaultTemplateDir, seedWorkspace } from "../../../src/harness/memory/workspace.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const TEMPLATE_FILES = [
  "AGENTS.md",
  "HEARTBEAT.md",
  "IDENTITY.md",
  "MEMORY.md",
  "SOUL.md",
  "TOOLS.md",
  "USER.md",
  "memory/README.md",
  "skills/README.md",
];

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "switchyard-seed-"));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("defaultTemplateDir", () => {
  it("finds the package's workspace/ folder", () => {
    expect(defaultTemplateDir()).toBe(path.join(repoRoot, "workspace"));
  });
});

describe("the workspace template", () => {
  it("holds the bootstrap files with real content", async () => {
    const dir = defaultTemplateDir();
    for (const name of TEMPLATE_FILES) {
      const text = await readFile(path.join(dir, name), "utf8");
      expect(text.length, name).toBeGreaterThan(100);
    }
    const agents = await readFile(path.join(dir, "AGENTS.md"), "utf8");
    expect(agents).toContain("HEARTBEAT_OK");
    expect(agents.split("\n").length).toBeLessThanOrEqual(120);
  });

  it("keeps HEARTBEAT.md effectively empty (header lines only)", async () => {
    const text = await readFile(path.join(defaultTemplateDir(), "HEARTBEAT.md"), "utf8");
    for (const line of text.split("\n")) expect(line === "" || /^#+(\s|$)/.test(line), line).toBe(true);
  });
});

describe("seedWorkspace", () => {
  it("copies every template file into a new workspace", async () => {
    const ws = path.join(tmp, "ws");
    const { created } = await seedWorkspace(defaultTemplateDir(), ws);
    expect(created).toEqual(TEMPLATE_FILES);
    for (const name of TEMPLATE_FILES) {
      expect(await readFile(path.join(ws, name), "utf8")).toBe(
        await readFile(path.join(defaultTemplateDir(), name), "utf8"),
      );
    }
  });

  it("two gateways seeding one workspace at once both succeed, and every file is created once", async () => {
    const ws = path.join(tmp, "ws");
    for (let round = 0; round < 20; round++) {
      await rm(ws, { recursive: true, force: true });
      const [a, b] = await Promise.all([
        seedWorkspace(defaultTemplateDir(), ws),
        seedWorkspace(defaultTemplateDir(), ws),
      ]);
      expect([...a.created, ...b.created].sort()).toEqual(TEMPLATE_FILES);
    }
  });

  it("never overwrites an edited file and creates nothing on a second run", async () => {
    const ws = path.join(tmp, "ws");
    await seedWorkspace(defaultTemplateDir(), ws);
    await writeFile(path.join(ws, "USER.md"), "# USER.md\n- Name: Ada\n");
    await rm(path.join(ws, "TOOLS.md"));

    const second = await seedWorkspace(defaultTemplateDir(), ws);
    expect(second.created).toEqual(["TOOLS.md"]);
    expect(await readFile(path.join(ws, "USER.md"), "utf8")).toBe("# USER.md\n- Name: Ada\n");

    const third = await seedWorkspace(defaultTemplateDir(), ws);
    expect(third.created).toEqual([]);
  });

  it("does not write through symlinks that lead outside the workspace", async () => {
    const template = path.join(tmp, "template");
    const ws = path.join(tmp, "ws");
    const outside = path.join(tmp, "outside");
    await mkdir(path.join(template, "memory"), { recursive: true });
    await writeFile(path.join(template, "AGENTS.md"), "a");
    await writeFile(path.join(template, "SOUL.md"), "s");
    await writeFile(path.join(template, "memory", "README.md"), "r");
    await mkdir(outside);
    await mkdir(ws);
    await symlink(outside, path.join(ws, "memory"));
    await symlink(path.join(outside, "soul.md"), path.join(ws, "SOUL.md")); // dangling

    const { created } = await seedWorkspace(template, ws);
    expect(created).toEqual(["AGENTS.md"]);
    expect(await readdir(outside)).toEqual([]);
  });

  it("skips symlinks inside the template", async () => {
    const template = path.join(tmp, "template");
    const ws = path.join(tmp, "ws");
    await mkdir(template);
    await writeFile(path.join(tmp, "secret.txt"), "secret");
    await writeFile(path.join(template, "AGENTS.md"), "a");
    await symlink(path.join(tmp, "secret.txt"), path.join(template, "leak.md"));
    const { created } = await seedWorkspace(template, ws);
    expect(created).toEqual(["AGENTS.md"]);
  });
});

describe("the seeded template and memory", () => {
  it("holds no skill and nothing memory search would mistake for a note", async () => {
    const ws = path.join(tmp, "ws");
    await seedWorkspace(defaultTemplateDir(), ws);
    expect(await loadSkills(ws)).toEqual({ skills: [], problems: [] });
    const index = new MemoryIndex({ workspaceDir: ws, dbPath: ":memory:" });
    try {
      // memory/README.md's example note mentions a dentist; it is an example, not a memory.
      expect(await index.search("dentist")).toEqual([]);
      expect(new Set((await index.search("lessons")).map((h) => h.path))).toEqual(new Set(["MEMORY.md"]));
    } finally {
      index.close();
    }
  });
});
