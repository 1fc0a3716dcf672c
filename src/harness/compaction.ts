/**
 * Compaction, as turn hooks: when a request would pass `threshold` of the model's context
 * window (at the start of a turn), on a `context_overflow` error (once, then the call is
 * retried), or when `/compact` asked for it. The ladder, cheapest first, never separating a
 * tool call from its result:
 *
 *  (a) old results of *replayable* tools (reads, listings, searches) are cleared to a one-line
 *      note of what to run again;
 *  (b) large *non-replayable* old results are saved to `.agent-output/` with a pointer (a
 *      chat's own folder there outside the owner's private chat, see tools/private-paths.ts);
 *  (c) older turns are summarized in chunks (by token share), the summaries merged, keeping
 *      identifiers verbatim and stating goal, decisions, progress, last step and next step —
 *      after the agent had one silent turn to save durable notes with `memory_write`;
 *  (d) only what a summary covers is dropped from the context.
 *
 * The recent turns (`keepRecentTokens`, or a quarter of the window when smaller) stay verbatim.
 * A summary that fails its audit (empty, too short, or missing identifiers of the span) is
 * retried once; then the turn goes on with (a) and (b) only. The transcript keeps everything:
 * a `compaction` event records the summary, the first event kept verbatim and the cleared
 * results; nothing is deleted.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { TranscriptEvent, TranscriptPayload } from "../store/repos/transcript-repo.js";
import type { Logger } from "../util/logger.js";
import { TokenCounter, estimateTokensOnce } from "./context/tokens.js";
import type { HookTurn, TurnContext, TurnHooks } from "./hooks.js";
import type { ModelAccess } from "./models/model-router.js";
import type { ChatMessage, ProviderEvent } from "./providers/types.js";
import type { ToolRegistry } from "./tools/registry.js";
import { SAVED_OUTPUTS_DIR, chatOutputsDir } from "./tools/private-paths.js";
import {
  auditSummary,
  chunkByTokens,
  estimateContext,
  estimateMessages,
  FLUSH_NOTE,
  identifiersIn,
  renderSpan,
  SUMMARY_INSTRUCTIONS,
  recentBoundary,
} from "./compaction-text.js";
import { toChatMessages } from "./transcript.js";

/** Tools whose results can be produced again by running them again. */
export const REPLAYABLE_TOOLS: ReadonlySet<string> = new Set([
  "read_file",
  "list_files",
  "memory_search",
  "memory_get",
  "skill",
]);

/** Options of {@link Compactor}. */
export interface CompactorOptions {
  router: ModelAccess;
  /** The events of a session since its last compaction (and the compaction event). */
  load(sessionKey: string, sessionId: string): Promise<TranscriptEvent[]>;
  workspaceDir: string;
  /** The context window of the model in use, in tokens. */
  contextWindow(sessionKey: string): number;
  /** Tokens of every request besides system and messages (tool schemas, the answer's room). */
  reserveTokens?: number;
  /** Share of the window past which a turn compacts first; default 0.8. */
  threshold?: number;
  /** Tokens of recent turns kept verbatim; default 20_000 (or a quarter of the window). */
  keepRecentTokens?: number;
  /** A cheaper model for summaries (`provider/model`); default the session's. */
  model?: string | undefined;
  /** Tools of the silent pre-compaction turn (memory_write); default none. */
  memoryTools?: ToolRegistry;
  maxTokens?: number;
  logger?: Logger;
}

/** A compaction's outcome, for logs and tests. */
export interface CompactionReport {
  steps: Array<"clear" | "externalize" | "summarize">;
  tokensBefore: number;
  tokensAfter: number;
  summaryFailed?: string;
}

/** Owns when and how a session's context is compacted (see the file header). */
export class Compactor {
  readonly #o: CompactorOptions;
  /** Sessions whose next turn compacts first (`/compact`). */
  readonly #requested = new Set<string>();
  readonly #counter = new TokenCounter();
  /** The uncorrected estimate of each session's last request, to compare with the provider's count. */
  readonly #lastEstimate = new Map<string, number>();

  constructor(options: CompactorOptions) {
    this.#o = options;
  }

  /** `/compact`: the session's next turn compacts before its first model call. */
  request(sessionKey: string): void {
    this.#requested.add(sessionKey);
  }

  /** The hooks: compact when over the threshold or asked to; on overflow, compact and retry. */
  hooks(): TurnHooks {
    return {
      transformContext: async (context, turn) => {
        const asked = this.#requested.delete(turn.sessionKey);
        return (await this.#maybeCompact(context, turn, asked ? "asked" : false)) ?? context;
      },
      beforeModelCall: async (context, turn) => this.#maybeCompact(context, turn, false),
      onContextOverflow: async (context, _error, turn) => this.#maybeCompact(context, turn, "overflow"),
    };
  }

  /** Compacts when needed or forced (an overflow: to half the threshold; `/compact`: every turn
   * older than the kept ones, however small). The new context, or undefined if unchanged. */
  async #maybeCompact(
    context: TurnContext,
    turn: HookTurn,
    force: false | "overflow" | "asked",
  ): Promise<TurnContext | undefined> {
    const window = Math.max(4_000, this.#o.contextWindow(turn.sessionKey) - (this.#o.reserveTokens ?? 0));
    const threshold = (this.#o.threshold ?? 0.8) * window;
    // The provider's count of the last request corrects the estimates (per session's model).
    const actual = turn.lastInputTokens?.();
    const estimated = this.#lastEstimate.get(turn.sessionKey);
    if (actual !== undefined && estimated !== undefined) this.#counter.observe(estimated, actual);
    let before = Math.ceil(estimateContext(context) * this.#counter.ratio);
    this.#lastEstimate.set(turn.sessionKey, Math.ceil(before / this.#counter.ratio));
    if (this.#lastEstimate.size > 10_000) this.#lastEstimate.clear();
    // Near the threshold the cheap estimate is not enough: count exactly (the tokenizer loads
    // on this first use only).
    if (!force && this.#counter.isNear(before, threshold)) {
      // The messages as JSON: their text and the wire format's structure, counted alike.
      before =
        (await this.#counter.exact(context.system)) +
        (await this.#counter.exact(JSON.stringify(context.messages)));
    }
    if (!force && before <= threshold) return undefined;
    if (!turn.append) return undefined;
    const events = await this.#o.load(turn.sessionKey, turn.sessionId);
    const keep = Math.min(this.#o.keepRecentTokens ?? 20_000, Math.floor(window / 4));
    const report = await this.#compact(events, context, turn, {
      window,
      threshold: force === "asked" ? 0 : force === "overflow" ? threshold * 0.5 : threshold,
      keep,
    });
    if (!report) return undefined;
    const after = await this.#o.load(turn.sessionKey, turn.sessionId);
    const messages = toChatMessages(after);
    // The turn's own volatile block rides on its newest user message: keep it there.
    const next = { ...context, messages: carryVolatile(context.messages, messages) };
    report.report.tokensAfter = estimateContext(next);
    this.#o.logger?.info({ session: turn.sessionKey, ...report.report }, "context compacted");
    return next;
  }

  async #compact(
    events: TranscriptEvent[],
    context: TurnContext,
    turn: HookTurn,
    limits: { window: number; threshold: number; keep: number },
  ): Promise<{ report: CompactionReport } | undefined> {
    const last = lastCompaction(events);
    const live = events.filter(
      (e) => e.payload.type !== "compaction" && (!last || e.id >= last.payload.keepFromId),
    );
    const split = recentBoundary(live, limits.keep);
    const older = live.slice(0, split);
    if (older.length === 0) return undefined;
    const cleared: Record<string, string> = { ...(last?.payload.cleared ?? {}) };
    const steps: CompactionReport["steps"] = [];
    const report: CompactionReport = { steps, tokensBefore: estimateContext(context), tokensAfter: 0 };
    const system = estimateTokensOnce(context.system);
    const size = () => system + estimateMessages(toChatMessages(withCleared(live, cleared)));

    // (a) replayable results: cleared to a note.
    const calls = callsById(older);
    for (const e of older) {
      const p = e.payload;
      if (p.type !== "tool_result" || cleared[p.toolCallId] || !REPLAYABLE_TOOLS.has(p.name)) continue;
      cleared[p.toolCallId] =
        `[cleared to save context: the result of ${p.name}(${calls.get(p.toolCallId) ?? ""}); run it again if you need it]`;
    }
    steps.push("clear");
    // (b) large non-replayable results: saved to a file, a pointer kept.
    if (size() > limits.threshold) {
      for (const e of older) {
        const p = e.payload;
        if (p.type !== "tool_result" || cleared[p.toolCallId] || p.content.length < 2_000) continue;
        const file = await this.#externalize(p.toolCallId, p.content, turn);
        cleared[p.toolCallId] = file
          ? `[${p.name} result (${p.content.length} characters) saved to ${file}; read it with read_file if needed]`
          : `[${p.name} result (${p.content.length} characters) cleared to save context]`;
      }
      steps.push("externalize");
    }
    let summary = last?.payload.summary ?? "";
    let keepFromId = last?.payload.keepFromId ?? live[0]?.id ?? 0;
    // (c) summarize the older turns, after the silent memory turn.
    if (size() > limits.threshold) {
      await this.#flushMemory(context, turn);
      const span = renderSpan(withCleared(older, cleared));
      const made = await this.#summarize(summary, span, turn, limits.window);
      if (made.ok) {
        summary = made.summary;
        keepFromId = live[split]?.id ?? (live.at(-1)?.id ?? 0) + 1;
        steps.push("summarize");
      } else report.summaryFailed = made.reason;
    }
    const payload: TranscriptPayload = {
      type: "compaction",
      summary,
      keepFromId,
      cleared,
      tokensBefore: report.tokensBefore,
    };
    await turn.append?.([payload]);
    return { report };
  }

  /** The silent turn: one model call offered only memory_write; its text is dropped. */
  async #flushMemory(context: TurnContext, turn: HookTurn): Promise<void> {
    const tools = this.#o.memoryTools;
    if (!tools || !turn.acquireModelSlot) return;
    const messages: ChatMessage[] = [...context.messages, { role: "user", content: FLUSH_NOTE }];
    // The turn's chat and asker: the registry's policy decides as for the turn's own calls.
    const who = {
      ...(turn.replyTarget ? { replyTarget: turn.replyTarget } : {}),
      ...(turn.asker ? { asker: turn.asker } : {}),
    };
    const specs = tools.specs(who);
    if (specs.length === 0) return;
    const { calls } = await this.#call({ system: context.system, messages, tools: specs }, turn);
    for (const call of calls.slice(0, 5)) {
      await tools.execute(call.name, call.argumentsJson, {
        workspaceDir: this.#o.workspaceDir,
        sessionKey: turn.sessionKey,
        runId: turn.runId,
        signal: turn.signal,
        ...who,
      });
    }
  }

  async #summarize(
    previous: string,
    span: string,
    turn: HookTurn,
    window: number,
  ): Promise<{ ok: true; summary: string } | { ok: false; reason: string }> {
    // Chunks by token share, so no summary request is itself over the window.
    const chunkTokens = Math.max(2_000, Math.floor(window * 0.4));
    const chunks = chunkByTokens(span, chunkTokens);
    const wanted = identifiersIn(span);
    let reason = "";
    for (let attempt = 1; attempt <= 2; attempt++) {
      const parts: string[] = [];
      let carry = previous;
      for (const chunk of chunks) {
        const missingNote =
          attempt === 2 && reason ? `\n\nA first summary lost these identifiers; keep them: ${reason}` : "";
        const text = await this.#text(
          {
            system: SUMMARY_INSTRUCTIONS,
            messages: [
              {
                role: "user",
                content: `${carry ? `Summary so far:\n${carry}\n\n` : ""}Conversation to add:\n${chunk}${missingNote}`,
              },
            ],
            tools: [],
          },
          turn,
        );
        parts.push(text);
        carry = text;
      }
      const summary = (parts.at(-1) ?? "").trim();
      const audit = auditSummary(summary, wanted);
      if (audit === undefined) return { ok: true, summary };
      reason = audit;
      this.#o.logger?.warn(
        { session: turn.sessionKey, attempt, reason },
        "compaction summary failed its audit",
      );
    }
    return { ok: false, reason };
  }

  async #text(call: { system: string; messages: ChatMessage[]; tools: [] }, turn: HookTurn): Promise<string> {
    return (await this.#call(call, turn)).text;
  }

  async #call(
    call: { system: string; messages: ChatMessage[]; tools: ReturnType<ToolRegistry["specs"]> },
    turn: HookTurn,
  ): Promise<{ text: string; calls: Array<{ name: string; argumentsJson: string }> }> {
    const slot = await turn.acquireModelSlot?.();
    // Bounded by a timeout scaled by size (30 s plus 2 ms a token): a stuck summary must not
    // hold the turn until the watchdog kills it.
    const tokens = estimateTokensOnce(call.system) + estimateMessages(call.messages);
    const signal = AbortSignal.any([
      turn.signal,
      AbortSignal.timeout(Math.min(300_000, 30_000 + tokens * 2)),
    ]);
    let text = "";
    const calls: Array<{ name: string; argumentsJson: string }> = [];
    try {
      const ctx = {
        sessionKey: turn.sessionKey,
        origin: "human" as const,
        runTokens: 0,
        ...(this.#o.model ? { modelOverride: this.#o.model } : {}),
      };
      for await (const e of this.#o.router.stream(
        { ...call, maxTokens: this.#o.maxTokens ?? 4_096 },
        signal,
        ctx,
      ) as AsyncIterable<ProviderEvent>) {
        if (e.type === "text_delta") text += e.text;
        else if (e.type === "attempt_failed") {
          text = "";
          calls.length = 0;
        } else if (e.type === "tool_call") calls.push(e.call);
      }
    } finally {
      slot?.release();
    }
    return { text, calls };
  }

  /** Outside the owner's private chat, into the chat's own folder (the only one it may read). */
  async #externalize(id: string, content: string, turn: HookTurn): Promise<string | undefined> {
    const own = turn.asker && !turn.asker.privateChat ? [chatOutputsDir(turn.sessionKey)] : [];
    const rel = path.join(SAVED_OUTPUTS_DIR, ...own, `compacted-${id.replace(/[^\w.-]/g, "_")}.txt`);
    try {
      await mkdir(path.dirname(path.join(this.#o.workspaceDir, rel)), { recursive: true });
      await writeFile(path.join(this.#o.workspaceDir, rel), content, { flag: "w" });
      return rel;
    } catch (err) {
      this.#o.logger?.warn({ err }, "could not save a compacted tool result");
      return undefined;
    }
  }
}

type CompactionPayload = Extract<TranscriptPayload, { type: "compaction" }>;

function lastCompaction(events: readonly TranscriptEvent[]): { payload: CompactionPayload } | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const p = events[i]?.payload;
    if (p?.type === "compaction") return { payload: p };
  }
  return undefined;
}

function withCleared(events: readonly TranscriptEvent[], cleared: Record<string, string>): TranscriptEvent[] {
  return events.map((e) =>
    e.payload.type === "tool_result" && cleared[e.payload.toolCallId]
      ? { ...e, payload: { ...e.payload, content: cleared[e.payload.toolCallId] as string } }
      : e,
  );
}

function callsById(events: readonly TranscriptEvent[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of events)
    if (e.payload.type === "assistant")
      for (const c of e.payload.toolCalls) out.set(c.id, c.argumentsJson.slice(0, 120));
  return out;
}

/** The newest user message of the old context carried its volatile block: carry it over. */
function carryVolatile(before: readonly ChatMessage[], after: ChatMessage[]): ChatMessage[] {
  const old = [...before].reverse().find((m) => m.role === "user");
  const i = after.map((m) => m.role).lastIndexOf("user");
  if (!old || i < 0) return after;
  const cur = after[i] as Extract<ChatMessage, { role: "user" }>;
  if (!old.content.endsWith(cur.content) || old.content === cur.content) return after;
  const copy = [...after];
  copy[i] = { role: "user", content: old.content };
  return copy;
}
