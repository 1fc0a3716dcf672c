import { describe, expect, it } from "vitest";
import { appendEntry, newNote, sectionTitle, setSection } from "../../../src/harness/memory/memory-edits.js";

describe("memory edits", () => {
  it("appendEntry adds lines at the end, after a blank line when the file ends with a heading", () => {
    expect(appendEntry("# 2025-03-14\n\n- a\n\n\n", "- b\n\n")).toBe("# 2025-03-14\n\n- a\n- b\n");
    expect(appendEntry("# 2025-03-14\n", "- a")).toBe("# 2025-03-14\n\n- a\n");
    expect(appendEntry("", "\n\n- a")).toBe("- a\n");
    expect(appendEntry("x\r\ny\r\n", "z\r\nw")).toBe("x\ny\nz\nw\n");
  });

  it("newNote starts with its title", () => {
    expect(newNote("2025-03-14", "- a\n")).toBe("# 2025-03-14\n\n- a\n");
  });

  it("setSection replaces up to the next ## or # heading; ### and fenced headings belong to the body", () => {
    const doc = [
      "# Title",
      "",
      "## Lessons ##",
      "- old",
      "```",
      "## not a heading",
      "```",
      "### Sub",
      "text",
      "# Another top",
      "## Next",
      "keep",
    ].join("\n");
    expect(setSection(doc, "LESSONS", "- new")).toEqual({
      text: "# Title\n\n## Lessons ##\n\n- new\n\n# Another top\n## Next\nkeep\n",
      replaced: true,
    });
    expect(setSection(doc, "Next", "- n").text.endsWith("## Next\n\n- n\n")).toBe(true);
    expect(setSection(doc, "not a heading", "x")).toMatchObject({ replaced: false });
    expect(setSection("", "New", "body")).toEqual({ text: "## New\n\nbody\n", replaced: false });
    expect(setSection("# T\r\n\r\n## A\r\nold\r\n", "a", "new")).toEqual({
      text: "# T\n\n## A\n\nnew\n",
      replaced: true,
    });
  });

  it("sectionTitle drops # marks and refuses blank or multi-line titles", () => {
    expect(sectionTitle("  ## Active work ")).toBe("Active work");
    expect(sectionTitle("##")).toBeUndefined();
    expect(sectionTitle("a\nb")).toBeUndefined();
  });
});
