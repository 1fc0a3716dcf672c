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

describe("chunkText with code fences", () => {
  const fenceCount = (s: string) => s.split("\n").filter((l) => /^```/.test(l)).length;

  it("closes a fence at the cut and reopens it, with its language, in the next chunk", () => {
    const code = Array.from({ length: 40 }, (_, i) => `const x${i} = ${i};`).join("\n");
    const text = `Here is the code:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThat is all.`;
    const chunks = chunkText(text, 200);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(200);
      expect(fenceCount(c) % 2).toBe(0);
    }
    expect(chunks[1]?.startsWith("```ts\n")).toBe(true);
    // Every code line survives, in order, exactly once.
    const lines = chunks.flatMap((c) => c.split("\n")).filter((l) => l.startsWith("const "));
    expect(lines).toEqual(code.split("\n"));
    expect(chunks.at(-1)?.endsWith("That is all.")).toBe(true);
  });

  it("does not leave an empty block when the cut falls right after an opening fence", () => {
    const text = `${"word ".repeat(30).trim()}\n\`\`\`py\nprint(1)\nprint(2)\n\`\`\``;
    const chunks = chunkText(text, 160);
    expect(chunks[0]).not.toContain("```");
    expect(chunks[1]).toBe("```py\nprint(1)\nprint(2)\n```");
  });

  it("keeps tilde fences and longer markers", () => {
    const text = `~~~~\n${"a line of text\n".repeat(20)}~~~~`;
    const chunks = chunkText(text, 100);
    for (const c of chunks) {
      expect(c.startsWith("~~~~\n")).toBe(true);
      expect(c.endsWith("\n~~~~")).toBe(true);
    }
  });

  it("never cuts a surrogate pair in half", () => {
    const chunks = chunkText("😀".repeat(50), 7);
    for (const c of chunks) expect(c).toMatch(/^(?:😀)+$/u);
    expect(chunks.join("")).toBe("😀".repeat(50));
  });

  it("for any mix of prose and code: within the limit, fences balanced, code lines kept", () => {
    const codeLine = fc.stringMatching(/^[a-z(); =]{0,30}$/).map((s) => `  ${s}`);
    const prose = fc
      .array(fc.stringMatching(/^[a-z]{1,10}$/), { minLength: 1, maxLength: 30 })
      .map((w) => w.join(" "));
    const block = fc.oneof(
      prose,
      fc
        .tuple(fc.constantFrom("", "ts", "python"), fc.array(codeLine, { minLength: 1, maxLength: 30 }))
        .map(([lang, lines]) => `\`\`\`${lang}\n${lines.join("\n")}\n\`\`\``),
    );
    fc.assert(
      fc.property(
        fc.array(block, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 60, max: 400 }),
        (blocks, max) => {
          const text = blocks.join("\n\n");
          const chunks = chunkText(text, max);
          for (const c of chunks) {
            expect(c.length).toBeLessThanOrEqual(max);
            expect(fenceCount(c) % 2).toBe(0);
          }
          const words = (s: string) => s.split(/\s+/).filter((w) => w && !w.startsWith("```"));
          expect(chunks.flatMap(words).join("")).toEqual(words(text).join(""));
        },
      ),
    );
  });
});

describe("chunkText keeps a code block whole when it fits in a chunk", () => {
  const block = (lines: number, width = 20) =>
    `\`\`\`ts\n${Array.from({ length: lines }, (_, i) => `line ${i}`.padEnd(width, ".")).join("\n\n")}\n\`\`\``;

  it("moves the cut before a block with blank lines inside instead of splitting it", () => {
    const code = block(6); // blank lines inside: tempting paragraph breaks
    const text = `${"intro words ".repeat(8).trim()}\n\n${code}\n\nafter`;
    const chunks = chunkText(text, code.length + 10);
    expect(chunks[0]).toBe("intro words ".repeat(8).trim());
    expect(chunks[1]?.startsWith(code)).toBe(true);
    for (const c of chunks) expect(c.split("```").length % 2).toBe(1);
  });

  it("prefers a cut after the block when the block ends inside the window", () => {
    const code = block(3);
    const text = `${code}\nsome words after the block that go on and on and on`;
    const chunks = chunkText(text, code.length + 20);
    expect(chunks[0]).toBe(code);
  });

  it("cuts before a block that starts early in the window, even below the usual floor", () => {
    const code = block(8);
    const text = `Hi.\n\n${code}\n\nbye`;
    const chunks = chunkText(text, code.length + 4);
    expect(chunks).toEqual(["Hi.", code, "bye"]);
  });

  it("still splits a block longer than the limit, closing and reopening it", () => {
    const code = block(30);
    const chunks = chunkText(`Intro.\n\n${code}`, 200);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks.slice(1)) {
      expect(c.startsWith("```ts\n")).toBe(true);
      expect(c.endsWith("```")).toBe(true);
    }
  });
});

describe("chunkText with a line limit (Discord: 17 lines)", () => {
  const fenceCount = (s: string) => s.split("\n").filter((l) => /^```/.test(l)).length;
  const lineCount = (s: string) => s.split("\n").length;

  it("splits a short but tall reply at line boundaries", () => {
    const text = Array.from({ length: 40 }, (_, i) => `item ${i}`).join("\n");
    const chunks = chunkText(text, 2000, { maxLines: 17 });
    expect(chunks.map(lineCount)).toEqual([17, 17, 6]);
    expect(chunks.join("\n")).toBe(text);
  });

  it("closes a tall code block within the line limit and reopens it with its language", () => {
    const code = Array.from({ length: 50 }, (_, i) => `print(${i})`).join("\n");
    const chunks = chunkText(`Look:\n\`\`\`python\n${code}\n\`\`\``, 2000, { maxLines: 17 });
    for (const c of chunks) {
      expect(lineCount(c)).toBeLessThanOrEqual(17);
      expect(fenceCount(c) % 2).toBe(0);
    }
    expect(chunks.slice(1).every((c) => c.startsWith("```python\n"))).toBe(true);
    const lines = chunks.flatMap((c) => c.split("\n")).filter((l) => l.startsWith("print("));
    expect(lines).toEqual(code.split("\n"));
  });

  it("rejects a line limit too small to carry a reopened fence", () => {
    expect(() => chunkText("a\nb\nc\nd", 100, { maxLines: 2 })).toThrow(/maxLines must be ≥ 3/);
  });

  it("for any mix of prose and code: within both limits, fences balanced, words kept", () => {
    const codeLine = fc.stringMatching(/^[a-z(); =]{0,30}$/).map((s) => `  ${s}`);
    const prose = fc
      .array(fc.stringMatching(/^[a-z]{1,10}$/), { minLength: 1, maxLength: 12 })
      .map((w) => w.join(" "));
    const block = fc.oneof(
      fc.array(prose, { minLength: 1, maxLength: 6 }).map((l) => l.join("\n")),
      fc
        .tuple(fc.constantFrom("", "ts", "python"), fc.array(codeLine, { minLength: 1, maxLength: 40 }))
        .map(([lang, lines]) => `\`\`\`${lang}\n${lines.join("\n")}\n\`\`\``),
    );
    fc.assert(
      fc.property(
        fc.array(block, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 200, max: 2000 }),
        fc.integer({ min: 5, max: 20 }),
        (blocks, max, maxLines) => {
          const text = blocks.join("\n\n");
          const chunks = chunkText(text, max, { maxLines });
          for (const c of chunks) {
            expect(c.length).toBeLessThanOrEqual(max);
            expect(lineCount(c)).toBeLessThanOrEqual(maxLines);
            expect(fenceCount(c) % 2).toBe(0);
          }
          const words = (s: string) => s.split(/\s+/).filter((w) => w && !w.startsWith("```"));
          expect(chunks.flatMap(words).join("")).toEqual(words(text).join(""));
        },
      ),
    );
  });
});
