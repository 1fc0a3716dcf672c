/**
 * CPU time of another process read from /proc (Linux): the sum of its threads' run time from
 * /proc/<pid>/task/<tid>/schedstat (ns, exact), its main (JavaScript) thread's alone, and
 * utime+stime from /proc/<pid>/stat (clock ticks of 10 ms) as a coarse cross-check.
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_S = 100; // USER_HZ: Linux reports utime/stime in 1/100 s

/** One reading of a process's CPU counters. */
export interface CpuSample {
  /** Sum of every thread's run time (ns): the JavaScript thread, libuv's pool, GC helpers. */
  runNs: number;
  /** The main (JavaScript) thread's run time (ns). */
  mainNs: number;
  /** utime + stime of the process (clock ticks). */
  ticks: number;
}

/** CPU spent between two samples, in ms. */
export interface CpuSpent {
  /** Every thread (ms). */
  ms: number;
  /** The main thread (ms). */
  mainMs: number;
  /** utime + stime (ms, 10 ms resolution). */
  ticksMs: number;
}

/** Reads `pid`'s counters now. */
export function cpuOf(pid: number): CpuSample {
  let runNs = 0;
  let mainNs = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      runNs += ns;
      if (tid === String(pid)) mainNs = ns;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { runNs, mainNs, ticks: Number(fields[11]) + Number(fields[12]) };
}

/** What `pid` spent since `before`. */
export function cpuSince(pid: number, before: CpuSample): CpuSpent {
  const after = cpuOf(pid);
  return {
    ms: (after.runNs - before.runNs) / 1e6,
    mainMs: (after.mainNs - before.mainNs) / 1e6,
    ticksMs: (after.ticks - before.ticks) * (1000 / TICKS_PER_S),
  };
}
