/**
 * A real store (SQLite, in memory) whose chosen methods fail on demand with a StoreError, for
 * tests of what the gateway does when the database fails at a given step.
 */
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../src/store/types.js";
import { StoreError } from "../../src/store/store-error.js";

/** A store plus the switch: `failing.add("inbox.sessionsWithQueued")` makes that method fail. */
export interface FailingStore {
  store: Store;
  failing: Set<string>;
  /** Calls that failed, by name. */
  failures: string[];
}

/** Wraps a fresh in-memory store (see the file header). */
export function failingStore(): FailingStore {
  const real = openSqliteStore({ path: ":memory:" });
  const failing = new Set<string>();
  const failures: string[] = [];
  const wrap = <T extends object>(target: T, prefix: string): T =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        const value: unknown = Reflect.get(obj, prop, receiver);
        if (typeof value !== "function") return value;
        const name = `${prefix}${String(prop)}`;
        return (...args: unknown[]) => {
          if (failing.has(name)) {
            failures.push(name);
            return Promise.reject(new StoreError("disk_full", `${name}: the disk is full (test)`));
          }
          return (value as (...a: unknown[]) => unknown).apply(obj, args);
        };
      },
    });
  const store = new Proxy(real, {
    get(obj, prop, receiver) {
      const value: unknown = Reflect.get(obj, prop, receiver);
      if (typeof value === "object" && value !== null) return wrap(value, `${String(prop)}.`);
      if (typeof value === "function") {
        const name = String(prop);
        return (...args: unknown[]) => {
          if (failing.has(name)) {
            failures.push(name);
            return Promise.reject(new StoreError("disk_full", `${name}: the disk is full (test)`));
          }
          return (value as (...a: unknown[]) => unknown).apply(obj, args);
        };
      }
      return value;
    },
  });
  return { store, failing, failures };
}
