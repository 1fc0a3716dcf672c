/** The environment block's text and the cached top-level listing. */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TopLevelListing, environmentBlock } from "../../src/harness/environment-context.js";

describe("environmentBlock", () => {
  it("is empty when there is nothing to say", () => {
    expect(environmentBlock({})).toBe("");
  });

  it("groups missing tools by reason, lists items and the workspace, and stays within its budget", () => {
    const text = environmentBlock({
      lines: ["Mode: plan"],
      missing: [
        { name: "exec", reason: "denied in a group chat" },
        { name: "write_file", reason: "denied in a group chat" },
        { name: "memory_get", reason: "private memory" },
      ],
      workItems: { done: 1, total: 8, open: ["#2 a", "#3 b", "#4 c", "#5 d", "#6 e", "#7 f", "#8 g"] },
      listing: Array.from({ length: 35 }, (_, i) => `f${String(i).padStart(2, "0")}.md`),
    });
    expect(text.split("\n")).toEqual([
      "# Environment",
      "",
      "Mode: plan",
      "Not available here: exec, write_file (denied in a group chat)",
      "Not available here: memory_get (private memory)",
      "Work items: 1/8 done; open: #2 a; #3 b; #4 c; #5 d; #6 e; … 2 more (work_item_list)",
      expect.stringMatching(/^Workspace top level: f00\.md, .*f29\.md, … 5 more \(list_files\)$/),
    ]);
    const cut = environmentBlock({ listing: Array.from({ length: 30 }, () => "x".repeat(100)) }, 200);
    expect(cut).toHaveLength(200);
    expect(cut.endsWith("…")).toBe(true);
  });
});

describe("TopLevelListing", () => {
  it("lists sorted entries, folders with a slash, hidden ones left out; re-reads when the folder changes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-listing-"));
    try {
      writeFileSync(join(dir, "b.md"), "");
      mkdirSync(join(dir, "memory"));
      writeFileSync(join(dir, ".hidden"), "");
      const listing = new TopLevelListing(dir);
      expect(await listing.entries()).toEqual(["b.md", "memory/"]);
      writeFileSync(join(dir, "a.md"), "");
      // A new entry changes the folder's mtime; make sure it differs even on a coarse clock.
      utimesSync(dir, new Date(), new Date(Date.now() + 5_000));
      expect(await listing.entries()).toEqual(["a.md", "b.md", "memory/"]);
      expect(await new TopLevelListing(join(dir, "missing")).entries()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
