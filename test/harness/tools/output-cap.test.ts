import { describe, expect, it } from "vitest";
import { HeadTailBuffer, capMiddle } from "../../../src/harness/tools/output-cap.js";

/** Feeds `text` in chunks of the given sizes (cycling) and returns the buffer. */
function feed(text: string, max: number, sizes: readonly number[]): HeadTailBuffer {
  const buffer = new HeadTailBuffer(max);
  const bound = max + Math.max(max, 2_000);
  for (let at = 0, i = 0; at < text.length; i++) {
    const size = sizes[i % sizes.length] ?? 1;
    buffer.push(text.slice(at, at + size));
    at += size;
    expect(buffer.retainedChars).toBeLessThanOrEqual(bound);
  }
  return buffer;
}

const lines = (n: number, word: string): string =>
  Array.from({ length: n }, (_, i) => `${word} ${i}`).join("\n");

describe("HeadTailBuffer", () => {
  const texts: Record<string, string> = {
    short: "hello\nworld\n",
    "lines, ending well": `FIRST\n${lines(3_000, "line")}\nLAST\n`,
    "lines, ending in a failure": `${lines(3_000, "step")}\nError: it broke\n`,
    "one long line": `HEAD${"x".repeat(50_000)}TAIL`,
    "surrogate pairs": "😀".repeat(20_000),
  };
  for (const [name, text] of Object.entries(texts)) {
    for (const max of [200, 1_000, 5_000]) {
      it(`caps "${name}" at ${max} exactly as capMiddle caps the whole text`, () => {
        for (const sizes of [[1], [7, 300, 64 * 1024], [65_536], [3, 5_000]]) {
          const capped = feed(text, max, sizes).capped();
          expect(capped.text).toBe(capMiddle(text, max));
          expect(capped.text.length).toBeLessThanOrEqual(max);
          const marker = /\n\n\[… (\d+) characters omitted …\]\n\n/.exec(capped.text);
          if (text.length <= max) {
            expect(capped).toEqual({ text, omittedChars: 0 });
          } else {
            expect(Number(marker?.[1])).toBe(capped.omittedChars);
            expect(capped.text.length - (marker?.[0].length ?? 0) + capped.omittedChars).toBe(text.length);
          }
        }
      });
    }
  }

  it("holds no more than the cap plus the tail window however much arrives", () => {
    const buffer = new HeadTailBuffer(16_000);
    const chunk = "y\n".repeat(32 * 1024);
    for (let i = 0; i < 800; i++) buffer.push(chunk); // ~52 MB
    expect(buffer.totalChars).toBe(800 * chunk.length);
    expect(buffer.retainedChars).toBe(32_000);
    const capped = buffer.capped();
    expect(capped.text.length).toBeLessThanOrEqual(16_000);
    expect(capped.omittedChars).toBeGreaterThan(buffer.totalChars - 16_000);
  });

  it("refuses a cap too small for the marker", () => {
    expect(() => new HeadTailBuffer(50)).toThrow(/maxChars must be an integer ≥ 200, got 50/);
  });
});
