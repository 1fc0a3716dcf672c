/**
 * The one way tests wait: for state, never for time. `until` polls a condition; `untilAdvancing`
 * also moves a ManualClock to each timer the code under test waits on, so its backoffs pass in
 * no time while its I/O (HTTP to a fake, SQLite) runs for real.
 */
import type { ManualClock } from "../../src/util/clock.js";

/** How often the condition is polled; a limit on reaction time, not a wait for something. */
const POLL_MS = 10;

/**
 * Waits for state, not time: polls `check` every 10 ms until it holds, and fails naming `what`
 * after `timeoutMs` (default 10 s).
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  await poll(check, what, timeoutMs, () => new Promise((r) => setTimeout(r, POLL_MS)));
}

/**
 * Like {@link until}, but whenever `check` does not hold yet and a timer is pending on `clock`,
 * moves the clock to the earliest one (`advanceAsync`, so continuations run) instead of waiting:
 * for code that sleeps on the clock between real I/O, such as a retry loop against a fake server.
 * Every timer due before `check` holds fires; use plain `until` and `advance` to stop short of one.
 */
export async function untilAdvancing(
  clock: ManualClock,
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  await poll(check, what, timeoutMs, async () => {
    const dueMs = clock.nextDueMs();
    if (dueMs !== undefined) await clock.advanceAsync(Math.max(0, dueMs - clock.now()));
    else await new Promise((r) => setTimeout(r, POLL_MS));
  });
}

/** Calls `step` until `check` holds; fails naming `what` after `timeoutMs` of real time. */
async function poll(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs: number,
  step: () => Promise<void>,
): Promise<void> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await step();
  }
}
