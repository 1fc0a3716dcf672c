/**
 * The texts of sub-agents: the task a child reads as its first turn, and a child's result as its
 * parent reads it (cut, with the whole text saved in the workspace).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { SAVED_OUTPUTS_DIR, chatOutputsDir } from "../../harness/tools/private-paths.js";
import { untrustedBlock } from "../../harness/tools/untrusted.js";
import type { Subagent, SubagentEnd } from "../../store/repos/subagent-repo.js";

/** A child's first turn: its task and what its parent passed along. */
export function taskText(child: Pick<Subagent, "task" | "context" | "label">): string {
  const parts = [`Your task (from the agent that started you, as helper "${child.label}"):\n\n${child.task}`];
  if (child.context.trim() !== "") parts.push(`What it passed along:\n\n${child.context}`);
  return parts.join("\n\n");
}

/** A result as its parent reads it: who, how it ended, the (cut) text as data, where the whole is. */
export function resultText(child: Subagent): string {
  const how =
    child.state === "done"
      ? "done"
      : child.state === "failed"
        ? `failed: ${child.error ?? "unknown"}`
        : `cancelled: ${child.error ?? ""}`;
  const head = `[helper ${child.id} "${child.label}" — ${how}]`;
  const body = child.result ?? "";
  if (body.trim() === "") return head;
  const saved = child.resultPath ? `\n(the whole result: ${child.resultPath}, readable with read_file)` : "";
  return `${head}\n${untrustedBlock(`helper ${child.id}`, body).text}${saved}`;
}

/**
 * A child's end from its last turn: the answer (or why it failed) cut to `maxChars`; a longer
 * text is saved whole under .agent-output (a chat's own folder there outside the owner's private
 * chat, so the parent can read it).
 */
export async function endOf(
  child: Subagent,
  answer: string | null,
  error: string | null,
  o: { workspaceDir: string; maxChars: number },
): Promise<SubagentEnd> {
  const state = answer !== null ? "done" : "failed";
  const text = answer ?? "";
  if (text.length <= o.maxChars)
    return { id: child.id, state, result: text, ...(error !== null ? { error } : {}) };
  const folder = child.origin.privateChat
    ? SAVED_OUTPUTS_DIR
    : path.join(SAVED_OUTPUTS_DIR, chatOutputsDir(child.parentSessionKey));
  const relative = path.join(folder, `helper-${child.id}.txt`);
  let resultPath: string | undefined;
  try {
    await mkdir(path.join(o.workspaceDir, folder), { recursive: true });
    await writeFile(path.join(o.workspaceDir, relative), text);
    resultPath = relative;
  } catch {
    // Not saved: the cut text still reaches the parent.
  }
  const cut = `${text.slice(0, o.maxChars)}\n[… ${text.length - o.maxChars} more characters${resultPath ? "" : " (could not be saved)"} …]`;
  return {
    id: child.id,
    state,
    result: cut,
    ...(resultPath ? { resultPath } : {}),
    ...(error !== null ? { error } : {}),
  };
}

/** What a parent whose wait_agents timed out is told: the helpers it waited on that still run. */
export function waitTimedOutText(running: readonly Pick<Subagent, "id" | "label">[]): string {
  const names = running.map((c) => `${c.id} "${c.label}"`).join(", ");
  return `The wait for your helpers timed out. Still running: ${names}. Their results come when they end; answer with what you have, or wait_agents again.`;
}
