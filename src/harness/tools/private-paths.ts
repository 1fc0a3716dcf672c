/**
 * Which workspace paths are private to the owner, decided on what a path really names: the
 * argument is resolved like the file tools resolve it (`..` and symlinks followed), so a link
 * to MEMORY.md or memory/, a climb out and back in (`../ws/MEMORY.md`) or a different case
 * reaches the same verdict as the plain name. Private: MEMORY.md and memory/ (long-term memory
 * and daily notes), and saved tool outputs (.agent-output/) except the turn's own chat's
 * folder, where outputs of turns outside the owner's private chat are saved.
 */
import { createHash } from "node:crypto";
import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
import { resolveInWorkspace } from "./file-tools.js";

/** The workspace folder of saved tool outputs (full texts of cut results, compacted results). */
export const SAVED_OUTPUTS_DIR = ".agent-output";

/** What makes a path private, if anything. */
export type PrivatePathKind = "memory" | "saved-output";

/**
 * The folder, relative to SAVED_OUTPUTS_DIR, where the outputs of a turn in `sessionKey` are
 * saved when the turn is not the owner's private chat: `chats/<readable part>-<hash>`; the
 * only saved outputs such a turn may read back.
 */
export function chatOutputsDir(sessionKey: string): string {
  const readable = sessionKey.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 60);
  const hash = createHash("sha256").update(sessionKey).digest("hex").slice(0, 10);
  return path.join("chats", `${readable}-${hash}`);
}

/**
 * Whether a workspace-relative path names private memory by its name alone: MEMORY.md or
 * under memory/, case-insensitively, after `.`/`..` are normalised.
 */
export function isPrivateMemoryPath(p: string): boolean {
  const lower = normalise(p).toLowerCase();
  return lower === "memory.md" || lower === "memory" || lower.startsWith("memory/");
}

/**
 * What private thing `relPath` names for a turn outside the owner's private chat, or undefined
 * when it names nothing private. The name decides first; then, given `workspaceDir`, the real
 * path (symlinks resolved): inside the real MEMORY.md or memory/ (which may be links
 * themselves), or under SAVED_OUTPUTS_DIR outside the session's chatOutputsDir (no
 * `sessionKey`: every saved output is private). A path the file tools would refuse (outside
 * the workspace) is not private here: the tool refuses it. Never throws.
 */
export function privatePathKind(
  relPath: string,
  turn: { workspaceDir?: string | undefined; sessionKey?: string | undefined },
): PrivatePathKind | undefined {
  if (isPrivateMemoryPath(relPath)) return "memory";
  const own = (): string | undefined =>
    turn.sessionKey === undefined
      ? undefined
      : path.posix.join(SAVED_OUTPUTS_DIR, chatOutputsDir(turn.sessionKey).split(path.sep).join("/"));
  if (isSavedOutput(normalise(relPath), own)) return "saved-output";
  if (turn.workspaceDir === undefined) return undefined;
  const real = realTarget(turn.workspaceDir, relPath);
  if (real === undefined) return undefined;
  const rel = path.relative(real.root, real.path).split(path.sep).join("/");
  if (rel === ".." || rel.startsWith("../") || path.isAbsolute(rel)) return undefined; // the tool refuses it
  if (isPrivateMemoryPath(rel)) return "memory";
  if (isSavedOutput(rel, own)) return "saved-output";
  // MEMORY.md or memory/ may be links themselves: then what they point to is private too.
  for (const name of ["MEMORY.md", "memory"]) {
    const link = path.join(real.root, name);
    if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() !== true) continue;
    const target = realOrUndefined(link);
    if (target !== undefined && (real.path === target || real.path.startsWith(`${target}${path.sep}`)))
      return "memory";
  }
  return undefined;
}

/**
 * The real path `relPath` names and the workspace's real root. One realpath in the common case:
 * a real path that starts with the workspace folder as given proves that folder real too (a
 * real path has no links in it), so the root needs no call of its own. A path that does not
 * exist yet resolves like the file tools resolve it; undefined when neither works.
 */
function realTarget(workspaceDir: string, relPath: string): { root: string; path: string } | undefined {
  const given = path.resolve(workspaceDir);
  let real: string;
  try {
    real = realpathSync.native(path.resolve(given, relPath));
  } catch {
    try {
      real = resolveInWorkspace(workspaceDir, relPath);
    } catch {
      return undefined;
    }
  }
  if (real === given || real.startsWith(`${given}${path.sep}`)) return { root: given, path: real };
  const root = realOrUndefined(workspaceDir);
  return root === undefined ? undefined : { root, path: real };
}

/**
 * Under SAVED_OUTPUTS_DIR but not under the turn's own folder (case-insensitive, as on
 * case-insensitive disks); `own` is asked only then (it hashes the session key).
 */
function isSavedOutput(rel: string, own: () => string | undefined): boolean {
  const lower = rel.toLowerCase();
  const dir = SAVED_OUTPUTS_DIR.toLowerCase();
  if (lower !== dir && !lower.startsWith(`${dir}/`)) return false;
  const mine = own();
  return mine === undefined || !lower.startsWith(`${mine.toLowerCase()}/`);
}

function normalise(p: string): string {
  return path.posix
    .normalize(p.replace(/\\/g, "/"))
    .replace(/^(\.\/)+/, "")
    .replace(/^\/+/, "")
    .replace(/\/+$/, "");
}

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync.native(p);
  } catch {
    return undefined;
  }
}
