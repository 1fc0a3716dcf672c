import { describe, expect, it } from "vitest";
import { MAX_CHUNK_LINES, chunkMarkdown } from "../../../src/harness/memory/markdown-chunks.js";

describe("chunkMarkdown", () => {
  it("cuts at blank lines, headings and top-level list items, keeping line ranges", () => {
    const text = [
      "# 2025-03-14", // 1
      "", // 2
      "- Booked the dentist", // 3
      "  for Tuesday, 09:30", // 4
      "- Decided: reports on Fridays", // 5
      "", // 6
      "A paragraph", // 7
      "over two lines.", // 8
      "## Later", // 9
      "1. first", // 10
    ].join("\n");
    expect(chunkMarkdown(text)).toEqual([
      { startLine: 1, endLine: 1, text: "# 2025-03-14" },
      { startLine: 3, endLine: 4, text: "- Booked the dentist\n  for Tuesday, 09:30" },
      { startLine: 5, endLine: 5, text: "- Decided: reports on Fridays" },
      { startLine: 7, endLine: 8, text: "A paragraph\nover two lines." },
      { startLine: 9, endLine: 9, text: "## Later" },
      { startLine: 10, endLine: 10, text: "1. first" },
    ]);
  });

  it("splits long paragraphs and keeps fenced code (blank lines and # included) together", () => {
    const long = Array.from({ length: MAX_CHUNK_LINES + 2 }, (_, i) => `line ${i + 1}`).join("\n");
    expect(chunkMarkdown(long).map((c) => [c.startLine, c.endLine])).toEqual([
      [1, MAX_CHUNK_LINES],
      [MAX_CHUNK_LINES + 1, MAX_CHUNK_LINES + 2],
    ]);
    const fenced = "```sh\n# not a heading\n\necho hi\n```\nafter";
    expect(chunkMarkdown(fenced)).toEqual([
      { startLine: 1, endLine: 6, text: "```sh\n# not a heading\n\necho hi\n```\nafter" },
    ]);
  });

  it("handles CRLF, an empty file and a file of blank lines", () => {
    expect(chunkMarkdown("a\r\nb\r\n")).toEqual([{ startLine: 1, endLine: 2, text: "a\nb" }]);
    expect(chunkMarkdown("")).toEqual([]);
    expect(chunkMarkdown("\n\n  \n")).toEqual([]);
  });
});
