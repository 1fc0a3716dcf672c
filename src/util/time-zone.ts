/** The agent's timezone, looked up lazily. */

/**
 * `configured` when set, else the machine's zone, looked up at the first call rather than at
 * start: Intl's zone data costs ~8 MB, and a gateway that never needs it should not pay.
 */
export function lazyTimeZone(configured: string | undefined): () => string {
  let machineZone: string | undefined;
  return () => {
    if (configured) return configured;
    machineZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone ?? "UTC";
    return machineZone;
  };
}
