/**
 * Data for a view: loads on mount and when `deps` change, reloads on demand (coalesced: a burst
 * of live events costs one request at a time, plus at most one after it), keeps the last good
 * data while reloading, and aborts what is in flight on unmount.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

/** The state of one load. */
export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** Loads again (now, or right after the load in flight). */
  reload(): void;
}

/** See the file header. `load` receives an AbortSignal tied to the component's life. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  // One state per load generation: a load still in flight after `deps` changed finds its own
  // generation dead and drops its answer.
  const state = useRef({ inFlight: false, again: false, alive: false, controller: new AbortController() });
  const loadRef = useRef(load);
  loadRef.current = load;

  const run = useCallback(() => {
    const s = state.current;
    if (!s.alive) return;
    if (s.inFlight) {
      s.again = true;
      return;
    }
    s.inFlight = true;
    setLoading(true);
    loadRef
      .current(s.controller.signal)
      .then(
        (value) => {
          if (!s.alive) return;
          setData(value);
          setError(undefined);
        },
        (err: unknown) => {
          if (!s.alive) return;
          setError(err instanceof Error ? err : new Error(String(err)));
        },
      )
      .finally(() => {
        s.inFlight = false;
        if (!s.alive) return;
        setLoading(false);
        if (s.again) {
          s.again = false;
          run();
        }
      })
      .catch(() => {});
  }, []);

  useEffect(() => {
    const s = { inFlight: false, again: false, alive: true, controller: new AbortController() };
    state.current = s;
    setData(undefined);
    setError(undefined);
    run();
    return () => {
      s.alive = false;
      s.controller.abort();
    };
  }, deps);

  return { data, error, loading, reload: run };
}
