/**
 * Runs the enabled JIT rules on one snapshot and returns the lines for that model call only:
 * at most `maxLines`, in rule (priority) order, `once` rules at most once per run. The caller
 * owns the per-run `fired` set and puts the lines in the call's volatile part, never the cached
 * prefix.
 */
import { BUILTIN_JIT_RULES } from "./builtin-rules.js";
import { JitError } from "./jit-error.js";
import type { JitFiring, JitRule, JitSnapshot } from "./types.js";

/** The longest line a rule may add; longer lines are cut (with an ellipsis). */
export const JIT_MAX_LINE_CHARS = 159;

/** Options of a `JitEngine`. */
export interface JitEngineOptions {
  /** The rules, highest priority first. Default: `BUILTIN_JIT_RULES`. */
  rules?: readonly JitRule[];
  /** Ids of rules to skip (config `agent.jit.disable`); each must name a rule. Default: none. */
  disable?: readonly string[];
  /** Most lines added to one model call, a positive integer. Default: 2. */
  maxLines?: number;
}

/** Keeps a line to one line of at most `JIT_MAX_LINE_CHARS` characters. */
function oneLine(text: string): string {
  const flat = /[\r\n]/.test(text) ? text.replace(/\s*[\r\n]+\s*/g, " ").trim() : text;
  return flat.length <= JIT_MAX_LINE_CHARS ? flat : `${flat.slice(0, JIT_MAX_LINE_CHARS - 1)}…`;
}

/** Owns the enabled rules in priority order and the per-call cap; holds no run state. */
export class JitEngine {
  readonly #rules: readonly JitRule[];
  readonly #maxLines: number;

  /** Throws `JitError` for a duplicate rule id, an unknown id in `disable`, or a bad `maxLines`. */
  constructor(options: JitEngineOptions = {}) {
    const rules = options.rules ?? BUILTIN_JIT_RULES;
    const ids = new Set<string>();
    for (const rule of rules) {
      if (ids.has(rule.id)) throw new JitError("duplicate_rule", `JIT rule id "${rule.id}" is used twice`);
      ids.add(rule.id);
    }
    const disable = new Set(options.disable ?? []);
    for (const id of disable) {
      if (!ids.has(id)) {
        throw new JitError(
          "unknown_rule",
          `jit.disable names "${id}", which is not a rule (known: ${[...ids].join(", ")})`,
        );
      }
    }
    const maxLines = options.maxLines ?? 2;
    if (!Number.isInteger(maxLines) || maxLines < 1) {
      throw new JitError("bad_option", `jit maxLines is ${String(maxLines)}; expected a positive integer`);
    }
    this.#rules = rules.filter((r) => !disable.has(r.id));
    this.#maxLines = maxLines;
  }

  /** The ids of the enabled rules, in priority order. */
  get ruleIds(): readonly string[] {
    return this.#rules.map((r) => r.id);
  }

  /**
   * The lines for the model call `snapshot` describes, highest priority first, at most
   * `maxLines`. Skips `once` rules already in `firedThisRun` and adds every returned rule's id
   * to it (a once-rule cut by the cap stays unfired and may speak on a later call).
   * Returns a shared empty array when nothing fires (no allocation on the quiet path).
   */
  evaluate(snapshot: JitSnapshot, firedThisRun: Set<string>): readonly JitFiring[] {
    let out: JitFiring[] | undefined;
    for (const rule of this.#rules) {
      if (rule.once && firedThisRun.has(rule.id)) continue;
      const line = rule.evaluate(snapshot);
      if (line === undefined || line.length === 0) continue;
      out ??= [];
      out.push({ ruleId: rule.id, line: oneLine(line) });
      firedThisRun.add(rule.id);
      if (out.length >= this.#maxLines) break;
    }
    return out ?? NONE;
  }
}

const NONE: readonly JitFiring[] = Object.freeze([]);
