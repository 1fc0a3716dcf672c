/**
 * The run's few ways of waiting: for an event (the first one a test picks), for a timer, each
 * ending when its AbortSignal aborts, so no wait outlives the run.
 */

/** Why a wait ended early. */
export class WaitAborted extends Error {
  readonly kind = "aborted";
  constructor(reason: unknown) {
    super(typeof reason === "string" ? reason : "wait aborted", { cause: reason });
  }
}

/**
 * Resolves with the first value `pick` returns for an event from `subscribe` (the listener is
 * called synchronously by the source, so the caller runs in the same turn of the event loop);
 * rejects with WaitAborted when `signal` aborts.
 */
export function firstEvent<E, R>(
  subscribe: (listener: (event: E) => void) => () => void,
  pick: (event: E) => R | undefined,
  signal: AbortSignal,
): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    if (signal.aborted) return reject(new WaitAborted(signal.reason));
    const onAbort = () => {
      unsubscribe();
      reject(new WaitAborted(signal.reason));
    };
    const unsubscribe = subscribe((event) => {
      const value = pick(event);
      if (value === undefined) return;
      unsubscribe();
      signal.removeEventListener("abort", onAbort);
      resolve(value);
    });
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Resolves after `ms`; rejects with WaitAborted when `signal` aborts first. */
export function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new WaitAborted(signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new WaitAborted(signal.reason));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** A signal that aborts after `ms` or with `parent`, whichever is first. */
export function limited(parent: AbortSignal, ms: number): AbortSignal {
  return AbortSignal.any([parent, AbortSignal.timeout(ms)]);
}
