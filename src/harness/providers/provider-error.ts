/** Every provider failure, normalized to a kind that drives retry and failover. */
import type { ProviderErrorKind } from "./types.js";

/** Kinds worth retrying on the same provider after a wait. */
export const RETRYABLE_KINDS: ReadonlySet<ProviderErrorKind> = new Set([
  "rate_limit",
  "overloaded",
  "timeout",
  "network",
]);

/** One model a call tried and how each of its attempts failed (distinct kinds, in order). */
export interface TriedModel {
  /** `provider/model`. */
  ref: string;
  kinds: ProviderErrorKind[];
}

/** Every provider failure, normalized. */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  /** Server-requested wait before retrying, when it gave one. */
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;
  readonly provider: string | undefined;
  readonly requestId: string | undefined;
  /**
   * Set by the model router on the failure of a call that tried more than one model: each model
   * with its failure kinds, in the order tried (so the person is told about every one).
   */
  readonly tried: readonly TriedModel[] | undefined;
  constructor(
    kind: ProviderErrorKind,
    message: string,
    options: {
      cause?: unknown;
      retryAfterMs?: number;
      status?: number;
      provider?: string;
      requestId?: string;
      tried?: readonly TriedModel[];
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "ProviderError";
    this.kind = kind;
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
    this.provider = options.provider;
    this.requestId = options.requestId;
    this.tried = options.tried;
  }
  get retryable(): boolean {
    return RETRYABLE_KINDS.has(this.kind);
  }
}
