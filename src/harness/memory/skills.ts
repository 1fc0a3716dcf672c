/**
 * Workspace skills: `skills/<name>/SKILL.md`, a YAML frontmatter block (`name`, `description`)
 * and Markdown instructions. The prompt lists each skill in one line (skillIndexText); the
 * `skill` tool hands the model the instructions when it needs them. A skill that cannot be
 * read is reported as a problem with a reason, never thrown.
 */
import type { Dirent, Stats } from "node:fs";
import { readFile, readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { parseDocument } from "yaml";
import { z } from "zod";
import { ToolError } from "../tools/tool-error.js";
import type { Tool } from "../tools/types.js";
import { isInsideDir } from "./memory-paths.js";
import type { Skill, SkillProblem, SkillSet } from "./types.js";

/** The skills folder at the workspace root. */
export const SKILLS_DIR = "skills";
/** The file that makes a folder of SKILLS_DIR a skill. */
export const SKILL_FILE = "SKILL.md";
/** Largest SKILL.md read. */
export const MAX_SKILL_BYTES = 256 * 1024;
/** Longest description: it is in the prompt on every turn. */
export const MAX_DESCRIPTION_CHARS = 1_024;
/** Longest skill name. */
export const MAX_NAME_CHARS = 64;

type Parsed = { type: "skill"; skill: Skill; body: string } | { type: "problem"; problem: SkillProblem };

interface CacheEntry {
  real: string;
  mtimeMs: number;
  size: number;
  parsed: Parsed;
}

/**
 * The skills of one workspace, re-read only where a SKILL.md changed: each call of
 * {@link SkillCatalog.load} lists the skills folder and stats each SKILL.md, and parses only
 * those whose (mtime, size) differ from the last call.
 */
export class SkillCatalog {
  readonly #workspaceDir: string;
  #cache = new Map<string, CacheEntry>();

  /** `workspaceDir`: the agent workspace holding `skills/`. */
  constructor(workspaceDir: string) {
    this.#workspaceDir = path.resolve(workspaceDir);
  }

  /**
   * Every skill folder: the skills sorted by name, the problems by path. Hidden folders and
   * files directly in skills/ (a README) are ignored; a linked folder counts when it stays inside
   * the workspace. A missing workspace or skills folder means no skills. Never throws.
   */
  async load(): Promise<SkillSet> {
    const root = await realpath(this.#workspaceDir).catch(() => undefined);
    const dir = root && (await realpath(path.join(root, SKILLS_DIR)).catch(() => undefined));
    let entries: Dirent[] = [];
    if (root !== undefined && dir !== undefined && isInsideDir(root, dir)) {
      entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    }
    const next = new Map<string, CacheEntry>();
    const results = await Promise.all(
      entries
        .filter((e) => !e.name.startsWith(".") && (e.isDirectory() || e.isSymbolicLink()))
        .map((e) => this.#loadOne(root ?? "", dir ?? "", e.name, next)),
    );
    this.#cache = next;
    const skills: Skill[] = [];
    const problems: SkillProblem[] = [];
    for (const parsed of results) {
      if (parsed?.type === "skill") skills.push(parsed.skill);
      else if (parsed?.type === "problem") problems.push(parsed.problem);
    }
    skills.sort((a, b) => compare(a.name, b.name));
    problems.sort((a, b) => compare(a.path, b.path));
    return { skills, problems };
  }

  /**
   * The instructions of skill `name` (SKILL.md without its frontmatter), freshly loaded.
   * Throws ToolError `failed` with the reason when that skill has a problem, and `not_found`
   * listing the known names when there is no such skill.
   */
  async body(name: string): Promise<string> {
    const { skills, problems } = await this.load();
    const found = [...this.#cache.values()].find(
      (e) => e.parsed.type === "skill" && e.parsed.skill.name === name,
    );
    if (found?.parsed.type === "skill") return found.parsed.body;
    const problem = problems.find((p) => p.path.split("/")[1] === name);
    if (problem)
      throw new ToolError("failed", `skill "${name}" cannot be used: ${problem.path} ${problem.reason}`);
    const known =
      skills.length > 0
        ? `Known skills: ${skills.map((s) => s.name).join(", ")}.`
        : `This workspace has no skills (${SKILLS_DIR}/<name>/${SKILL_FILE}).`;
    throw new ToolError("not_found", `there is no skill named ${JSON.stringify(name)}. ${known}`);
  }

  /** Loads one folder's skill, from the cache when its SKILL.md is unchanged; undefined to ignore it. */
  async #loadOne(
    root: string,
    dir: string,
    folder: string,
    next: Map<string, CacheEntry>,
  ): Promise<Parsed | undefined> {
    const rel = `${SKILLS_DIR}/${folder}/${SKILL_FILE}`;
    const folderAbs = await realpath(path.join(dir, folder)).catch(() => undefined);
    if (folderAbs === undefined) return undefined; // a dangling link
    if (!isInsideDir(root, folderAbs))
      return problem(`${SKILLS_DIR}/${folder}`, "links outside the workspace");
    const folderStat = await stat(folderAbs).catch(() => undefined);
    if (!folderStat?.isDirectory()) return undefined; // a linked file: not a skill folder
    let real: string;
    let fileStat: Stats;
    try {
      real = await realpath(path.join(folderAbs, SKILL_FILE));
      fileStat = await stat(real);
    } catch {
      return problem(`${SKILLS_DIR}/${folder}`, `has no ${SKILL_FILE}`);
    }
    if (!isInsideDir(root, real)) return problem(rel, "links outside the workspace");
    if (!fileStat.isFile()) return problem(rel, "is not a file");
    const { mtimeMs, size } = fileStat;
    const cached = this.#cache.get(folder);
    if (cached && cached.real === real && cached.mtimeMs === mtimeMs && cached.size === size) {
      next.set(folder, cached);
      return cached.parsed;
    }
    let parsed: Parsed;
    if (size > MAX_SKILL_BYTES) {
      parsed = problem(rel, `is larger than ${MAX_SKILL_BYTES / 1024} KB`);
    } else {
      const bytes = await readFile(real).catch(() => undefined);
      parsed = bytes === undefined ? problem(rel, "cannot be read") : parseSkill(folder, rel, bytes);
    }
    next.set(folder, { real, mtimeMs, size, parsed });
    return parsed;
  }
}

/** One catalog per workspace folder, so that loadSkills and skillTool share what they parsed. */
const catalogs = new Map<string, SkillCatalog>();

/** The {@link SkillCatalog} of `workspaceDir` that loadSkills and skillTool use (one per folder). */
export function skillCatalogFor(workspaceDir: string): SkillCatalog {
  const key = path.resolve(workspaceDir);
  let catalog = catalogs.get(key);
  if (!catalog) {
    catalog = new SkillCatalog(key);
    catalogs.set(key, catalog);
  }
  return catalog;
}

/**
 * The skills of `workspaceDir` ({@link SkillCatalog.load} of its shared catalog): cheap to call
 * on every turn, since a SKILL.md is parsed again only when its (mtime, size) changed.
 */
export function loadSkills(workspaceDir: string): Promise<SkillSet> {
  return skillCatalogFor(workspaceDir).load();
}

/**
 * The skill list for the prompt: `- name: description`, one line per skill, sorted by name (by
 * code unit, not locale) and joined with `\n`, no final newline; "" for none. The same skills
 * give the same bytes.
 */
export function skillIndexText(skills: readonly Skill[]): string {
  return [...skills]
    .sort((a, b) => compare(a.name, b.name))
    .map((s) => `- ${s.name}: ${oneLine(s.description)}`)
    .join("\n");
}

const skillParameters = z.strictObject({
  name: z.string().min(1).describe("The skill's name, as in the skill list"),
});

/**
 * The `skill` tool: returns the instructions of one skill of `workspace` (a folder, whose
 * shared catalog is used, or a catalog).
 */
export function skillTool(workspace: string | SkillCatalog): Tool<typeof skillParameters> {
  const catalog = typeof workspace === "string" ? skillCatalogFor(workspace) : workspace;
  return {
    name: "skill",
    groups: ["memory"],
    description:
      "Load the instructions of one of your skills (listed by name and description in your context). Call it before doing a task a skill covers, then follow what it says.",
    parameters: skillParameters,
    async run(args) {
      const body = await catalog.body(args.name);
      return {
        content: body === "" ? `(skill ${args.name} has no instructions beyond its description)` : body,
      };
    },
  };
}

/** Parses one SKILL.md; every defect becomes a problem naming it. */
function parseSkill(folder: string, rel: string, bytes: Buffer): Parsed {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return problem(rel, "is not UTF-8 text");
  }
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  if (lines[0]?.trimEnd() !== "---") {
    return problem(
      rel,
      "has no frontmatter: it must begin with a --- line, then name: and description:, then ---",
    );
  }
  const close = lines.findIndex((line, i) => i > 0 && /^(---|\.\.\.)\s*$/.test(line));
  if (close === -1) return problem(rel, "has a frontmatter that is never closed with a --- line");
  const doc = parseDocument(lines.slice(1, close).join("\n"));
  const yamlError = doc.errors[0];
  if (yamlError)
    return problem(rel, `has frontmatter that is not valid YAML: ${yamlError.message.split("\n")[0]}`);
  let meta: unknown;
  try {
    meta = doc.toJS();
  } catch (err) {
    return problem(
      rel,
      `has frontmatter that is not valid YAML: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) {
    return problem(rel, "has frontmatter that is not a mapping of name: and description:");
  }
  const { name, description } = meta as Record<string, unknown>;
  if (name === undefined || name === null || name === "")
    return problem(rel, "has no name in its frontmatter");
  if (typeof name !== "string") return problem(rel, `has a name that is not text (${typeof name})`);
  if (name !== folder)
    return problem(rel, `has the name ${JSON.stringify(name)}, which does not match its folder "${folder}"`);
  if (name.length > MAX_NAME_CHARS || /\s/.test(name)) {
    return problem(
      rel,
      `has the name ${JSON.stringify(name)}: names have no spaces and at most ${MAX_NAME_CHARS} characters`,
    );
  }
  if (description === undefined || description === null || description === "") {
    return problem(rel, "has no description in its frontmatter");
  }
  if (typeof description !== "string")
    return problem(rel, `has a description that is not text (${typeof description})`);
  const line = oneLine(description);
  if (line === "") return problem(rel, "has no description in its frontmatter");
  if (line.length > MAX_DESCRIPTION_CHARS) {
    return problem(rel, `has a description of ${line.length} characters; at most ${MAX_DESCRIPTION_CHARS}`);
  }
  const body = lines
    .slice(close + 1)
    .join("\n")
    .replace(/^(\s*\n)+/, "")
    .trimEnd();
  return { type: "skill", skill: { name, description: line, path: rel }, body };
}

function problem(rel: string, reason: string): Parsed {
  return { type: "problem", problem: { path: rel, reason } };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
