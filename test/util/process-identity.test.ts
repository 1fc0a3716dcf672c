/**
 * A process is judged by its state and start time, not by its pid: a SIGKILLed process that no
 * one has reaped yet (a zombie) is dead although `kill(pid, 0)` still finds it, and a pid that
 * another process got is not the process that was recorded.
 */
import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import {
  type ProcSource,
  type ProcessIdentity,
  parseProcStat,
  processLiveness,
  readProcStat,
  selfIdentity,
  systemProc,
} from "../../src/util/process-identity.js";
import { until } from "../helpers/until.js";

/** A stat line as Linux writes it, for `comm`, `state` and `starttime` (field 22). */
function statLine(pid: number, comm: string, state: string, startTicks: number): string {
  const middle = Array.from({ length: 18 }, (_, i) => String(i + 4)).join(" "); // fields 4..21
  return `${pid} (${comm}) ${state} ${middle} ${startTicks} 3133440 352\n`;
}

/** A /proc with the given stat lines. */
function fakeProc(stats: Record<number, string>, over: Partial<ProcSource> = {}): ProcSource {
  return {
    readFile: (path) => {
      const pid = Number(/^\/proc\/(\d+)\/stat$/.exec(path)?.[1]);
      const line = stats[pid];
      if (line === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: "ENOENT" });
      return line;
    },
    readLink: () => "pid:[1]",
    hostname: () => "h1",
    signalZero: () => true,
    ...over,
  };
}

const SELF: ProcessIdentity = { pid: 1, host: "h1", bootId: "b1", pidNamespace: "pid:[1]", startTicks: 5 };
const other = (over: Partial<ProcessIdentity> = {}): ProcessIdentity => ({
  pid: 700,
  host: "h1",
  bootId: "b1",
  pidNamespace: "pid:[1]",
  startTicks: 1000,
  ...over,
});

describe("parseProcStat", () => {
  it("reads state and start time after the last parenthesis, whatever the command name holds", () => {
    expect(parseProcStat(statLine(7, "node", "S", 248850))).toEqual({ state: "S", startTicks: 248850 });
    expect(parseProcStat(statLine(7, "a) Z (b", "R", 12))).toEqual({ state: "R", startTicks: 12 });
    expect(parseProcStat("garbage")).toBeUndefined();
    expect(parseProcStat("7 (x) S 1 2")).toBeUndefined();
  });
});

describe("processLiveness", () => {
  it("alive: the same process, running or stopped", () => {
    expect(processLiveness(other(), SELF, fakeProc({ 700: statLine(700, "node", "S", 1000) }))).toBe("alive");
    expect(processLiveness(other(), SELF, fakeProc({ 700: statLine(700, "node", "T", 1000) }))).toBe("alive");
  });

  it("dead: gone, a zombie, or its pid reused by a later process", () => {
    expect(processLiveness(other(), SELF, fakeProc({}))).toBe("dead");
    expect(processLiveness(other(), SELF, fakeProc({ 700: statLine(700, "node", "Z", 1000) }))).toBe("dead");
    expect(processLiveness(other(), SELF, fakeProc({ 700: statLine(700, "bash", "S", 2000) }))).toBe("dead");
  });

  it("dead: recorded in an earlier boot of this machine", () => {
    const proc = fakeProc({ 700: statLine(700, "node", "S", 1000) });
    expect(processLiveness(other({ bootId: "b0" }), SELF, proc)).toBe("dead");
  });

  it("unknown: another machine or pid namespace cannot be judged from here", () => {
    const proc = fakeProc({});
    expect(processLiveness(other({ host: "h2" }), SELF, proc)).toBe("unknown");
    expect(processLiveness(other({ pidNamespace: "pid:[2]" }), SELF, proc)).toBe("unknown");
  });

  it("without /proc, the pid alone", () => {
    const bare: ProcessIdentity = { ...SELF, bootId: null, pidNamespace: null, startTicks: null };
    const proc = (exists: boolean) => fakeProc({}, { signalZero: () => exists });
    expect(processLiveness(other({ bootId: null, pidNamespace: null }), bare, proc(true))).toBe("alive");
    expect(processLiveness(other({ bootId: null, pidNamespace: null }), bare, proc(false))).toBe("dead");
  });
});

describe("a real zombie", () => {
  const children: number[] = [];
  afterAll(() => {
    for (const pid of children)
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
  });

  it("is dead although kill(pid, 0) still finds it", async () => {
    // sh starts a child, then becomes `sleep`, which never reaps it: the child's exit leaves a
    // zombie, as under a container init that does not reap.
    const parent = spawn("sh", ["-c", "sleep 30 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    if (parent.pid) children.push(parent.pid);
    const pid = await new Promise<number>((resolve) =>
      parent.stdout.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    children.push(pid);
    const recorded = { ...selfIdentity(), pid, startTicks: readProcStat(pid)?.startTicks ?? null };
    expect(processLiveness(recorded)).toBe("alive");
    process.kill(pid, "SIGKILL");
    await until(() => readProcStat(pid)?.state === "Z", "the child to become a zombie", 5_000);
    expect(systemProc.signalZero(pid)).toBe(true); // what fooled the pid check
    expect(processLiveness(recorded)).toBe("dead");
  });
});
