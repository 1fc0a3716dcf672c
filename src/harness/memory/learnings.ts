/**
 * Learnings agents report (`learn`, an assignment's end): normalized so the same lesson in other
 * words of case, spacing or punctuation counts once, and promoted into MEMORY.md under
 * `## Learned` — after it was reported in LEARNING_PROMOTE_AT assignments, or on the owner's word.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "./atomic-write.js";

/** Distinct assignments (or sessions) that must report a learning before it is promoted. */
export const LEARNING_PROMOTE_AT = 3;

/** A learning's length bounds, in characters. */
export const LEARNING_MAX_CHARS = 500;

/** The MEMORY.md section learnings are promoted into. */
export const LEARNED_SECTION = "Learned";

/**
 * The dedupe key: lower case, accents and punctuation dropped, whitespace collapsed, and a
 * leading "Lesson:", "Learning:", "Note:" or "Tip:" label ignored.
 */
export function normalizeLearning(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/^\s*(?:lesson|learning|note|tip)\s*:\s*/, "")
    .replace(/[^\p{L}\p{N}\s]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** One line of text (whitespace collapsed), checked: 3 to LEARNING_MAX_CHARS characters. */
export function cleanLearning(text: string): string | { error: string } {
  const line = text.replace(/\s+/g, " ").trim();
  if (normalizeLearning(line).length < 3) return { error: "text: expected a lesson of at least a few words" };
  if (line.length > LEARNING_MAX_CHARS)
    return {
      error: `text: ${line.length} characters is too long (at most ${LEARNING_MAX_CHARS}); say it in one line`,
    };
  return line;
}

/**
 * `doc` with `- text` added at the end of its `## Learned` section (made at the end of the file
 * when missing). Unchanged when the section already has a line that normalizes the same.
 */
export function withLearned(doc: string, text: string): string {
  const lines = doc.replace(/\r\n?/g, "\n").replace(/\s+$/, "").split("\n");
  const heading = lines.findIndex((l) => /^##\s+learned\s*$/i.test(l.trim()));
  const entry = `- ${text}`;
  if (heading < 0) {
    const before = lines.join("\n");
    return `${before === "" ? "" : `${before}\n\n`}## ${LEARNED_SECTION}\n\n${entry}\n`;
  }
  let end = lines.length;
  for (let i = heading + 1; i < lines.length; i++)
    if (/^ {0,3}#{1,2}\s/.test(lines[i] ?? "")) {
      end = i;
      break;
    }
  const wanted = normalizeLearning(text);
  for (let i = heading + 1; i < end; i++)
    if (normalizeLearning((lines[i] ?? "").replace(/^\s*[-*]\s*/, "")) === wanted)
      return `${lines.join("\n")}\n`;
  let last = end - 1;
  while (last > heading && (lines[last] ?? "").trim() === "") last--;
  const insertAt = last + 1;
  const add = last === heading ? ["", entry] : [entry];
  const tail = lines.slice(end);
  const out = [...lines.slice(0, insertAt), ...add, ...(tail.length > 0 ? ["", ...tail] : [])];
  return `${out.join("\n")}\n`;
}

/** Adds `text` to the workspace's MEMORY.md `## Learned` section (atomically). */
export async function promoteToMemory(workspaceDir: string, text: string): Promise<void> {
  const file = path.join(workspaceDir, "MEMORY.md");
  const current = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return "# MEMORY.md — long-term memory\n";
    throw err;
  });
  const next = withLearned(current, text);
  if (next !== current) await writeFileAtomic(file, next);
}
