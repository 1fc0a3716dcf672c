/**
 * A view's buttons: runs one admin write, says what happened, and on a 404 (the thing is gone:
 * a job deleted meanwhile) says so by name and refreshes the list.
 */
import { useState } from "preact/hooks";
import { ApiError } from "../lib/api.js";

/** What an action left to show. */
export type ActionNotice = { kind: "ok" | "error"; text: string } | undefined;

/** The action runner of one view. */
export interface Actions {
  notice: ActionNotice;
  /** True while an action runs (buttons are disabled). */
  busy: boolean;
  /**
   * Runs `fn` for the thing called `what` ("job 12", "profile openai/main"); `done` is the line
   * shown on success. Any outcome calls `refresh`.
   */
  run(what: string, fn: () => Promise<unknown>, done: string): void;
}

/** See the file header. */
export function useActions(refresh: () => void): Actions {
  const [notice, setNotice] = useState<ActionNotice>(undefined);
  const [busy, setBusy] = useState(false);
  const run = (what: string, fn: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setNotice(undefined);
    fn()
      .then(
        () => setNotice({ kind: "ok", text: done }),
        (err: unknown) => {
          const message = err instanceof Error ? err.message : String(err);
          if (err instanceof ApiError && err.status === 404)
            setNotice({ kind: "error", text: `${what} is gone (${message}); the list was refreshed.` });
          else setNotice({ kind: "error", text: `${what}: ${message}` });
        },
      )
      .finally(() => {
        setBusy(false);
        refresh();
      })
      .catch(() => {});
  };
  return { notice, busy, run };
}
