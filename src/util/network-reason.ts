/** Why a network request failed, in plain words, for messages a person reads. */

/**
 * The plain reason a fetch failed: the system error code (ECONNREFUSED, ENOTFOUND, …) or
 * "no answer within N s" for a timeout of `timeoutMs`.
 */
export function networkReason(err: unknown, timeoutMs?: number): string {
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError"))
    return timeoutMs !== undefined ? `no answer within ${timeoutMs / 1000} s` : "the request was aborted";
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: unknown }).code;
    return typeof code === "string" ? `${code} (${cause.message})` : cause.message;
  }
  return err instanceof Error ? err.message : String(err);
}
