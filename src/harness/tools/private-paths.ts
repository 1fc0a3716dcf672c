/**
 * Which workspace paths are private to the owner, decided on what a path really names: the
 * argument is resolved like the file tools resolve it (`..` and symlinks followed), so a link
 * to MEMORY.md or memory/, a climb out and back in (`../ws/MEMORY.md`) or a different case
 * reaches the same verdict as the plain name. Private: MEMORY.md and memory/ (long-term memory
 * and daily notes), and saved tool outputs (.agent-output/) except the turn's own chat's
 * folder, where outputs of turns outside the owner's private chat are saved.
 */
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
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
  const own =
    turn.sessionKey === undefined
      ? undefined
      : path.posix.join(SAVED_OUTPUTS_DIR, chatOutputsDir(turn.sessionKey).split(path.sep).join("/"));
  if (isSavedOutput(normalise(relPath), own)) return "saved-output";
  const workspaceDir = turn.workspaceDir;
  if (workspaceDir === undefined) return undefined;
  let root: string;
  let real: string;
  try {
    root = realpathSync.native(workspaceDir);
    real = resolveInWorkspace(workspaceDir, relPath);
  } catch {
    return undefined;
  }
  const rel = path.relative(root, real).split(path.sep).join("/");
  if (isPrivateMemoryPath(rel)) return "memory";
  if (isSavedOutput(rel, own)) return "saved-output";
  for (const name of ["MEMORY.md", "memory"]) {
    const target = realOrUndefined(path.join(root, name));
    if (target !== undefined && (real === target || real.startsWith(`${target}${path.sep}`))) return "memory";
  }
  return undefined;
}

/** Under SAVED_OUTPUTS_DIR but not under `own` (case-insensitive, as on case-insensitive disks). */
function isSavedOutput(rel: string, own: string | undefined): boolean {
  const lower = rel.toLowerCase();
  const dir = SAVED_OUTPUTS_DIR.toLowerCase();
  if (lower !== dir && !lower.startsWith(`${dir}/`)) return false;
  return own === undefined || !lower.startsWith(`${own.toLowerCase()}/`);
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
