/**
 * Workspace skills on real files: parsing, every kind of malformed SKILL.md as a problem with a
 * reason, the prompt's skill list, the `skill` tool, and the (mtime, size) cache.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SkillCatalog, loadSkills, skillIndexText, skillTool } from "../../../src/harness/memory/skills.js";
import { ToolRegistry } from "../../../src/harness/tools/registry.js";

let tmp: string;
let ws: string;

async function skill(folder: string, content: string | Buffer): Promise<string> {
  const dir = path.join(ws, "skills", folder);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, "SKILL.md");
  await writeFile(file, content);
  return file;
}

beforeEach(async () => {
  tmp = await realpath(await mkdtemp(path.join(tmpdir(), "switchyard-skills-")));
  ws = path.join(tmp, "ws");
  await mkdir(path.join(ws, "skills"), { recursive: true });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("skills", () => {
  it("loads skills sorted by name, with one-line descriptions; the index text is stable", async () => {
    await skill(
      "weekly-review",
      "---\nname: weekly-review\ndescription: >\n  Review the week's notes\n  every Friday.\n---\n\n# Weekly review\n\n1. Read the daily notes.\n",
    );
    await skill(
      "brew",
      "---\r\nname: brew\r\ndescription: 'Make coffee: the V60 way'\r\n---\r\nGrind 15 g.\r\n",
    );
    await writeFile(path.join(ws, "skills", "README.md"), "# Skills\n");
    await mkdir(path.join(ws, "skills", ".hidden"));
    const set = await loadSkills(ws);
    expect(set).toEqual({
      skills: [
        { name: "brew", description: "Make coffee: the V60 way", path: "skills/brew/SKILL.md" },
        {
          name: "weekly-review",
          description: "Review the week's notes every Friday.",
          path: "skills/weekly-review/SKILL.md",
        },
      ],
      problems: [],
    });
    const text = skillIndexText(set.skills);
    expect(text).toBe(
      "- brew: Make coffee: the V60 way\n- weekly-review: Review the week's notes every Friday.",
    );
    expect(skillIndexText([...set.skills].reverse())).toBe(text);
    expect(skillIndexText([])).toBe("");
  });

  it("reports every malformed skill as a problem with a reason, never throwing", async () => {
    await skill("ok", "---\nname: ok\ndescription: fine\n---\nbody\n");
    await skill("no-name", "---\ndescription: x\n---\n");
    await skill("no-description", "---\nname: no-description\n---\n");
    await skill("mismatch", "---\nname: other\ndescription: x\n---\n");
    await skill("bad-yaml", "---\nname: bad-yaml\ndescription: [unclosed\n---\n");
    await skill("no-frontmatter", "# Just markdown\n");
    await skill("unclosed", "---\nname: unclosed\ndescription: x\n");
    await skill("list", "---\n- a\n- b\n---\n");
    await skill("numeric", "---\nname: 42\ndescription: x\n---\n");
    await skill("long", `---\nname: long\ndescription: ${"x".repeat(1_100)}\n---\n`);
    await skill(
      "latin1",
      Buffer.concat([
        Buffer.from("---\nname: latin1\ndescription: caf"),
        Buffer.from([0xe9]),
        Buffer.from("\n---\n"),
      ]),
    );
    await mkdir(path.join(ws, "skills", "empty-folder"));
    const outside = path.join(tmp, "outside-skill");
    await mkdir(outside);
    await writeFile(path.join(outside, "SKILL.md"), "---\nname: escaped\ndescription: x\n---\n");
    await symlink(outside, path.join(ws, "skills", "escaped"));

    const { skills, problems } = await loadSkills(ws);
    expect(skills.map((s) => s.name)).toEqual(["ok"]);
    const reasons = Object.fromEntries(problems.map((p) => [p.path, p.reason]));
    expect(reasons).toEqual({
      "skills/bad-yaml/SKILL.md": expect.stringMatching(/^has frontmatter that is not valid YAML: /),
      "skills/empty-folder": "has no SKILL.md",
      "skills/escaped": "links outside the workspace",
      "skills/latin1/SKILL.md": "is not UTF-8 text",
      "skills/list/SKILL.md": "has frontmatter that is not a mapping of name: and description:",
      "skills/long/SKILL.md": "has a description of 1100 characters; at most 1024",
      "skills/mismatch/SKILL.md": 'has the name "other", which does not match its folder "mismatch"',
      "skills/no-description/SKILL.md": "has no description in its frontmatter",
      "skills/no-frontmatter/SKILL.md": expect.stringMatching(
        /^has no frontmatter: it must begin with a --- line/,
      ),
      "skills/no-name/SKILL.md": "has no name in its frontmatter",
      "skills/numeric/SKILL.md": "has a name that is not text (number)",
      "skills/unclosed/SKILL.md": "has a frontmatter that is never closed with a --- line",
    });
    expect(problems.map((p) => p.path)).toEqual([...problems.map((p) => p.path)].sort());
  });

  it("finds no skills without a skills folder or workspace", async () => {
    await rm(path.join(ws, "skills"), { recursive: true });
    expect(await loadSkills(ws)).toEqual({ skills: [], problems: [] });
    expect(await loadSkills(path.join(tmp, "nope"))).toEqual({ skills: [], problems: [] });
  });

  it("the skill tool returns a skill's body, or says which names exist", async () => {
    await skill("brew", "---\nname: brew\ndescription: coffee\n---\n\n\nGrind 15 g.\nPour.\n\n");
    await skill("empty", "---\nname: empty\ndescription: nothing more\n---\n");
    await skill("broken", "---\nname: broken\n---\n");
    const tools = new ToolRegistry().register(skillTool(ws));
    const call = (args: Record<string, unknown>) =>
      tools.execute("skill", JSON.stringify(args), {
        workspaceDir: ws,
        sessionKey: "s",
        runId: "r",
        signal: new AbortController().signal,
      });
    expect(await call({ name: "brew" })).toEqual({ content: "Grind 15 g.\nPour.", isError: false });
    expect((await call({ name: "empty" })).content).toBe(
      "(skill empty has no instructions beyond its description)",
    );
    expect(await call({ name: "tea" })).toMatchObject({
      isError: true,
      code: "not_found",
      content: 'error (not_found): there is no skill named "tea". Known skills: brew, empty.',
    });
    expect(await call({ name: "broken" })).toMatchObject({
      isError: true,
      code: "failed",
      content: expect.stringContaining("skills/broken/SKILL.md has no description"),
    });
    await rm(path.join(ws, "skills"), { recursive: true });
    expect((await call({ name: "brew" })).content).toContain(
      "This workspace has no skills (skills/<name>/SKILL.md).",
    );
  });

  it("parses a SKILL.md again only when its mtime or size changed", async () => {
    const file = await skill("brew", "---\nname: brew\ndescription: AAAA\n---\nbody\n");
    const mtime = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000); // whole seconds: restorable exactly
    await utimes(file, mtime, mtime);
    const catalog = new SkillCatalog(ws);
    expect((await catalog.load()).skills[0]?.description).toBe("AAAA");
    // Same size, same mtime: the cached parse stands (this is what makes repeated loads cheap).
    await writeFile(file, (await readFile(file, "utf8")).replace("AAAA", "BBBB"));
    await utimes(file, mtime, mtime);
    expect((await catalog.load()).skills[0]?.description).toBe("AAAA");
    // A real edit changes the size or mtime.
    await writeFile(file, "---\nname: brew\ndescription: fresh beans\n---\nbody\n");
    expect((await catalog.load()).skills[0]?.description).toBe("fresh beans");
    await rm(path.dirname(file), { recursive: true });
    expect((await catalog.load()).skills).toEqual([]);
  });
});
