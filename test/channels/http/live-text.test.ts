/**
 * LiveText on its own: what one append-only stream writes as a turn's text is streamed, reset
 * and streamed again, and what it writes once the answer is known.
 */
import { describe, expect, it } from "vitest";
import { LiveText, RETOLD_NOTICE } from "../../../src/channels/http/live-text.js";

function live() {
  const written: string[] = [];
  return { text: new LiveText((t) => written.push(t)), written };
}

describe("LiveText", () => {
  it("writes every delta as is while nothing was reset", () => {
    const { text, written } = live();
    for (const d of ["a", "", "bc"]) text.append(d);
    expect(written).toEqual(["a", "bc"]);
    expect(text.finish("abcd", true)).toEqual({ text: "d", retold: false });
  });

  it("writes nothing while the replacement repeats discarded text, then only what goes beyond it", () => {
    const { text, written } = live();
    text.append("Hello wor");
    text.reset(9);
    text.append("Hel");
    text.append("lo");
    expect(written).toEqual(["Hello wor"]);
    text.append(" world!"); // repeats " wor", then extends
    expect(written).toEqual(["Hello wor", "ld!"]);
    expect(text.diverged).toBe(false);
    expect(text.finish("Hello world!", true)).toEqual({ text: "", retold: false });
  });

  it("survives two failed calls in a row, each discarding only its own text", () => {
    const { text, written } = live();
    text.append("Intro. ");
    text.append("Ab");
    text.reset(2);
    text.append("A");
    text.reset(1);
    text.append("Abc");
    expect(written).toEqual(["Intro. ", "Ab", "c"]);
    expect(text.finish("Abc", true)).toEqual({ text: "", retold: false }); // text before tool calls
  });

  it("stops at the first differing character and retells the answer at the end", () => {
    const { text, written } = live();
    text.append("Hello wor");
    text.reset(9);
    text.append("Help");
    text.append(" me");
    expect(written).toEqual(["Hello wor"]);
    expect(text.diverged).toBe(true);
    expect(text.finish("Help me", true)).toEqual({ text: `${RETOLD_NOTICE}Help me`, retold: true });
  });

  it("treats a reset of more than it saw as discarding everything, and ignores one of nothing", () => {
    const { text, written } = live();
    text.append("xyz");
    text.reset(0);
    text.reset(-1);
    text.append("!");
    text.reset(100);
    text.append("xyz!?");
    expect(written).toEqual(["xyz", "!", "?"]);
  });

  it("writes the failure notice of a failed turn as is", () => {
    const { text } = live();
    text.append("Partial");
    text.reset(7);
    text.append("Other");
    expect(text.finish("⚠️ failed", false)).toEqual({ text: "⚠️ failed", retold: false });
  });
});
