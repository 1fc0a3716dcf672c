/**
 * Waits for state, not time: polls `check` every 10 ms until it holds, and fails naming `what`
 * after `timeoutMs` (default 10 s).
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
