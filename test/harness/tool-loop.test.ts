/** Tool-loop detection: repeats with the same result warn then stop; changing results are progress; A-B-A-B; unknown tools. */
import { describe, expect, it } from "vitest";
import { ToolLoopDetector, ToolLoopError } from "../../src/harness/tool-loop.js";

const call = (name: string, args: object = {}) => ({ id: "c", name, argumentsJson: JSON.stringify(args) });
const ok = (content: string) => ({ content, isError: false });

describe("ToolLoopDetector", () => {
  it("warns at the 5th identical call and result, ends the run at the 10th", () => {
    const d = new ToolLoopDetector();
    const outs = Array.from({ length: 10 }, () =>
      d.observe("r1", call("read_file", { path: "a.md", from: 1 }), ok("same")),
    );
    expect(outs.slice(0, 4).every((o) => o.content === "same" && !o.endRun)).toBe(true);
    expect(outs[4]?.content).toMatch(
      /^same\n\n\[loop warning: you called read_file with these arguments 5 times/,
    );
    expect(outs[9]?.endRun).toBeInstanceOf(ToolLoopError);
    expect(outs[9]?.endRun?.message).toBe(
      "called read_file 10 times with the same arguments and the same result",
    );
  });

  it("is progress-aware: the same call whose result changes is no loop; argument order does not matter", () => {
    const d = new ToolLoopDetector();
    for (let i = 0; i < 20; i++)
      expect(d.observe("r1", call("poll", { job: 1 }), ok(`step ${i}`)).endRun).toBeUndefined();
    const a = d.observe("r2", { id: "1", name: "f", argumentsJson: '{"a":1,"b":2}' }, ok("x"));
    const b = d.observe("r2", { id: "2", name: "f", argumentsJson: '{"b":2,"a":1}' }, ok("x"));
    expect([a.content, b.content]).toEqual(["x", "x"]);
    for (let i = 0; i < 3; i++) d.observe("r2", call("f", { b: 2, a: 1 }), ok("x"));
    expect(d.observe("r2", call("f", { a: 1, b: 2 }), ok("x")).content).toMatch(/6 times/);
  });

  it("warns on A-B-A-B with unchanged results and ends at 10 alternating calls", () => {
    const d = new ToolLoopDetector();
    const outs = Array.from({ length: 10 }, (_, i) =>
      d.observe("r1", call(i % 2 ? "b" : "a"), ok(i % 2 ? "B" : "A")),
    );
    expect(outs[2]?.content).toBe("A");
    expect(outs[3]?.content).toMatch(/alternating between the same two tool calls/);
    expect(outs[9]?.endRun?.message).toBe(
      "alternated between the same two tool calls 10 times without progress",
    );
  });

  it("ends the run at the second call of a tool that does not exist; runs are apart; off when disabled", () => {
    const d = new ToolLoopDetector();
    const unknown = { content: 'error (unknown_tool): no tool named "fly"', isError: true };
    expect(d.observe("r1", call("fly"), unknown).endRun).toBeUndefined();
    expect(d.observe("r2", call("fly"), unknown).endRun).toBeUndefined(); // another run
    expect(d.observe("r1", call("fly"), unknown).endRun?.message).toBe(
      'called the tool "fly", which does not exist, 2 times',
    );
    expect(
      new ToolLoopDetector({ enabled: false, warnAt: 5, stopAt: 10, pingPongStopAt: 10 }).hooks(),
    ).toEqual({});
  });
});
