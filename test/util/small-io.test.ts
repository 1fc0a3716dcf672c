/** Workspace I/O sized for its files: both paths of each helper give the same result. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SYNC_IO_MAX_BYTES, overwriteText, readSized, writeText } from "../../src/util/small-io.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "sy-small-io-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("readSized / writeText", () => {
  it("reads and writes small and large files alike", async () => {
    for (const size of [10, SYNC_IO_MAX_BYTES + 10]) {
      const file = path.join(dir, `f${size}.txt`);
      const text = "ü".repeat(size);
      await writeText(file, text);
      const bytes = await readSized(file, statSync(file).size);
      expect(bytes.toString("utf8")).toBe(text);
    }
  });

  it("rejects (not throws) when the file is missing, on either path", async () => {
    const missing = path.join(dir, "nope");
    await expect(readSized(missing, 1)).rejects.toMatchObject({ code: "ENOENT" });
    await expect(readSized(missing, SYNC_IO_MAX_BYTES + 1)).rejects.toMatchObject({ code: "ENOENT" });
    await expect(writeText(path.join(dir, "no", "dir.txt"), "x")).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("keeps an existing file's mode and honours the exclusive flag", async () => {
    const file = path.join(dir, "x.txt");
    await writeText(file, "one", { mode: 0o600, flag: "wx" });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await expect(writeText(file, "two", { flag: "wx" })).rejects.toMatchObject({ code: "EEXIST" });
  });
});

describe("overwriteText", () => {
  it("makes a missing file owner-only, and cuts a longer old content to the new length", () => {
    const file = path.join(dir, "view.md");
    overwriteText(file, "a much longer first version\n");
    expect(statSync(file).mode & 0o077).toBe(0);
    overwriteText(file, "short\n");
    expect(readFileSync(file, "utf8")).toBe("short\n");
    overwriteText(file, "grown again, past the old end\n");
    expect(readFileSync(file, "utf8")).toBe("grown again, past the old end\n");
  });

  it("keeps the mode of a file that exists", () => {
    const file = path.join(dir, "shared.md");
    writeFileSync(file, "x", { mode: 0o644 });
    overwriteText(file, "y");
    expect(statSync(file).mode & 0o777).toBe(0o644);
  });
});
