/**
 * The pending approvals of `tools.exec.approval: ask`: the reply syntax, and each rule of
 * deciding (same session and sender, once, expiry) on a manual clock.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_APPROVAL_TTL_MS,
  ExecApprovals,
  OWNER_APPROVAL_TTL_MS,
  parseApprovalReply,
} from "../../../../src/harness/tools/exec/exec-approvals.js";
import { ManualClock } from "../../../../src/util/clock.js";

const filed = { sessionKey: "s1", senderId: "alice", command: "rm -rf /x", cwd: "/ws", rule: "rm" };

describe("parseApprovalReply", () => {
  it("reads /approve and /deny with an id, as the whole message", () => {
    expect(parseApprovalReply("/approve ap-0123abcd")).toEqual({ verb: "approve", id: "ap-0123abcd" });
    expect(parseApprovalReply("  /DENY@my_bot AP-0123ABCD \n")).toEqual({ verb: "deny", id: "ap-0123abcd" });
  });

  it("reads them without the slash too: Slack takes a leading / as a slash command of its own", () => {
    expect(parseApprovalReply("approve ap-0123abcd")).toEqual({ verb: "approve", id: "ap-0123abcd" });
    expect(parseApprovalReply("Deny ap-0123abcd")).toEqual({ verb: "deny", id: "ap-0123abcd" });
  });

  it("ignores anything else: no id, a malformed id, more words, a quote", () => {
    for (const text of [
      "/approve",
      "/approve 123",
      "/approve ap-0123abcd please",
      "ok /approve ap-0123abcd",
      "approve it: ap-0123abcd",
    ])
      expect(parseApprovalReply(text), text).toBeUndefined();
  });
});

describe("ExecApprovals", () => {
  it("files a request with a typeable id and a 10 min expiry", () => {
    const clock = new ManualClock(1_000);
    const approvals = new ExecApprovals({ clock });
    const r = approvals.request(filed);
    expect(r.id).toMatch(/^ap-[0-9a-f]{8}$/);
    expect(r.expiresAt).toBe(1_000 + DEFAULT_APPROVAL_TTL_MS);
    expect(approvals.ttlMinutes).toBe(10);
    expect(approvals.size).toBe(1);
  });

  it("approves once, for its own session and sender only", () => {
    const approvals = new ExecApprovals({ clock: new ManualClock() });
    const r = approvals.request(filed);
    const reply = { verb: "approve" as const, id: r.id };
    expect(approvals.decide(reply, { sessionKey: "s2", senderId: "alice" })).toEqual({
      type: "unknown",
      id: r.id,
    });
    expect(approvals.decide(reply, { sessionKey: "s1", senderId: "bob" })).toEqual({
      type: "unknown",
      id: r.id,
    });
    expect(approvals.decide(reply, { sessionKey: "s1", senderId: "alice" })).toEqual({
      type: "approved",
      request: r,
    });
    expect(approvals.decide(reply, { sessionKey: "s1", senderId: "alice" }).type).toBe("unknown");
    expect(approvals.size).toBe(0);
  });

  it("a denial ends the request", () => {
    const approvals = new ExecApprovals({ clock: new ManualClock() });
    const r = approvals.request(filed);
    expect(approvals.decide({ verb: "deny", id: r.id }, filed).type).toBe("denied");
    expect(approvals.decide({ verb: "approve", id: r.id }, filed).type).toBe("unknown");
  });

  it("expires after ttlMs (a late reply is told so), and is forgotten a TTL later", () => {
    const clock = new ManualClock();
    const approvals = new ExecApprovals({ clock, ttlMs: 60_000 });
    const late = approvals.request(filed);
    const forgotten = approvals.request(filed);
    clock.advance(60_000);
    expect(approvals.size).toBe(2);
    clock.advance(1);
    expect(approvals.size).toBe(0);
    expect(approvals.decide({ verb: "approve", id: late.id }, filed)).toEqual({
      type: "expired",
      request: late,
    });
    clock.advance(60_000);
    expect(approvals.decide({ verb: "approve", id: forgotten.id }, filed).type).toBe("unknown");
  });

  it("refuses a ttlMs that is not a positive integer, naming the field", () => {
    expect(() => new ExecApprovals({ clock: new ManualClock(), ttlMs: 0 })).toThrow(
      "ExecApprovalsOptions.ttlMs must be a positive integer, got 0",
    );
  });
});

describe("ExecApprovals, an assignment owner's request", () => {
  const owners = { ...filed, senderId: null, toolCallId: "call_1" };

  it("is decided by the owner's answer to that call: yes-like approves, anything else denies, once", () => {
    const approvals = new ExecApprovals({ clock: new ManualClock() });
    for (const [answer, type] of [
      ["yes", "approved"],
      ["OK, do it", "approved"],
      ["Go ahead.", "approved"],
      ["no", "denied"],
      ["yesterday's folder instead", "denied"],
      ["", "denied"],
    ] as const) {
      const r = approvals.request(owners);
      expect(approvals.decideAnswer("s1", "call_1", answer), answer).toEqual({ type, request: r });
      expect(approvals.decideAnswer("s1", "call_1", answer)).toBeUndefined();
    }
  });

  it("is not found from another session or call, and no chat sender can /approve it", () => {
    const approvals = new ExecApprovals({ clock: new ManualClock() });
    const r = approvals.request(owners);
    expect(approvals.decideAnswer("s2", "call_1", "yes")).toBeUndefined();
    expect(approvals.decideAnswer("s1", "call_2", "yes")).toBeUndefined();
    expect(
      approvals.decide({ verb: "approve", id: r.id }, { sessionKey: "s1", senderId: "alice" }).type,
    ).toBe("unknown");
    expect(approvals.decideAnswer("s1", "call_1", "yes")?.type).toBe("approved");
  });

  it("stays open for a week (past the question's own expiry), not the chat's 10 minutes", () => {
    const clock = new ManualClock();
    const approvals = new ExecApprovals({ clock });
    approvals.request(owners);
    clock.advance(OWNER_APPROVAL_TTL_MS);
    expect(approvals.decideAnswer("s1", "call_1", "yes")?.type).toBe("approved");
    approvals.request(owners);
    clock.advance(OWNER_APPROVAL_TTL_MS + 1);
    expect(approvals.decideAnswer("s1", "call_1", "yes")?.type).toBe("expired");
  });
});
