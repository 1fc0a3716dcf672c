import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkText } from "../../src/channels/chunking.js";

describe("chunkText", () => {
  it("returns short text whole and empty text as nothing", () => {
    expect(chunkText("hello", 10)).toEqual(["hello"]);
    expect(chunkText("   ", 10)).toEqual([]);
  });

  it("prefers paragraph, then line, then word boundaries", () => {
    expect(chunkText("aaaa bbbb\n\ncccc dddd", 12)).toEqual(["aaaa bbbb", "cccc dddd"]);
    expect(chunkText("aaaa bbbb\ncccc dddd", 12)).toEqual(["aaaa bbbb", "cccc dddd"]);
    expect(chunkText("aaaa bbbb cccc", 10)).toEqual(["aaaa bbbb", "cccc"]);
    expect(chunkText("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
  });

  it("never exceeds the limit and keeps every word in order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{1,12}$/), { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 12, max: 60 }),
        (words, max) => {
          const text = words.join(" ");
          const chunks = chunkText(text, max);
          for (const c of chunks) expect(c.length).toBeLessThanOrEqual(max);
          expect(chunks.join(" ").split(/\s+/)).toEqual(words);
        },
      ),
    );
  });
});
