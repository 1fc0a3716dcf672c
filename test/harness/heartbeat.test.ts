/** Heartbeat text rules: when the checklist is empty, and what of an answer is delivered. */
import { describe, expect, it } from "vitest";
import {
  heartbeatDelivery,
  heartbeatTriggerText,
  isHeartbeatChecklistEmpty,
} from "../../src/harness/heartbeat.js";

describe("isHeartbeatChecklistEmpty", () => {
  it("is empty with only headers, comments, blank lines, empty list items and fences", () => {
    expect(isHeartbeatChecklistEmpty("")).toBe(true);
    expect(
      isHeartbeatChecklistEmpty("# HEARTBEAT.md\n\n## Daily\n- \n* [ ]\n1.\n```\n```\n<!-- add items -->\n"),
    ).toBe(true);
    expect(isHeartbeatChecklistEmpty("<!--\nmulti-line\ncomment\n-->")).toBe(true);
  });

  it("is not empty with a real item or plain line", () => {
    expect(isHeartbeatChecklistEmpty("# Checks\n- remind me of deadlines")).toBe(false);
    expect(isHeartbeatChecklistEmpty("Look at PROGRESS.md")).toBe(false);
    expect(isHeartbeatChecklistEmpty("#hashtag-not-a-header")).toBe(false);
  });

  it("treats the shipped workspace template as empty (heartbeats cost nothing until edited)", async () => {
    const { readFile } = await import("node:fs/promises");
    expect(isHeartbeatChecklistEmpty(await readFile("workspace/HEARTBEAT.md", "utf8"))).toBe(true);
  });
});

describe("heartbeatDelivery", () => {
  it("drops a bare acknowledgement, with or without punctuation or markup", () => {
    for (const answer of ["HEARTBEAT_OK", " HEARTBEAT_OK. ", "**HEARTBEAT_OK**", "heartbeat_ok!"]) {
      expect(heartbeatDelivery(answer, 300)).toBeNull();
    }
  });

  it("drops a short remark around the token, delivers a long one without the token", () => {
    expect(heartbeatDelivery("HEARTBEAT_OK — all quiet.", 300)).toBeNull();
    const long = `Your invoice is due today. ${"Details. ".repeat(10)}`;
    expect(heartbeatDelivery(`HEARTBEAT_OK ${long}`, 20)).toBe(long.trim());
    expect(heartbeatDelivery(`${long} HEARTBEAT_OK`, 20)).toBe(long.trim());
  });

  it("delivers an answer without the token as it is, and never an empty one", () => {
    expect(heartbeatDelivery("Reminder: call the bank.", 300)).toBe("Reminder: call the bank.");
    expect(heartbeatDelivery("  ", 300)).toBeNull();
    // The token in the middle is not special.
    expect(heartbeatDelivery("Say HEARTBEAT_OK to me", 300)).toBe("Say HEARTBEAT_OK to me");
  });
});

describe("heartbeatTriggerText", () => {
  it("gives the instruction, then the checklist", () => {
    const text = heartbeatTriggerText("- check mail\n");
    expect(text).toMatch(/^This is a scheduled heartbeat/);
    expect(text).toMatch(/--- HEARTBEAT.md ---\n- check mail\n--- end of HEARTBEAT.md ---$/);
  });
});
