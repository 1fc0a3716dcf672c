/**
 * Contracts of the context area: what scanning a workspace file reports, and the size limits of
 * a model that token budgets are computed from.
 */

/** Why a line was blocked or characters were removed. A closed set: code may branch on it. */
export type ScanReason =
  | "zero-width characters"
  | "bidirectional override characters"
  | "Unicode tag characters"
  | "prompt injection (instruction override)"
  | "prompt injection (role reassignment)"
  | "prompt injection (fake instructions header)"
  | "prompt injection (chat template token)"
  | "prompt injection (fake role header)"
  | "exfiltration (secrets sent to a URL)"
  | "exfiltration (shell upload of secrets)"
  | "exfiltration (remote script execution)"
  | "exfiltration (image URL carrying data)"
  | "base64 blob";

/** One thing a scan found; `line` counts from 1 in the file as given. */
export interface ScanFinding {
  reason: ScanReason;
  line: number;
}

/** The neutralized text and what was found in it (sorted by line, then reason). */
export interface ScanResult {
  text: string;
  findings: ScanFinding[];
}

/** Token limits of one model. */
export interface ModelLimits {
  /** Tokens of input and output together the model accepts. */
  contextWindow: number;
  /** Tokens the model may generate in one reply. */
  maxOutput: number;
}

/** The limits `limitsFor` resolved; `known` is false when no pattern matched (fallback values). */
export interface ResolvedModelLimits extends ModelLimits {
  known: boolean;
}
