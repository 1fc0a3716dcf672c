/**
 * A bad option, a missing option value or an unknown action is one plain line and the command's
 * own usage line, exit 2: no 35-line help, none of node:util parseArgs's advice.
 */
import { afterAll, describe, expect, it } from "vitest";
import { plainArgsError } from "../../src/cli/parse-args-error.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";
import { parseArgs } from "node:util";

afterAll(removeTempDirs);

const CASES: Array<[string[], string, RegExp]> = [
  [["sessions", "--bogus"], "switchyard: unknown option '--bogus'", /^usage: switchyard sessions list/],
  [["status", "--port"], "switchyard: option '--port' needs a value", /^usage: switchyard status /],
  [["logs", "-z"], "switchyard: unknown option '-z'", /^usage: switchyard logs /],
  [
    ["frobnicate"],
    'switchyard: unknown command "frobnicate"',
    /^usage: switchyard <command> .*switchyard help/,
  ],
  [
    ["cron", "add", "--bogus"],
    "switchyard cron: unknown option '--bogus'",
    /^usage: switchyard cron add\|list/,
  ],
  [["cron", "frob"], 'switchyard cron: unknown action "frob"', /^usage: switchyard cron add\|list/],
  [
    ["task", "list", "--json=yes"],
    "switchyard task: option '--json' takes no value",
    /^usage: switchyard task /,
  ],
  [
    ["learnings", "list", "--home"],
    "switchyard learnings: option '--home' needs a value",
    /^usage: switchyard learnings /,
  ],
];

describe("a bad option", () => {
  it("is one plain line and the command's usage line, exit 2", async () => {
    const cwd = tempDir();
    for (const [args, line, usage] of CASES) {
      const r = await runCli(args, { cwd });
      const what = args.join(" ");
      expect(r.code, what).toBe(2);
      const lines = r.err.split("\n");
      expect(lines, what).toHaveLength(3); // two lines and the final newline
      expect(lines[0], what).toBe(line);
      expect(lines[1], what).toMatch(usage);
      expect(r.err, what).not.toMatch(/positional|To specify|ambiguous|\n\n/);
    }
  }, 120_000);

  it("parseArgs's every complaint becomes one plain line", () => {
    const fail = (args: string[]): string => {
      try {
        parseArgs({
          args,
          options: { limit: { type: "string" }, json: { type: "boolean" } },
          strict: true,
          allowPositionals: false,
        });
      } catch (err) {
        return plainArgsError(err);
      }
      throw new Error(`parseArgs took ${args.join(" ")}`);
    };
    expect(fail(["--x"])).toBe("unknown option '--x'");
    expect(fail(["--limit"])).toBe("option '--limit' needs a value");
    expect(fail(["--limit", "--json"])).toBe(
      "option '--limit' needs a value (for one that starts with '-', write --limit=VALUE)",
    );
    expect(fail(["--json=1"])).toBe("option '--json' takes no value");
    expect(fail(["here"])).toBe("unexpected argument 'here'");
  });
});
