/**
 * Who a process is, beyond its pid, and whether it still runs: a pid alone lies. A SIGKILLed
 * process stays a zombie (`Z`) until its parent reaps it — for good under a container init that
 * never reaps — and `kill(pid, 0)` calls a zombie alive; a pid is also reused by an unrelated
 * process. So a process is named by its host, the kernel's boot id, its pid namespace, its pid
 * and its start time (clock ticks since boot, field 22 of `/proc/<pid>/stat`), and judged by its
 * state and start time. Linux; elsewhere the pid check is all there is.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

/** A process as another process can recognise it later. */
export interface ProcessIdentity {
  pid: number;
  /** `os.hostname()`. */
  host: string;
  /** The kernel's boot id (`/proc/sys/kernel/random/boot_id`); null where unknown. */
  bootId: string | null;
  /** The pid namespace (`/proc/self/ns/pid`, e.g. `pid:[4026531836]`); null where unknown. */
  pidNamespace: string | null;
  /** Start time in clock ticks since boot (`/proc/<pid>/stat` field 22); null where unknown. */
  startTicks: number | null;
}

/**
 * `alive`: it runs (or is stopped: it may run again). `dead`: it exited, is a zombie, or its pid
 * now names another process. `unknown`: it is not ours to judge (another host, container or pid
 * namespace), so it must be treated as alive.
 */
export type Liveness = "alive" | "dead" | "unknown";

/** Where the proc file system is (a test seam). */
export interface ProcSource {
  readFile(path: string): string;
  readLink(path: string): string;
  hostname(): string;
  /** `kill(pid, 0)` without /proc: true when it exists (EPERM included). */
  signalZero(pid: number): boolean;
}

/** The real /proc and process table. */
export const systemProc: ProcSource = {
  readFile: (path) => readFileSync(path, "utf8"),
  readLink: (path) => readlinkSync(path),
  hostname,
  signalZero: (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "EPERM";
    }
  },
};

/** The state letter and start ticks of `/proc/<pid>/stat`; undefined when there is no such process. */
export function readProcStat(
  pid: number,
  proc: ProcSource = systemProc,
): { state: string; startTicks: number } | undefined {
  let text: string;
  try {
    text = proc.readFile(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  return parseProcStat(text);
}

/**
 * Parses one `/proc/<pid>/stat` line. The command name (field 2) is in parentheses and may hold
 * spaces and parentheses itself, so the fields are counted from the last `)`: state is field 3,
 * start time field 22.
 */
export function parseProcStat(text: string): { state: string; startTicks: number } | undefined {
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const state = fields[0];
  const startTicks = Number(fields[19]);
  if (!state || !Number.isSafeInteger(startTicks)) return undefined;
  return { state, startTicks };
}

/** This process's identity (read once: none of it changes while the process lives). */
export function selfIdentity(proc: ProcSource = systemProc): ProcessIdentity {
  if (proc === systemProc && cachedSelf) return cachedSelf;
  const optional = <T>(read: () => T): T | null => {
    try {
      return read();
    } catch {
      return null;
    }
  };
  const identity: ProcessIdentity = {
    pid: process.pid,
    host: proc.hostname(),
    bootId: optional(() => proc.readFile("/proc/sys/kernel/random/boot_id").trim() || null),
    pidNamespace: optional(() => proc.readLink("/proc/self/ns/pid")),
    startTicks: readProcStat(process.pid, proc)?.startTicks ?? null,
  };
  if (proc === systemProc) cachedSelf = identity;
  return identity;
}
let cachedSelf: ProcessIdentity | undefined;

/**
 * Whether the process `other` names still runs, judged from this process (see {@link Liveness}).
 * Same host, boot and pid namespace: a missing `/proc/<pid>`, a zombie (`Z`) or dead (`X`)
 * state, or another start time means dead. Another boot of this host means dead (everything
 * of that boot is gone). Another host or pid namespace means unknown. Without /proc (not
 * Linux) only the pid is checked.
 */
export function processLiveness(
  other: ProcessIdentity,
  self: ProcessIdentity = selfIdentity(),
  proc: ProcSource = systemProc,
): Liveness {
  if (other.host !== self.host) return "unknown";
  if (other.bootId !== null && self.bootId !== null && other.bootId !== self.bootId) return "dead";
  if (other.pidNamespace !== self.pidNamespace) return "unknown";
  if (self.startTicks === null) return proc.signalZero(other.pid) ? "alive" : "dead";
  const stat = readProcStat(other.pid, proc);
  if (!stat || stat.state === "Z" || stat.state === "X" || stat.state === "x") return "dead";
  if (other.startTicks !== null && stat.startTicks !== other.startTicks) return "dead";
  return "alive";
}
