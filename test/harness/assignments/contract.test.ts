/** An assignment's contract: validation of the checks as given, and the gateway's own checking. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  contractGaps,
  describeCheck,
  gapReport,
  validateContract,
} from "../../../src/harness/assignments/contract.js";
import { AssignmentInputError } from "../../../src/harness/assignments/errors.js";
import type { ContractCheck } from "../../../src/store/repos/assignment-repo.js";

/** The AssignmentInputError message `fn` throws. */
function inputError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AssignmentInputError);
    return (err as Error).message;
  }
  throw new Error("expected an AssignmentInputError, nothing was thrown");
}

const off = { allowCommands: false };
const on = { allowCommands: true };

describe("validateContract", () => {
  it("refuses an absolute path, naming the check's field", () => {
    expect(inputError(() => validateContract([{ kind: "file_exists", path: "/etc/passwd" }], off))).toBe(
      'contract.0.path: expected a path relative to the workspace, got "/etc/passwd"',
    );
  });

  it("refuses a path that leaves the workspace, also after normalizing or with backslashes", () => {
    const ok: ContractCheck = { kind: "file_exists", path: "a.md" };
    expect(inputError(() => validateContract([ok, { kind: "file_exists", path: "../x" }], off))).toBe(
      'contract.1.path: "../x" is outside the workspace',
    );
    expect(inputError(() => validateContract([{ kind: "file_exists", path: "a/../../x" }], off))).toMatch(
      /^contract\.0\.path: .* is outside the workspace$/,
    );
    expect(inputError(() => validateContract([{ kind: "file_exists", path: "..\\x" }], off))).toMatch(
      /^contract\.0\.path: .* is outside the workspace$/,
    );
    expect(inputError(() => validateContract([{ kind: "file_exists", path: ".." }], off))).toMatch(
      /^contract\.0\.path: .* is outside the workspace$/,
    );
  });

  it("refuses an empty path", () => {
    expect(inputError(() => validateContract([{ kind: "file_exists", path: "  " }], off))).toBe(
      "contract.0.path: expected a path of 1 to 1000 characters",
    );
  });

  it("refuses a pattern that does not compile, and an empty one", () => {
    const bad = inputError(() =>
      validateContract([{ kind: "file_contains", path: "a.md", pattern: "(unclosed" }], off),
    );
    expect(bad).toMatch(/^contract\.0\.pattern: not a valid regular expression \(/);
    expect(bad).not.toContain("Invalid regular expression: ");
    expect(
      inputError(() => validateContract([{ kind: "file_contains", path: "a.md", pattern: "" }], off)),
    ).toBe("contract.0.pattern: expected a pattern of 1 to 1000 characters");
  });

  it("refuses a command check while command checks are off, and an empty command when on", () => {
    const checks: ContractCheck[] = [
      { kind: "file_exists", path: "a.md" },
      { kind: "command", command: "npm test" },
    ];
    expect(inputError(() => validateContract(checks, off))).toMatch(
      /^contract\.1\.command: command checks are off .*assignments\.commandChecks: true/,
    );
    expect(inputError(() => validateContract([{ kind: "command", command: "   " }], on))).toBe(
      "contract.0.command: expected a command of 1 to 1000 characters",
    );
  });

  it("refuses more than 20 checks, and takes 20", () => {
    const checks = (n: number): ContractCheck[] =>
      Array.from({ length: n }, (_, i) => ({ kind: "file_exists", path: `f${i}.md` }));
    expect(inputError(() => validateContract(checks(21), off))).toBe("contract: at most 20 checks (got 21)");
    expect(validateContract(checks(20), off)).toHaveLength(20);
  });

  it("returns valid checks normalized: paths trimmed and normalized, commands trimmed, patterns as given", () => {
    expect(
      validateContract(
        [
          { kind: "file_exists", path: " ./docs//report.md " },
          { kind: "file_contains", path: "a/b/../c.md", pattern: " ^## Done$ " },
          { kind: "file_exists", path: "dir\\sub\\x.md" },
          { kind: "command", command: "  test -f out.txt  " },
        ],
        on,
      ),
    ).toEqual([
      { kind: "file_exists", path: "docs/report.md" },
      { kind: "file_contains", path: "a/c.md", pattern: " ^## Done$ " },
      { kind: "file_exists", path: "dir/sub/x.md" },
      { kind: "command", command: "test -f out.txt" },
    ]);
    expect(validateContract([], off)).toEqual([]);
  });
});

describe("contractGaps", () => {
  let ws: string;
  beforeAll(() => {
    ws = mkdtempSync(path.join(tmpdir(), "switchyard-contract-"));
    mkdirSync(path.join(ws, "out"));
    writeFileSync(path.join(ws, "out", "report.md"), "# Report\n\n## Summary\nall good\n");
  });
  afterAll(() => rmSync(ws, { recursive: true, force: true }));

  it("reports a missing file, and a directory is not a file", async () => {
    expect(
      await contractGaps(
        [
          { kind: "file_exists", path: "out/missing.md" },
          { kind: "file_exists", path: "out" },
        ],
        { workspaceDir: ws, allowCommands: false },
      ),
    ).toEqual(["out/missing.md: the file does not exist yet", "out: the file does not exist yet"]);
  });

  it("reports a file without the pattern (multiline) and passes one with it", async () => {
    const o = { workspaceDir: ws, allowCommands: false };
    expect(
      await contractGaps([{ kind: "file_contains", path: "out/report.md", pattern: "^## Results$" }], o),
    ).toEqual(["out/report.md: does not contain /^## Results$/ yet"]);
    expect(
      await contractGaps(
        [
          { kind: "file_exists", path: "out/report.md" },
          { kind: "file_contains", path: "out/report.md", pattern: "^## Summary$" },
        ],
        o,
      ),
    ).toEqual([]);
    expect(await contractGaps([{ kind: "file_contains", path: "out/nope.md", pattern: "x" }], o)).toEqual([
      "out/nope.md: the file does not exist yet",
    ]);
  });

  it("runs a command check with /bin/sh in the workspace: exit 3 is a gap, true is none", async () => {
    const o = { workspaceDir: ws, allowCommands: true };
    const [gap, ...rest] = await contractGaps([{ kind: "command", command: "exit 3" }], o);
    expect(rest).toEqual([]);
    expect(gap).toContain("exit 3");
    expect(gap).toBe("command `exit 3`: exit 3");
    expect(await contractGaps([{ kind: "command", command: "true" }], o)).toEqual([]);
    // In the workspace: a relative test passes there.
    expect(await contractGaps([{ kind: "command", command: "test -f out/report.md" }], o)).toEqual([]);
    // The last line of stderr is quoted.
    expect(
      await contractGaps([{ kind: "command", command: "echo first >&2; echo broken >&2; exit 1" }], o),
    ).toEqual(["command `echo first >&2; echo broken >&2; exit 1`: exit 1 (broken)"]);
  });

  it("reports a command check that runs too long as timed out", async () => {
    const gaps = await contractGaps([{ kind: "command", command: "sleep 5" }], {
      workspaceDir: ws,
      allowCommands: true,
      commandTimeoutMs: 100,
    });
    expect(gaps).toEqual(["command `sleep 5`: timed out"]);
  });

  it("does not run commands while command checks are off: a gap saying so", async () => {
    const marker = path.join(ws, "ran.txt");
    expect(
      await contractGaps([{ kind: "command", command: `touch ${marker}` }], {
        workspaceDir: ws,
        allowCommands: false,
      }),
    ).toEqual([`command \`touch ${marker}\`: not run (command checks are off)`]);
    expect(
      await contractGaps([{ kind: "file_exists", path: "ran.txt" }], {
        workspaceDir: ws,
        allowCommands: false,
      }),
    ).toEqual(["ran.txt: the file does not exist yet"]);
  });

  it("keeps the checks' order in its report", async () => {
    const gaps = await contractGaps(
      [
        { kind: "file_exists", path: "b.md" },
        { kind: "file_exists", path: "out/report.md" },
        { kind: "file_exists", path: "a.md" },
      ],
      { workspaceDir: ws, allowCommands: false },
    );
    expect(gaps).toEqual(["b.md: the file does not exist yet", "a.md: the file does not exist yet"]);
  });
});

describe("gapReport and describeCheck", () => {
  it("is empty without gaps, else one line per gap under a heading", () => {
    expect(gapReport([])).toBe("");
    expect(gapReport(["a.md: the file does not exist yet", "command `x`: exit 1"])).toBe(
      "The contract is not met yet (checked by the gateway):\n- a.md: the file does not exist yet\n- command `x`: exit 1",
    );
  });

  it("describes each kind of check in one line", () => {
    expect(describeCheck({ kind: "file_exists", path: "a.md" })).toBe("file a.md exists");
    expect(describeCheck({ kind: "file_contains", path: "a.md", pattern: "^x" })).toBe(
      "file a.md contains /^x/",
    );
    expect(describeCheck({ kind: "command", command: "npm test" })).toBe("command `npm test` exits 0");
  });
});
