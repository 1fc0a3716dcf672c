/**
 * The agent workspace on disk: seeding a new (or partly filled) workspace from the package's
 * template folder, without ever touching a file the person already has.
 */
import { constants, existsSync } from "node:fs";
import { copyFile, lstat, mkdir, readdir, realpath } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Copies every regular file of `templateDir` into `workspaceDir` where the target does not
 * exist yet, creating folders as needed. Never overwrites: a file the person edited (or
 * deleted and replaced with a folder, or a symlink) is left alone. Symlinks in the template are
 * skipped, and a workspace folder that is a symlink leading outside the workspace is not
 * descended into. Returns the workspace-relative paths (with `/`) of the files it created,
 * sorted. Creates `workspaceDir` itself when missing.
 */
export async function seedWorkspace(
  templateDir: string,
  workspaceDir: string,
): Promise<{ created: string[] }> {
  await mkdir(workspaceDir, { recursive: true });
  const root = await realpath(workspaceDir);
  const created: string[] = [];
  await copyTree(path.resolve(templateDir), root, root, "", created);
  created.sort();
  return { created };
}

async function copyTree(
  sourceDir: string,
  targetDir: string,
  root: string,
  rel: string,
  created: string[],
): Promise<void> {
  const entries = await readdir(sourceDir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const source = path.join(sourceDir, entry.name);
    const target = path.join(targetDir, entry.name);
    const relPath = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) {
      const dir = await prepareDir(target, root);
      if (dir !== null) await copyTree(source, dir, root, relPath, created);
    } else if (entry.isFile()) {
      if (await copyIfAbsent(source, target)) created.push(relPath);
    }
    // Symlinks, sockets and the like in the template are not part of a workspace.
  }
}

/** Makes sure `target` is a folder inside the workspace; returns its real path, or null to skip. */
async function prepareDir(target: string, root: string): Promise<string | null> {
  const stat = await lstat(target).catch(() => null);
  if (stat === null) {
    try {
      await mkdir(target);
      return target;
    } catch (err) {
      // Another gateway on the same home seeds it at the same moment: look again at what it made.
      if (!isErrno(err, "EEXIST")) throw err;
      return prepareDir(target, root);
    }
  }
  if (stat.isDirectory()) return target;
  if (!stat.isSymbolicLink()) return null; // a file where the template has a folder: leave it
  const real = await realpath(target).catch(() => null);
  if (real === null || !isInside(root, real)) return null;
  const realStat = await lstat(real);
  return realStat.isDirectory() ? real : null;
}

/** Copies unless anything (file, folder, even a dangling symlink) already exists at `target`. */
async function copyIfAbsent(source: string, target: string): Promise<boolean> {
  try {
    // COPYFILE_EXCL fails when the target exists, also as a symlink: no overwrite, no follow.
    await copyFile(source, target, constants.COPYFILE_EXCL);
    return true;
  } catch (err) {
    if (isErrno(err, "EEXIST")) return false;
    throw err;
  }
}

/**
 * The package's `workspace/` template folder. Walks up from this module's folder to the first
 * folder holding both `workspace/AGENTS.md` and `package.json`, so it works from `src/`
 * (tsx, vitest) and from compiled `dist/` alike. Throws when no such folder exists.
 */
export function defaultTemplateDir(): string {
  const start = path.dirname(fileURLToPath(import.meta.url));
  let dir = start;
  for (;;) {
    if (existsSync(path.join(dir, "workspace", "AGENTS.md")) && existsSync(path.join(dir, "package.json"))) {
      return path.join(dir, "workspace");
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`no workspace template (workspace/AGENTS.md next to package.json) above ${start}`);
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function isErrno(err: unknown, code: string): boolean {
  return err instanceof Error && "code" in err && err.code === code;
}
