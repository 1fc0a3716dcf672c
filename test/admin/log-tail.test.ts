/**
 * LogTail: the logger's tap keeps the newest lines (a ring), parses them when read, filters by
 * level, and tells listeners of each new line; a line that is not JSON is kept as its text.
 */
import { describe, expect, it } from "vitest";
import { LogTail, levelRank, parseLine } from "../../src/admin/log-tail.js";
import { createLogger } from "../../src/util/logger.js";

describe("LogTail", () => {
  it("gets every line the logger writes, redacted, with its level, name, message and fields", () => {
    const tail = new LogTail();
    const logger = createLogger({
      level: "debug",
      format: "json",
      destination: { write: () => {} },
      tap: tail,
    });
    logger.child({ name: "gateway.admin" }).info({ job: "digest", token: "s3cret" }, "ran a job");
    logger.debug("fine detail");
    const lines = tail.lines();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ seq: 1, level: "info", name: "gateway.admin", msg: "ran a job" });
    expect(JSON.parse(lines[0]?.fields ?? "{}")).toEqual({ job: "digest", token: "[REDACTED]" });
    expect(tail.lines("info").map((l) => l.msg)).toEqual(["ran a job"]);
  });

  it("keeps only the newest `capacity` lines, oldest first, and at most `limit`", () => {
    const tail = new LogTail(3);
    for (let i = 1; i <= 5; i++) tail.write(`{"level":30,"time":${i},"msg":"m${i}"}\n`);
    expect(tail.lines().map((l) => l.msg)).toEqual(["m3", "m4", "m5"]);
    expect(tail.lines("trace", 2).map((l) => [l.seq, l.msg])).toEqual([
      [4, "m4"],
      [5, "m5"],
    ]);
  });

  it("tells each listener of each new line until it unsubscribes", () => {
    const tail = new LogTail();
    const seen: string[] = [];
    const off = tail.subscribe((l) => seen.push(l.msg));
    tail.write('{"level":40,"msg":"a"}\n{"level":50,"msg":"b"}\n');
    off();
    tail.write('{"level":30,"msg":"c"}\n');
    expect(seen).toEqual(["a", "b"]);
  });

  it("keeps a line that is not JSON as its text, and rejects a bad capacity", () => {
    expect(parseLine(7, "plain words")).toMatchObject({
      seq: 7,
      level: "info",
      msg: "plain words",
      fields: "{}",
    });
    expect(levelRank("warn")).toBe(40);
    expect(levelRank("nonsense")).toBe(30);
    expect(() => new LogTail(0)).toThrow("LogTail capacity must be an integer ≥ 1, got 0");
  });
});
