import { describe, expect, it } from "vitest";
import {
  checkTimeZone,
  localDate,
  memoryFilePath,
  previousDate,
} from "../../../src/harness/memory/memory-paths.js";
import { ToolError } from "../../../src/harness/tools/tool-error.js";

describe("memory paths", () => {
  it("dates a moment in a time zone", () => {
    const t = Date.UTC(2025, 0, 1, 2, 30);
    expect(localDate(t, "UTC")).toBe("2025-01-01");
    expect(localDate(t, "America/New_York")).toBe("2024-12-31");
    expect(localDate(t, "Asia/Tokyo")).toBe("2025-01-01");
    expect(localDate(Date.UTC(2025, 0, 1, 20), "Pacific/Kiritimati")).toBe("2025-01-02");
  });

  it("takes the calendar day before, across months, years, leap days and DST", () => {
    expect(previousDate("2025-03-01")).toBe("2025-02-28");
    expect(previousDate("2024-03-01")).toBe("2024-02-29");
    expect(previousDate("2025-01-01")).toBe("2024-12-31");
    expect(previousDate("2025-03-31")).toBe("2025-03-30");
  });

  it("checks a time zone, naming the field", () => {
    expect(checkTimeZone("Europe/Berlin", "x")).toBe("Europe/Berlin");
    expect(() => checkTimeZone("Nowhere/Land", "agent.timezone")).toThrow(
      /agent\.timezone .*"Nowhere\/Land"/,
    );
  });

  it("normalizes memory paths and refuses others with a code", () => {
    expect(memoryFilePath("MEMORY.md")).toBe("MEMORY.md");
    expect(memoryFilePath(" ./memory/./a//b.md ")).toBe("memory/a/b.md");
    expect(memoryFilePath("memory\\2025-03-14.md")).toBe("memory/2025-03-14.md");
    const code = (p: string) => {
      try {
        memoryFilePath(p);
        return "ok";
      } catch (err) {
        return err instanceof ToolError ? err.code : "other";
      }
    };
    expect(code("../MEMORY.md")).toBe("path_outside_workspace");
    expect(code("memory/../../x.md")).toBe("path_outside_workspace");
    expect(code("/abs/MEMORY.md")).toBe("path_outside_workspace");
    expect(code("D:/x.md")).toBe("path_outside_workspace");
    expect(code("memory.md")).toBe("invalid_arguments");
    expect(code("memories/x.md")).toBe("invalid_arguments");
    expect(code("memory/")).toBe("invalid_arguments");
  });
});
