/**
 * Resolves after `ms`, or as soon as `signal` aborts (it never rejects: the caller checks
 * `signal.aborted` when it cares why it woke). The timer and the listener are always removed.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
