/**
 * How a model call that the router gives up on fails: the last failure, or "every profile is
 * cooling" — and, when the call tried more than one model of the chain, each model tried with
 * how it failed, so the person is not told only about the last one.
 */
import { ProviderError, type TriedModel } from "../providers/provider-error.js";
import type { ProviderErrorKind } from "../providers/types.js";
import type { RouteEntry } from "./session-routes.js";

/** Owns the record of the models one call tried and how each failed. */
export class TriedModels {
  readonly #tried = new Map<string, ProviderErrorKind[]>();

  /** An attempt on `ref` failed with `kind`. */
  failed(ref: string, kind: ProviderErrorKind): void {
    const kinds = this.#tried.get(ref) ?? [];
    if (!kinds.includes(kind)) kinds.push(kind);
    this.#tried.set(ref, kinds);
  }

  /** `error` as the call's final failure: with `tried` set when more than one model was tried. */
  final(error: ProviderError): ProviderError {
    if (this.#tried.size < 2) return error;
    const tried: TriedModel[] = [...this.#tried].map(([ref, kinds]) => ({ ref, kinds: [...kinds] }));
    return new ProviderError(error.kind, error.message, {
      cause: error.cause,
      tried,
      ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
      ...(error.status !== undefined ? { status: error.status } : {}),
      ...(error.provider !== undefined ? { provider: error.provider } : {}),
      ...(error.requestId !== undefined ? { requestId: error.requestId } : {}),
    });
  }
}

/** Every profile is cooling past the wait budget: the last failure, or a plain reason. */
export function exhausted(
  last: ProviderError | undefined,
  entries: RouteEntry[],
  soonest: number,
  now: number,
): ProviderError {
  const secs = Number.isFinite(soonest) ? Math.ceil((soonest - now) / 1000) : undefined;
  const models = entries.map((e) => e.ref).join(", ");
  const message = `every auth profile of ${models} is cooling down${secs !== undefined ? ` (the first frees in ${secs} s)` : ""}${last ? `; last error: ${last.message}` : ""}`;
  return new ProviderError(last?.kind ?? "rate_limit", message, {
    cause: last,
    ...(last?.provider ? { provider: last.provider } : {}),
    ...(secs !== undefined ? { retryAfterMs: secs * 1000 } : {}),
  });
}
