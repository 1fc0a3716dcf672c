/**
 * What the volatile part of a turn's prompt says of its session's mode: in plan mode, what the
 * mode is and where the plan goes; in execute mode, the plan to follow (the plan file, scanned
 * like a context file and cut to a token budget). Nothing in normal mode. Never part of the
 * cached prefix: changing modes costs no cache.
 */
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { SessionMode } from "../../store/repos/session-repo.js";
import { isAssignmentSession } from "../assignments/assignments.js";
import { scanContextFile } from "../context/scan.js";
import { estimateTokens } from "../context/tokens.js";
import { planFilePath } from "./plan-mode.js";

/** Default tokens of the plan file in an execute-mode turn's context. */
export const DEFAULT_PLAN_TOKENS = 4_000;

/** Bytes of the plan file read at most (a larger one is cut anyway). */
const MAX_PLAN_BYTES = 256 * 1024;

/** Options of {@link modeContext}. */
export interface ModeContextOptions {
  /** Tokens of the plan file shown in execute mode; default DEFAULT_PLAN_TOKENS. */
  maxPlanTokens?: number;
}

/** The volatile block for `mode` in `sessionKey`'s turn; "" in normal mode. Never rejects. */
export async function modeContext(
  mode: SessionMode,
  sessionKey: string,
  workspaceDir: string,
  options: ModeContextOptions = {},
): Promise<string> {
  if (mode === "normal") return "";
  const planPath = planFilePath(sessionKey);
  const assignment = isAssignmentSession(sessionKey);
  if (mode === "plan") return planModeText(planPath, assignment);
  const plan = await readPlan(path.join(workspaceDir, planPath));
  const head = `# Mode: execute\n\nFollow the approved plan in ${planPath}, step by step; when a step is done or the plan has to change, update ${planPath}.`;
  if (plan === undefined)
    return `${head}\n\n(${planPath} does not exist: ${assignment ? "write down the plan you follow there first" : "ask the person what to follow, or /mode normal ends execute mode"}.)`;
  const budget = options.maxPlanTokens ?? DEFAULT_PLAN_TOKENS;
  const scanned = scanContextFile(planPath, plan.trimEnd()).text;
  return `${head}\n\n## ${planPath}\n\n${cutPlan(scanned, budget, planPath)}`;
}

/** The plan-mode block: what the mode is, where the plan goes, and how it ends. */
export function planModeText(planPath: string, assignment: boolean): string {
  const end = assignment
    ? `When it is written, ask the owner to approve it with request_approval: their yes switches to execute mode, in which you follow it.`
    : `When it is written, tell the person it is ready: /execute switches to execute mode, in which you follow it.`;
  return [
    "# Mode: plan",
    "",
    `This session is in plan mode: investigate and plan, change nothing yet. Only read-only tools run, and write_file only to ${planPath}; any other call is refused.`,
    `Write the plan into ${planPath}: the goal, the steps in order, the files or things each step changes, the risks, and how to check the result. ${end}`,
  ].join("\n");
}

/** The plan file's text, or undefined when it is missing or unreadable. */
async function readPlan(abs: string): Promise<string | undefined> {
  try {
    const s = await stat(abs);
    if (!s.isFile()) return undefined;
    const buf = await readFile(abs);
    return buf.subarray(0, MAX_PLAN_BYTES).toString("utf8");
  } catch {
    return undefined;
  }
}

/** The plan within `budget` tokens: its head and tail around a marker naming the file. */
export function cutPlan(text: string, budget: number, name: string): string {
  const tokens = estimateTokens(text);
  if (tokens <= budget) return text === "" ? "(empty)" : text;
  const ratio = text.length / Math.max(1, tokens);
  let headEnd = Math.floor(budget * 0.7 * ratio);
  let tailStart = text.length - Math.floor(budget * 0.2 * ratio);
  // Never split a surrogate pair: drop the lone half instead.
  if (/[\uD800-\uDBFF]/.test(text.charAt(headEnd - 1))) headEnd--;
  if (/[\uDC00-\uDFFF]/.test(text.charAt(tailStart))) tailStart++;
  const [head, tail] = [text.slice(0, headEnd), text.slice(tailStart)];
  return `${head}\n[… about ${tokens - budget} tokens of ${name} cut here; read_file ${name} shows all of it …]\n${tail}`;
}
