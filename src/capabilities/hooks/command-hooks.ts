/**
 * The configured hooks as TurnHooks: each event's entries run in order through the HookRunner
 * and their verdicts become what the loop understands.
 * - beforeMessage (turns started by a message only): `{"reply"}` or exit 2 answers the person
 *   without a model call; a failure answers "hook X failed: …" (fail closed); a plain note goes
 *   to the model with the message.
 * - beforeToolCall: exit 2 or a failure refuses the call (the model reads the reason); a note is
 *   added to the call's result.
 * - afterToolCall: a note (or an exit-2 reason) is added to the result; a failure is logged.
 * - beforeStop: exit 2 sends the agent on with the reason (the loop bounds how often). A failed
 *   beforeStop hook sends it on once with "hook X failed: …" (so it can tell the person the check
 *   did not run), then is skipped for the rest of the run: a broken check must not hold a turn.
 * - afterReply: `async: false` entries run before the answer is committed (delivery waits);
 *   `async: true` entries run detached once the turn is committed (hooks-after-commit, in the
 *   module). Both fail open.
 * A hook that allows silently adds nothing to the context.
 */
import type { EarlyAnswer, HookTurn, ToolOutcome, TurnHooks } from "../../harness/hooks.js";
import type { ChatMessage, ToolCall } from "../../harness/providers/types.js";
import { TOOL_CATALOG } from "../../harness/tools/tool-groups.js";
import type { Logger } from "../../util/logger.js";
import type { HookOutcomes } from "./hook-outcomes.js";
import { hookKey } from "./hook-outcomes.js";
import type { HookInput, HookRunner, HookVerdict } from "./hook-runner.js";
import {
  HOOK_EVENTS,
  type HookEntry,
  type HookEvent,
  type HookSettings,
  hookAppliesToTool,
} from "./settings.js";

/** What the command hooks need. */
export interface CommandHooksOptions {
  settings: HookSettings;
  runner: Pick<HookRunner, "run">;
  outcomes: Pick<HookOutcomes, "record">;
  /** The texts of the messages run `runId` answers (beforeMessage's `message`). */
  messagesOf(runId: string): Promise<string[]>;
  /** Work items done and in all when `runId` is an assignment's run; undefined otherwise. */
  workItemsOf?(runId: string): { done: number; total: number } | undefined;
  logger: Logger;
  /** Time source of the recorded outcomes. */
  now(): number;
}

/** The turn as a hook reads it (HookInput without the event's own fields). */
export type HookTurnFacts = Pick<HookInput, "sessionKey" | "channel" | "senderId" | "trigger" | "workItems">;

/** The hook runs of one gateway: its TurnHooks, and the detached afterReply runs. */
export class CommandHooks {
  readonly #o: CommandHooksOptions;
  /** Notes of allowing beforeToolCall hooks, added to that call's result. */
  readonly #notes = new WeakMap<ToolCall, string[]>();
  /** beforeStop hooks that failed in a run (by its signal): skipped for the rest of it. */
  readonly #brokenStops = new WeakMap<AbortSignal, Set<number>>();
  /** Answers whose async afterReply entries wait for the turn's commit, by run id. */
  readonly #pending = new Map<string, { sessionKey: string; input: HookInput }>();
  /** Invalid beforeMessage JSON already logged, by hook index. */
  readonly #loggedJson = new Set<number>();

  constructor(options: CommandHooksOptions) {
    this.#o = options;
  }

  /** Whether any entry is configured (none: the module adds no TurnHooks at all). */
  get any(): boolean {
    const s = this.#o.settings;
    return HOOK_EVENTS.some((event) => s[event].length > 0);
  }

  /** The TurnHooks for the configured events only (an event without entries adds no method). */
  hooks(): TurnHooks {
    const s = this.#o.settings;
    const hooks: TurnHooks = {};
    if (s.beforeMessage.length > 0) hooks.answerBefore = (ctx, turn) => this.#beforeMessage(ctx, turn);
    if (s.beforeToolCall.length > 0) hooks.beforeToolCall = (call, turn) => this.#beforeToolCall(call, turn);
    if (s.beforeToolCall.length > 0 || s.afterToolCall.length > 0)
      hooks.afterToolCall = (call, outcome, turn) => this.#afterToolCall(call, outcome, turn);
    if (s.beforeStop.length > 0) hooks.beforeStop = (answer, turn) => this.#beforeStop(answer, turn);
    if (s.afterReply.length > 0) hooks.afterAnswer = (answer, turn) => this.#afterAnswer(answer, turn);
    return hooks;
  }

  /** The facts of a turn every hook input carries. */
  facts(turn: Pick<HookTurn, "sessionKey" | "runId" | "trigger" | "replyTarget" | "asker">): HookTurnFacts {
    const workItems = this.#o.workItemsOf?.(turn.runId);
    return {
      sessionKey: turn.sessionKey,
      channel: turn.replyTarget?.channel ?? turn.trigger,
      ...(turn.asker?.senderId !== undefined && { senderId: turn.asker.senderId }),
      trigger: turn.trigger,
      ...(workItems && { workItems }),
    };
  }

  /**
   * Turn `runId` was committed: with an answer, its `async: true` afterReply entries run now, in
   * order, detached (the returned promise is for tests; it never rejects). Nothing for a run
   * that did not answer.
   */
  committed(runId: string, answered: boolean): Promise<void> {
    const pending = this.#pending.get(runId);
    this.#pending.delete(runId);
    if (!pending || !answered) return Promise.resolve();
    return this.#afterCommit(pending.input).catch((err: unknown) => {
      this.#o.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "afterReply hooks failed",
      );
    });
  }

  /** A session's turn ended: answers that were never committed (discarded) are forgotten. */
  ended(sessionKey: string): void {
    for (const [runId, p] of this.#pending) if (p.sessionKey === sessionKey) this.#pending.delete(runId);
  }

  async #afterCommit(input: HookInput): Promise<void> {
    for (const [i, hook] of this.#o.settings.afterReply.entries())
      if (hook.async) await this.#run("afterReply", i, hook, input);
  }

  async #beforeMessage(
    context: Parameters<NonNullable<TurnHooks["answerBefore"]>>[0],
    turn: HookTurn,
  ): Promise<EarlyAnswer | undefined> {
    if (turn.trigger !== "message") return undefined;
    const message = (await this.#o.messagesOf(turn.runId)).join("\n\n");
    const input: HookInput = { event: "beforeMessage", ...this.facts(turn), message };
    const notes: string[] = [];
    for (const [i, hook] of this.#o.settings.beforeMessage.entries()) {
      const v = await this.#run("beforeMessage", i, hook, input, turn.signal);
      if (v.type === "reply") return { answer: v.text };
      if (v.type === "block") return { answer: v.reason };
      if (v.type === "allow" && v.invalidJson !== undefined && !this.#loggedJson.has(i)) {
        this.#loggedJson.add(i);
        this.#o.logger.warn(
          { hook: hookKey("beforeMessage", i), stdout: v.invalidJson.slice(0, 200) },
          'beforeMessage hook printed JSON that is no {"reply": "…"}: allowed',
        );
      }
      if (v.type === "allow" && v.note !== undefined) notes.push(noteOf(hook, v.note));
    }
    if (notes.length === 0) return undefined;
    return { context: { ...context, messages: appendToLastUser(context.messages, notes.join("\n")) } };
  }

  async #beforeToolCall(call: ToolCall, turn: HookTurn): Promise<{ block: string } | undefined> {
    const groups = groupsOf(call.name);
    let input: HookInput | undefined;
    const notes: string[] = [];
    for (const [i, hook] of this.#o.settings.beforeToolCall.entries()) {
      if (!hookAppliesToTool(hook.tools, call.name, groups)) continue;
      input ??= { event: "beforeToolCall", ...this.facts(turn), tool: toolOf(call) };
      const v = await this.#run("beforeToolCall", i, hook, input, turn.signal);
      if (v.type === "block") return { block: v.reason };
      if (v.type === "allow" && v.note !== undefined) notes.push(noteOf(hook, v.note));
    }
    if (notes.length > 0) this.#notes.set(call, notes);
    return undefined;
  }

  async #afterToolCall(call: ToolCall, outcome: ToolOutcome, turn: HookTurn): Promise<ToolOutcome> {
    const notes = this.#notes.get(call) ?? [];
    this.#notes.delete(call);
    const groups = groupsOf(call.name);
    let input: HookInput | undefined;
    for (const [i, hook] of this.#o.settings.afterToolCall.entries()) {
      if (!hookAppliesToTool(hook.tools, call.name, groups)) continue;
      input ??= {
        event: "afterToolCall",
        ...this.facts(turn),
        tool: toolOf(call),
        result: { text: outcome.content, isError: outcome.isError },
      };
      const v = await this.#run("afterToolCall", i, hook, input, turn.signal);
      if (v.type === "allow" && v.note !== undefined) notes.push(noteOf(hook, v.note));
      if (v.type === "block") notes.push(noteOf(hook, v.reason));
    }
    if (notes.length === 0) return outcome;
    return { ...outcome, content: `${outcome.content}\n\n${notes.join("\n")}` };
  }

  async #beforeStop(answer: string, turn: HookTurn): Promise<{ continueWith: string } | undefined> {
    let broken = this.#brokenStops.get(turn.signal);
    let input: HookInput | undefined;
    for (const [i, hook] of this.#o.settings.beforeStop.entries()) {
      if (broken?.has(i)) continue;
      input ??= { event: "beforeStop", ...this.facts(turn), reply: answer };
      const v = await this.#run("beforeStop", i, hook, input, turn.signal);
      if (v.type !== "block") continue;
      if (v.failed) {
        broken ??= new Set();
        broken.add(i);
        this.#brokenStops.set(turn.signal, broken);
        this.#o.logger.warn({ hook: hookKey("beforeStop", i), reason: v.reason }, "beforeStop hook failed");
      }
      return { continueWith: v.reason };
    }
    return undefined;
  }

  async #afterAnswer(answer: string, turn: HookTurn): Promise<void> {
    const input: HookInput = { event: "afterReply", ...this.facts(turn), reply: answer };
    // The async entries wait for the commit (turn_committed), with what the turn looked like now.
    if (this.#o.settings.afterReply.some((h) => h.async))
      this.#pending.set(turn.runId, { sessionKey: turn.sessionKey, input });
    for (const [i, hook] of this.#o.settings.afterReply.entries())
      if (!hook.async) await this.#run("afterReply", i, hook, input, turn.signal);
  }

  /** Runs one hook, records its outcome and logs a fail-open failure. Never throws. */
  async #run(
    event: HookEvent,
    index: number,
    hook: HookEntry,
    input: HookInput,
    signal?: AbortSignal,
  ): Promise<HookVerdict> {
    const key = hookKey(event, index);
    let v: HookVerdict;
    try {
      v = await this.#o.runner.run(hook, input, signal);
    } catch (err) {
      // The runner never throws; should it, the event's failure rule still applies.
      const reason = `hook ${hook.command} failed: ${err instanceof Error ? err.message : String(err)}`;
      v = event.startsWith("before")
        ? { type: "block", reason, failed: true, durationMs: 0 }
        : { type: "ignored", reason, durationMs: 0 };
    }
    const verdict = v.type === "block" && v.failed ? "failed" : v.type;
    const reason = v.type === "block" || v.type === "ignored" ? v.reason : undefined;
    this.#o.outcomes.record(event, key, {
      command: hook.command,
      verdict,
      at: this.#o.now(),
      durationMs: v.durationMs,
      ...(reason !== undefined && { reason }),
    });
    if (v.type === "ignored") this.#o.logger.warn({ hook: key, reason: v.reason }, "hook failed (ignored)");
    return v;
  }
}

/** A hook's output as the model reads it: one block marked with the hook's command. */
function noteOf(hook: HookEntry, text: string): string {
  return `[hook ${hook.command}] ${text}`;
}

/** The call as a hook reads it: the name and the parsed arguments (the raw text when not JSON). */
function toolOf(call: ToolCall): { name: string; arguments: unknown } {
  let args: unknown;
  try {
    args = JSON.parse(call.argumentsJson);
  } catch {
    args = call.argumentsJson;
  }
  return { name: call.name, arguments: args };
}

/** A tool's groups: the catalog's, or `mcp:<server>` for an MCP tool (`<server>__<tool>`). */
export function groupsOf(name: string): readonly string[] {
  const known = TOOL_CATALOG[name];
  if (known) return known;
  const cut = name.indexOf("__");
  return cut > 0 ? [`mcp:${name.slice(0, cut)}`] : [];
}

function appendToLastUser(messages: ChatMessage[], note: string): ChatMessage[] {
  const copy = [...messages];
  for (let i = copy.length - 1; i >= 0; i--) {
    const m = copy[i];
    if (m?.role !== "user") continue;
    copy[i] = { role: "user", content: `${m.content}\n\n${note}` };
    return copy;
  }
  return copy;
}
