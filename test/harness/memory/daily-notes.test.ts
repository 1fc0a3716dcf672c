import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dailyNotes } from "../../../src/harness/memory/daily-notes.js";

let tmp: string;
let ws: string;
/** 2025-03-15 05:00 UTC: 2025-03-14 in Los Angeles. */
const NOW = new Date(Date.UTC(2025, 2, 15, 5));

beforeEach(async () => {
  tmp = await realpath(await mkdtemp(path.join(tmpdir(), "switchyard-daily-")));
  ws = path.join(tmp, "ws");
  await mkdir(path.join(ws, "memory"), { recursive: true });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("dailyNotes", () => {
  it("reads today's and yesterday's notes, dated in the time zone", async () => {
    await writeFile(path.join(ws, "memory", "2025-03-14.md"), "# 2025-03-14\n\n- today\n");
    await writeFile(path.join(ws, "memory", "2025-03-13.md"), "# 2025-03-13\r\n\r\n- yesterday\r\n");
    await writeFile(path.join(ws, "memory", "2025-03-15.md"), "# 2025-03-15\n\n- tomorrow in LA\n");
    expect(await dailyNotes(ws, NOW, "America/Los_Angeles", 1_000)).toEqual({
      today: { path: "memory/2025-03-14.md", text: "# 2025-03-14\n\n- today" },
      yesterday: { path: "memory/2025-03-13.md", text: "# 2025-03-13\n\n- yesterday" },
    });
    expect(await dailyNotes(ws, NOW, "UTC", 1_000)).toEqual({
      today: { path: "memory/2025-03-15.md", text: "# 2025-03-15\n\n- tomorrow in LA" },
      yesterday: { path: "memory/2025-03-14.md", text: "# 2025-03-14\n\n- today" },
    });
  });

  it("leaves out missing, blank and binary notes, and a missing workspace", async () => {
    await writeFile(path.join(ws, "memory", "2025-03-14.md"), "  \n\n");
    await writeFile(path.join(ws, "memory", "2025-03-13.md"), Buffer.from([0x61, 0, 0x62]));
    expect(await dailyNotes(ws, NOW, "America/Los_Angeles", 1_000)).toEqual({});
    expect(await dailyNotes(path.join(tmp, "nope"), NOW, "UTC", 1_000)).toEqual({});
  });

  it("keeps the newest whole lines of a long note within maxChars, after a marker", async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `- entry ${String(i).padStart(3, "0")}`);
    await writeFile(path.join(ws, "memory", "2025-03-14.md"), `# 2025-03-14\n\n${lines.join("\n")}\n`);
    const { today } = await dailyNotes(ws, NOW, "America/Los_Angeles", 300);
    expect(today?.text.length).toBeLessThanOrEqual(300);
    const [marker, ...kept] = today?.text.split("\n") ?? [];
    expect(marker).toBe("[… earlier part of memory/2025-03-14.md omitted; read it with memory_get]");
    expect(kept.at(-1)).toBe("- entry 199");
    expect(kept.every((l) => /^- entry \d{3}$/.test(l))).toBe(true);
  });

  it("reads only the end of a huge note", async () => {
    const big = `${"- old line\n".repeat(200_000)}- the newest line\n`;
    await writeFile(path.join(ws, "memory", "2025-03-14.md"), big);
    const { today } = await dailyNotes(ws, NOW, "America/Los_Angeles", 500);
    expect(today?.text.startsWith("[… earlier part of memory/2025-03-14.md omitted")).toBe(true);
    expect(today?.text.endsWith("- old line\n- the newest line")).toBe(true);
    expect(today?.text.length).toBeLessThanOrEqual(500);
  });

  it("shows invalid UTF-8 as replacement characters and ignores a note linking out of the workspace", async () => {
    await writeFile(path.join(ws, "memory", "2025-03-14.md"), Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x0a]));
    const outside = path.join(tmp, "secret.md");
    await writeFile(outside, "secret\n");
    await symlink(outside, path.join(ws, "memory", "2025-03-13.md"));
    expect(await dailyNotes(ws, NOW, "America/Los_Angeles", 1_000)).toEqual({
      today: { path: "memory/2025-03-14.md", text: "Caf\uFFFD" },
    });
  });

  it("refuses an unknown time zone and a tiny cap", async () => {
    await expect(dailyNotes(ws, NOW, "Nope/Nope", 1_000)).rejects.toThrow(RangeError);
    await expect(dailyNotes(ws, NOW, "UTC", 10)).rejects.toThrow(/maxChars/);
  });
});
