/**
 * The tool boundary. Every tool call the model makes goes through ToolRegistry.execute, which
 * validates the arguments with the tool's zod schema, runs it under a timeout and the run's
 * abort signal, turns every failure into a result the model can act on, redacts secrets and
 * caps the size (saving the full text of a cut result, when configured, for read_file).
 * Nothing a tool does can throw past this point.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { redactSecrets } from "../../util/redact.js";
import type { ToolSpec } from "../providers/types.js";
import { argumentProblems } from "./tool-schema.js";
import { type ToolEntry, toolEntry } from "./tool-entry.js";
import type { ToolSource } from "./tool-source.js";
import { SourceTools } from "./source-tools.js";
import type { Tool, ToolContext, ToolOutput } from "./types.js";
import type { PolicyContext, ToolPolicy } from "./tool-policy.js";
import { chatOutputsDir } from "./private-paths.js";
import { ToolError } from "./tool-error.js";
import { DEFAULT_MAX_RESULT_CHARS, MIN_RESULT_CHARS, capMiddle } from "./output-cap.js";

/** What the model sees of one tool call. */
export interface ToolResult {
  content: string;
  isError: boolean;
  /**
   * Why it failed, when the boundary decided: a ToolError code, or "timeout" / "aborted".
   * Absent on success and when the tool itself reported `isError`.
   */
  code?: string;
  /** The tool's ToolOutput.requiresHuman: a question for a person (an assignment pauses on it). */
  requiresHuman?: boolean;
}

export interface ToolRegistryOptions {
  /**
   * Characters of one result; longer results keep their head and tail. Default 16_000. The
   * composition root sizes it to the model, e.g. `maxResultCharsFor(contextWindow)` (30% of the
   * window at ~4 characters per token); `execute` can lower it per call.
   */
  maxResultChars?: number;
  /** Time one call may take before its signal is aborted and an error returned. Default 60_000. */
  timeoutMs?: number;
  /**
   * Absolute folder (the composition root passes `<workspace>/.agent-output`) where the full,
   * redacted text of a cut result is saved as `<runId>-<toolCallId or tool name>-<n>.txt`; the
   * marker then names the file, as a path relative to the workspace, for read_file. A turn
   * outside the owner's private chat saves under `chats/<session>/` in it (private-paths.ts
   * chatOutputsDir), the only saved outputs its policy lets it read. Created on first use. A failed write leaves the plain marker. Default none: nothing is saved.
   */
  outputDir?: string;
  /**
   * Which tools a turn may use: `specs(ctx)` offers only allowed tools and `execute` refuses a
   * call to any other with code `denied`. Default none: every tool, everywhere.
   */
  policy?: ToolPolicy;
  /**
   * Told, once per tool, why a tool source's tool is not offered (its name is taken, its schema
   * is unusable). Default: nothing.
   */
  warn?: (message: string) => void;
}

/** Per-call limits for `execute`. */
export interface ExecuteOptions {
  /**
   * Characters of this result, instead of the registry's `maxResultChars` (e.g. for a session
   * on a model with a smaller window). Raised to the minimum of 200 when lower.
   */
  maxResultChars?: number;
}

/** Files a name collision may skip before the save gives up. */
const SAVE_ATTEMPTS = 5;

/**
 * `maxResultChars` for a model with a window of `contextWindowTokens`: `share` of the window
 * (default 0.3) at ~4 characters per token, at least 200.
 */
export function maxResultCharsFor(contextWindowTokens: number, share = 0.3): number {
  return Math.max(MIN_RESULT_CHARS, Math.floor(contextWindowTokens * share * 4));
}

type Entry = ToolEntry;

/** Holds the tools of a run and executes calls to them through one boundary. */
export class ToolRegistry {
  readonly #tools = new Map<string, Entry>();
  readonly #maxResultChars: number;
  readonly #timeoutMs: number;
  readonly #outputDir: string | undefined;
  readonly #policy: ToolPolicy | undefined;
  readonly #sources: SourceTools;
  /** Numbers the saved outputs of this registry, so names never repeat within a process. */
  #saved = 0;

  /**
   * Throws a RangeError naming the field when a number option is not a positive integer or
   * `outputDir` is not an absolute path.
   */
  constructor(options: ToolRegistryOptions = {}) {
    this.#maxResultChars = checkInt(
      "maxResultChars",
      options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
      MIN_RESULT_CHARS,
    );
    this.#timeoutMs = checkInt("timeoutMs", options.timeoutMs ?? 60_000, 1);
    if (options.outputDir !== undefined && !path.isAbsolute(options.outputDir)) {
      throw new RangeError(
        `ToolRegistryOptions.outputDir must be an absolute path, got ${JSON.stringify(options.outputDir)}`,
      );
    }
    this.#outputDir = options.outputDir;
    this.#policy = options.policy;
    this.#sources = new SourceTools(options.warn ?? (() => {}));
  }

  /**
   * Adds a tool and builds its JSON Schema once. Throws when a tool of the same name is already
   * registered, and a TypeError when its parameters are not a zod object JSON Schema can express.
   */
  register(tool: Tool): this {
    if (this.#tools.has(tool.name)) throw new Error(`tool "${tool.name}" is already registered`);
    this.#tools.set(tool.name, toolEntry(tool));
    return this;
  }

  /**
   * Adds a source of tools that come and go at run time (an MCP server's). Its current tools are
   * offered and run like registered ones, after them, under the same policy; one whose name is
   * a registered tool's is skipped with a warning. Throws when a source of that name was added.
   */
  addSource(source: ToolSource): this {
    this.#sources.add(source);
    return this;
  }

  /**
   * Gets the tool sources a turn in this context may use ready (starts an MCP server on first
   * use): a source is prepared when the policy allows its groups here. Bounded by each source;
   * resolves early when `signal` aborts; never rejects.
   */
  async prepare(ctx: Pick<ToolContext, "replyTarget" | "asker">, signal: AbortSignal): Promise<void> {
    const policy = this.#policy;
    const pc = policyContext(ctx);
    const due = this.#sources.sources.filter(
      (s) => s.prepare && (!policy || policy.decide(s.name, s.groups ?? [], pc).allowed),
    );
    if (due.length === 0) return;
    await Promise.all(due.map((s) => s.prepare?.(signal).catch(() => {})));
  }

  /** The registered tools, in registration order (not the sources' tools). */
  list(): Tool[] {
    return [...this.#tools.values()].map((entry) => entry.tool);
  }

  /**
   * What the model is told about each tool, in registration order, then the sources' tools. The
   * specs are built once per tool and frozen: every call returns the same objects, so the tools
   * part of a request is byte-identical from one call to the next (provider prompt caches
   * depend on it) while a source's set is unchanged.
   */
  specs(ctx?: Pick<ToolContext, "replyTarget" | "asker">): ToolSpec[] {
    const entries = this.#entries();
    const policy = this.#policy;
    if (!policy || !ctx) return entries.map((entry) => entry.spec);
    const pc = policyContext(ctx);
    return entries.filter((e) => policy.decide(e.tool.name, e.tool.groups, pc).allowed).map((e) => e.spec);
  }

  /** The policy's decision for every registered tool in a turn of this context (`tools list`). */
  decisions(
    ctx: Pick<ToolContext, "replyTarget" | "asker">,
  ): Array<{ tool: Tool; allowed: boolean; reason?: string }> {
    const pc = policyContext(ctx);
    return this.#entries().map(({ tool }) => ({
      tool,
      ...(this.#policy?.decide(tool.name, tool.groups, pc) ?? { allowed: true }),
    }));
  }

  /**
   * Runs one call. Never throws: unknown tools, invalid arguments, ToolErrors, other throws,
   * timeouts and aborts all come back as `isError` results with a `code`. Every result is
   * redacted, then capped at `maxResultChars` (or `options.maxResultChars`): the head and the
   * tail are kept around a marker saying how much was left out — the tail gets the larger share
   * when the text ends like a failure (error, exception, traceback, failed in its last lines) —
   * and, with `outputDir`, the marker names the file holding the whole text.
   */
  async execute(
    name: string,
    argumentsJson: string,
    ctx: ToolContext,
    options: ExecuteOptions = {},
  ): Promise<ToolResult> {
    const result = await this.#execute(name, argumentsJson, ctx);
    const content = redactSecrets(result.content);
    const max = callLimit(options.maxResultChars, this.#maxResultChars);
    if (content.length <= max) return { ...result, content };
    const savedAs = await this.#save(content, ctx.toolCallId ?? name, ctx);
    return { ...result, content: capMiddle(content, max, savedAs) };
  }

  /**
   * Writes a cut result's full text to `outputDir`; returns how the marker names the file
   * (relative to the workspace when inside it), or undefined when there is no `outputDir` or
   * the write failed. Never throws.
   */
  async #save(text: string, callName: string, ctx: ToolContext): Promise<string | undefined> {
    if (this.#outputDir === undefined) return undefined;
    // Outside the owner's private chat, into the chat's own folder: the only one it may read.
    const dir = policyContext(ctx).privateChat
      ? this.#outputDir
      : path.join(this.#outputDir, chatOutputsDir(ctx.sessionKey));
    try {
      await mkdir(dir, { recursive: true });
      const base = `${fileSafe(ctx.runId)}-${fileSafe(callName)}`;
      for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
        const file = path.join(dir, `${base}-${++this.#saved}.txt`);
        try {
          // "wx": never overwrite, e.g. a file left by an earlier process with the same run id.
          await writeFile(file, text, { flag: "wx", signal: ctx.signal });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
          return undefined;
        }
        const relative = path.relative(ctx.workspaceDir, file);
        return relative.startsWith("..") || path.isAbsolute(relative) ? file : relative;
      }
      return undefined;
    } catch {
      return undefined;
    }
  }

  async #execute(name: string, argumentsJson: string, ctx: ToolContext): Promise<ToolResult> {
    const entry = this.#tools.get(name) ?? this.#sourceEntries().find((e) => e.tool.name === name);
    if (!entry) {
      const valid =
        this.#entries()
          .map((e) => e.tool.name)
          .join(", ") || "(none)";
      return failure("unknown_tool", `there is no tool named "${name}". Valid tools: ${valid}.`);
    }
    const parsed = parseArguments(argumentsJson);
    if (!parsed.ok) return invalidArguments(entry, [parsed.problem]);
    const checked = entry.tool.parameters.safeParse(parsed.value, { reportInput: true });
    if (!checked.success)
      return invalidArguments(entry, argumentProblems(checked.error.issues, entry.schema));
    const decision = this.#policy?.decideCall(name, entry.tool.groups, checked.data, {
      ...policyContext(ctx),
      workspaceDir: ctx.workspaceDir,
      sessionKey: ctx.sessionKey,
    });
    if (decision && !decision.allowed)
      return failure(
        "denied",
        `${name} is not available here: ${decision.reason ?? "denied by tools policy"}.`,
      );
    if (ctx.signal.aborted) return failure("aborted", `${name} was not run: the run was aborted.`);
    return this.#runWithLimits(entry.tool, checked.data, ctx);
  }

  /** Registered tools, then the sources' current ones. */
  #entries(): Entry[] {
    const own = [...this.#tools.values()];
    return this.#sources.sources.length === 0 ? own : [...own, ...this.#sourceEntries()];
  }

  #sourceEntries(): Entry[] {
    return this.#sources.entries((name) => this.#tools.has(name));
  }

  async #runWithLimits(tool: Tool, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const controller = new AbortController();
    let timedOut = false;
    let settle: ((r: ToolResult) => void) | undefined;
    const stopped = new Promise<ToolResult>((resolve) => {
      settle = resolve;
    });
    const onAbort = (): void => {
      controller.abort(ctx.signal.reason);
      settle?.(failure("aborted", `${tool.name} was stopped: the run was aborted.`));
    };
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`${tool.name} timed out after ${this.#timeoutMs} ms`));
      settle?.(
        failure("timeout", `${tool.name} did not finish within ${this.#timeoutMs} ms and was stopped.`),
      );
    }, this.#timeoutMs);
    try {
      // new Promise(...) also catches a tool that throws synchronously.
      const running = new Promise<ToolOutput>((resolve) =>
        resolve(tool.run(args, { ...ctx, signal: controller.signal })),
      )
        .then(
          (out): ToolResult => ({
            content: out.content,
            isError: out.isError === true,
            ...(out.requiresHuman === true ? { requiresHuman: true } : {}),
          }),
        )
        .catch((err: unknown): ToolResult => {
          if (timedOut)
            return failure("timeout", `${tool.name} did not finish within ${this.#timeoutMs} ms.`);
          if (ctx.signal.aborted) return failure("aborted", `${tool.name} was stopped: the run was aborted.`);
          if (err instanceof ToolError) return failure(err.code, err.message);
          return failure(
            "failed",
            `${tool.name} failed: ${err instanceof Error ? err.message : String(err)}`,
          );
        });
      // A tool that ignores its signal still loses the race; its late outcome is dropped.
      return await Promise.race([running, stopped]);
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
    }
  }
}

/**
 * The policy's view of a turn. No asker: the agent's own background work, treated as the
 * owner's private chat.
 */
export function policyContext(ctx: Pick<ToolContext, "replyTarget" | "asker">): PolicyContext {
  return {
    channel: ctx.replyTarget?.channel,
    privateChat: ctx.asker?.privateChat ?? true,
    groupChat: ctx.asker?.groupChat ?? false,
  };
}

function failure(code: string, message: string): ToolResult {
  return { content: `error (${code}): ${message}`, isError: true, code };
}

/** Every problem on its own line, then what the tool takes, so the model can fix the call. */
function invalidArguments(entry: Entry, problems: string[]): ToolResult {
  const list = problems.map((p) => `- ${p}`).join("\n");
  return failure(
    "invalid_arguments",
    `invalid arguments for ${entry.tool.name}:\n${list}\nExpected parameters: ${entry.expected}.`,
  );
}

type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; problem: string };

function parseArguments(json: string): Parsed {
  // Some models send "" for a call without arguments.
  if (json.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return {
      ok: false,
      problem: `arguments are not valid JSON (${err instanceof Error ? err.message : "parse error"})`,
    };
  }
  if (!isPlainObject(value)) {
    return { ok: false, problem: `arguments must be a JSON object, got ${typeName(value)}` };
  }
  return { ok: true, value };
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The per-call limit: `requested` when it is a number (at least the minimum), else the registry's. */
function callLimit(requested: number | undefined, fallback: number): number {
  if (requested === undefined || !Number.isFinite(requested)) return fallback;
  return Math.max(MIN_RESULT_CHARS, Math.floor(requested));
}

/** A run id or call id as part of a file name: no separators, no leading dot, bounded length. */
function fileSafe(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 80) || "call";
}

function checkInt(field: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`ToolRegistryOptions.${field} must be an integer ≥ ${min}, got ${String(value)}`);
  }
  return value;
}
