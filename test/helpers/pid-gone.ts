/**
 * Whether a process has stopped running, for tests that check nothing outlived a kill: no such
 * process, or a zombie (or dead) one waiting to be reaped. Reads /proc with the gateway's own
 * reader (src/util/process-identity.ts).
 */
import { readProcStat } from "../../src/util/process-identity.js";

/** True when `pid` no longer runs. */
export function pidGone(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat === undefined || stat.state === "Z" || stat.state === "X";
}
