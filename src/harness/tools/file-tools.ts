/**
 * The workspace file tools: read_file, write_file, edit_file and list_files. Every path goes
 * through resolveInWorkspace, which confines it to the workspace after resolving symlinks, so
 * neither `..` nor a link planted in the workspace reaches the rest of the machine. A file
 * under UPLOADS_DIR (what people sent in chats) is read inside an untrusted block.
 */
import { type Dirent, lstatSync, mkdirSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Tool, ToolOutput } from "./types.js";
import { ToolError } from "./tool-error.js";
import { readSized, writeText } from "../../util/small-io.js";
import { untrustedBlock } from "./untrusted.js";

/** Largest file read_file and edit_file load. */
export const MAX_READ_BYTES = 2 * 1024 * 1024;
/** Entries list_files returns before it stops. */
export const MAX_LIST_ENTRIES = 500;
/**
 * Workspace folder the channels save uploaded files into (channels/attachments.ts
 * attachmentDir: `inbox/<channel>/<chat>/…`); read_file returns their text as untrusted.
 */
export const UPLOADS_DIR = "inbox";
/** Symlinks followed while resolving one path before giving up (as the OS does with ELOOP). */
const MAX_LINK_HOPS = 40;

/**
 * Resolves `relPath` against the workspace and returns its real absolute path. Refuses, with
 * ToolError("path_outside_workspace") naming the path: absolute paths, `..` escapes, and any
 * symlink on the way (the final file included, dangling ones too) that leads outside. For a
 * path that does not exist yet, the deepest existing parent decides. The workspace folder
 * itself may be a symlink. Synchronous: a few lstat/readlink calls (see util/small-io.ts).
 */
export function resolveInWorkspace(workspaceDir: string, relPath: string): string {
  if (relPath.includes("\0"))
    throw new ToolError("invalid_arguments", `path ${JSON.stringify(relPath)} contains a NUL character`);
  if (path.isAbsolute(relPath)) throw outside(relPath, "absolute paths are not allowed");
  let root: string;
  try {
    root = realpathSync.native(workspaceDir);
  } catch (err) {
    throw new ToolError("not_found", `the workspace folder ${workspaceDir} does not exist`, { cause: err });
  }
  const lexical = path.resolve(root, relPath);
  if (!isInside(root, lexical)) throw outside(relPath, "it climbs out of the workspace with ..");
  const real = realpathLoose(lexical, 0);
  if (!isInside(root, real)) throw outside(relPath, "a symbolic link on it leads out of the workspace");
  return real;
}

/** The four workspace file tools, confined to `ctx.workspaceDir`. */
export function fileTools(): Tool[] {
  return [readFileTool, writeFileTool, editFileTool, listFilesTool];
}

const readFileParameters = z.strictObject({
  path: z.string().describe("File path relative to the workspace root, e.g. MEMORY.md"),
  offset: z.int().min(1).optional().describe("First line to return, from 1 (default 1)"),
  limit: z.int().min(1).optional().describe("Maximum number of lines to return (default: all)"),
});

const readFileTool: Tool<typeof readFileParameters> = {
  name: "read_file",
  groups: ["fs"],
  description:
    "Read a text file from the workspace. Optional offset (first line, counting from 1) and limit (number of lines) read part of a large file. Files over 2 MB are refused.",
  parameters: readFileParameters,
  run: (args, ctx) =>
    guarded(args.path, async (rel) => {
      const abs = resolveInWorkspace(ctx.workspaceDir, rel);
      const text = await loadText(abs, rel);
      const offset = args.offset ?? 1;
      const limit = args.limit;
      if (text === "") return { content: "(empty file)" };
      // An upload came from whoever sent it: its text is data, in a block naming it.
      const shown = isUpload(ctx.workspaceDir, abs)
        ? (body: string) => untrustedBlock(`upload ${rel}`, body).text
        : (body: string) => body;
      const lines = text.split("\n");
      if (lines[lines.length - 1] === "") lines.pop(); // a final newline ends the last line
      if (offset > lines.length) {
        throw new ToolError(
          "invalid_arguments",
          `offset ${offset} is past the end of ${rel}, which has ${lines.length} lines`,
        );
      }
      const last = limit === undefined ? lines.length : Math.min(lines.length, offset - 1 + limit);
      if (offset === 1 && last === lines.length) return { content: shown(text) };
      const slice = lines.slice(offset - 1, last).join("\n");
      const more = last < lines.length ? `; continue with offset=${last + 1}` : "";
      return { content: `${shown(slice)}\n\n[lines ${offset}–${last} of ${lines.length}${more}]` };
    }),
};

const writeFileParameters = z.strictObject({
  path: z.string().describe("File path relative to the workspace root"),
  content: z.string().describe("The complete new content of the file"),
});

const writeFileTool: Tool<typeof writeFileParameters> = {
  name: "write_file",
  groups: ["fs", "fs-write"],
  description:
    "Create a file in the workspace or replace its whole content. Missing folders are created. Overwrites: read an existing file first, and prefer edit_file for small changes.",
  parameters: writeFileParameters,
  run: (args, ctx) =>
    guarded(args.path, async (rel) => {
      const content = args.content;
      const abs = resolveInWorkspace(ctx.workspaceDir, rel);
      const existed = statSync(abs, { throwIfNoEntry: false })?.isFile() === true;
      mkdirSync(path.dirname(abs), { recursive: true });
      await writeText(abs, content);
      return {
        content: `wrote ${content.length} characters to ${rel} (${existed ? "replaced" : "created"})`,
      };
    }),
};

const editFileParameters = z.strictObject({
  path: z.string().describe("File path relative to the workspace root"),
  old_text: z.string().describe("The exact text to replace; must occur exactly once"),
  new_text: z.string().describe("The text to put in its place (may be empty)"),
});

const editFileTool: Tool<typeof editFileParameters> = {
  name: "edit_file",
  groups: ["fs", "fs-write"],
  description:
    "Replace one passage in a workspace file. old_text must match the file exactly (whitespace and line breaks included) and occur exactly once; include more surrounding text if it is not unique.",
  parameters: editFileParameters,
  run: (args, ctx) =>
    guarded(args.path, async (rel) => {
      const oldText = args.old_text;
      const newText = args.new_text;
      if (oldText === "") throw new ToolError("invalid_arguments", "old_text must not be empty");
      const abs = resolveInWorkspace(ctx.workspaceDir, rel);
      const text = await loadText(abs, rel);
      const first = text.indexOf(oldText);
      if (first === -1) {
        const crlf =
          text.includes("\r\n") && !oldText.includes("\r") ? " The file uses CRLF line endings." : "";
        throw new ToolError(
          "not_found",
          `old_text was not found in ${rel}. It must match exactly, including whitespace and line breaks.${crlf} Read the file again and copy the passage.`,
        );
      }
      const count = countOccurrences(text, oldText);
      if (count > 1) {
        throw new ToolError(
          "failed",
          `old_text occurs ${count} times in ${rel}; it must occur exactly once. Include more of the surrounding text.`,
        );
      }
      await writeText(abs, text.slice(0, first) + newText + text.slice(first + oldText.length));
      const line = text.slice(0, first).split("\n").length;
      return { content: `edited ${rel}: replaced 1 passage starting at line ${line}` };
    }),
};

const listFilesParameters = z.strictObject({
  path: z.string().default(".").describe('Folder relative to the workspace root (default ".")'),
  recursive: z.boolean().default(false).describe("Also list subfolders (default false)"),
});

const listFilesTool: Tool<typeof listFilesParameters> = {
  name: "list_files",
  groups: ["fs"],
  description:
    "List a folder of the workspace (the root by default). Paths are shown relative to the workspace root; folders end with /. With recursive, subfolders are listed too, up to 500 entries.",
  parameters: listFilesParameters,
  run: (args, ctx) =>
    guarded(args.path, async (rel) => {
      const abs = resolveInWorkspace(ctx.workspaceDir, rel);
      const root = realpathSync.native(ctx.workspaceDir);
      if (!statSync(abs).isDirectory()) {
        throw new ToolError("failed", `${rel} is a file, not a folder; use read_file to read it`);
      }
      const lines: string[] = [];
      const complete = await walk(abs, root, args.recursive, lines, ctx.signal);
      if (lines.length === 0) return { content: "(empty folder)" };
      if (!complete) lines.push(`[… stopped at ${MAX_LIST_ENTRIES} entries; list a subfolder to see more]`);
      return { content: lines.join("\n") };
    }),
};

/** Depth-first, sorted; symlinks are shown but not followed. Returns false when the cap stopped it. */
async function walk(
  dir: string,
  root: string,
  recursive: boolean,
  out: string[],
  signal: AbortSignal,
): Promise<boolean> {
  signal.throwIfAborted();
  const entries: Dirent[] = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (out.length >= MAX_LIST_ENTRIES) return false;
    const abs = path.join(dir, entry.name);
    const shown = path.relative(root, abs).split(path.sep).join("/");
    if (entry.isSymbolicLink()) {
      out.push(`${shown} (symbolic link)`);
    } else if (entry.isDirectory()) {
      out.push(`${shown}/`);
      if (recursive && entry.name !== ".git" && !(await walk(abs, root, true, out, signal))) return false;
    } else {
      out.push(shown);
    }
  }
  return true;
}

/** Runs a tool body with its `path` argument, turning fs errors into ToolErrors. */
async function guarded(rel: string, body: (rel: string) => Promise<ToolOutput>): Promise<ToolOutput> {
  try {
    return await body(rel);
  } catch (err) {
    throw toToolError(err, rel);
  }
}

/** Reads a UTF-8 text file, refusing folders, files over MAX_READ_BYTES and binary files. */
async function loadText(abs: string, rel: string): Promise<string> {
  const s = statSync(abs);
  if (s.isDirectory())
    throw new ToolError("failed", `${rel} is a folder, not a file; use list_files to see inside`);
  if (s.size > MAX_READ_BYTES) {
    const mb = (s.size / (1024 * 1024)).toFixed(1);
    throw new ToolError(
      "failed",
      `${rel} is ${mb} MB; files over 2 MB cannot be read with read_file or edit_file`,
    );
  }
  const buffer = await readSized(abs, s.size);
  if (buffer.subarray(0, 8192).includes(0))
    throw new ToolError("failed", `${rel} looks like a binary file, not text`);
  return buffer.toString("utf8");
}

/** fs error codes → what the model is told. Anything else becomes "failed" with its message. */
const FS_ERRORS: Record<string, { code: ToolError["code"]; say: (rel: string) => string }> = {
  ENOENT: { code: "not_found", say: (rel) => `${rel} does not exist; list_files shows what is there` },
  ENOTDIR: {
    code: "not_found",
    say: (rel) => `${rel} does not exist: part of the path is a file, not a folder`,
  },
  EISDIR: { code: "failed", say: (rel) => `${rel} is a folder, not a file` },
  EACCES: { code: "failed", say: (rel) => `permission denied for ${rel}` },
  EPERM: { code: "failed", say: (rel) => `permission denied for ${rel}` },
  ELOOP: { code: "failed", say: (rel) => `${rel} goes through too many symbolic links` },
  ENOSPC: { code: "failed", say: () => "the disk is full" },
};

function toToolError(err: unknown, rel: string): ToolError {
  if (err instanceof ToolError) return err;
  const errno = err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : undefined;
  const known = errno === undefined ? undefined : FS_ERRORS[errno];
  if (known) return new ToolError(known.code, known.say(rel), { cause: err });
  return new ToolError("failed", err instanceof Error ? err.message : String(err), { cause: err });
}

/**
 * Like fs.realpath, but for a path whose tail does not exist yet: resolves the deepest existing
 * part (following a dangling symlink to where it points) and appends the rest.
 */
function realpathLoose(p: string, hops: number): string {
  try {
    return realpathSync.native(p);
  } catch (err) {
    if (!isErrno(err, "ENOENT") && !isErrno(err, "ENOTDIR")) throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const realParent = realpathLoose(parent, hops);
  const here = path.join(realParent, path.basename(p));
  let link = false;
  try {
    link = lstatSync(here).isSymbolicLink();
  } catch {
    // Missing: the rest of the path is appended as it is.
  }
  if (!link) return here;
  if (hops >= MAX_LINK_HOPS) throw new ToolError("failed", `too many symbolic links while resolving ${p}`);
  return realpathLoose(path.resolve(realParent, readlinkSync(here)), hops + 1);
}

/** Whether a resolved (real) path is under the workspace's UPLOADS_DIR, compared case-insensitively. */
function isUpload(workspaceDir: string, real: string): boolean {
  const rel = path.relative(realpathSync.native(workspaceDir), real).split(path.sep).join("/");
  return rel.toLowerCase().startsWith(`${UPLOADS_DIR}/`);
}

function outside(relPath: string, why: string): ToolError {
  return new ToolError(
    "path_outside_workspace",
    `path ${JSON.stringify(relPath)} is outside the workspace (${why}); use a path relative to the workspace root, such as "notes/todo.md"`,
  );
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) count++;
  return count;
}

function isErrno(err: unknown, code: string): boolean {
  return err instanceof Error && "code" in err && err.code === code;
}
