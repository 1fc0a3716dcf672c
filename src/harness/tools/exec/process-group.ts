/**
 * Stopping a command's process group: SIGTERM to the whole group, a grace to exit, SIGKILL to
 * what is left. A process that has exited but not been reaped (a zombie, e.g. a forked child
 * whose shell died first, waiting for init) counts as gone: it runs nothing and holds no pipe.
 */
import { readFile, readdir } from "node:fs/promises";
import type { Clock } from "../../../util/clock.js";

/** Time between two looks at the group while waiting for it to empty. */
const POLL_MS = 25;
/** Longest wait for the group to empty after SIGKILL (the kernel needs a moment, not more). */
const AFTER_KILL_MS = 1_000;

/**
 * Sends `signal` to every process of group `pgid`. Returns false when the group has no process
 * (ESRCH); true otherwise, also when some member may not be signalled (EPERM).
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * True while group `pgid` has a process that is not a zombie. Where /proc cannot be read, any
 * process, zombies included, counts.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  const live = await liveMembers(pgid);
  return live === undefined || live > 0;
}

/**
 * Ends group `pgid`: SIGTERM, then SIGKILL once `graceMs` has passed with a process still
 * alive; resolves when none is (or, should one survive SIGKILL, e.g. in uninterruptible I/O,
 * a second later). Resolves at once when the group is already empty. Never throws.
 */
export async function endGroup(pgid: number, graceMs: number, clock: Clock): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  if (await waitUntilGone(pgid, graceMs, clock)) return;
  signalGroup(pgid, "SIGKILL");
  await waitUntilGone(pgid, AFTER_KILL_MS, clock);
}

/** Polls until the group is gone or `limitMs` has passed; true when it is gone. */
async function waitUntilGone(pgid: number, limitMs: number, clock: Clock): Promise<boolean> {
  const deadline = clock.now() + limitMs;
  for (;;) {
    if (!(await groupAlive(pgid))) return true;
    const leftMs = deadline - clock.now();
    if (leftMs <= 0) return false;
    await clock.sleep(Math.min(POLL_MS, leftMs));
  }
}

/**
 * Processes of group `pgid` that are not zombies (state Z or X in /proc/<pid>/stat), or
 * undefined when /proc cannot be listed.
 */
async function liveMembers(pgid: number): Promise<number | undefined> {
  let pids: string[];
  try {
    pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const states = await Promise.all(pids.map((pid) => memberState(pid, pgid)));
  return states.filter((state) => state !== undefined && state !== "Z" && state !== "X").length;
}

/** The state letter of process `pid` when it belongs to group `pgid`; undefined otherwise or when gone. */
async function memberState(pid: string, pgid: number): Promise<string | undefined> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[2]) === pgid ? fields[0] : undefined;
}
