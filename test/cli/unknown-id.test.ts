/**
 * One rule for every command that takes an id, key, name or code: one that names nothing is bad
 * input, so it exits 2 with one line on stderr naming it (README: 2 is bad usage or input).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

const ID = "nope-42";

/** Every subcommand that looks something up by what the user typed, with an unknown `ID`. */
const LOOKUPS: string[][] = [
  ["sessions", "show", ID],
  ["pairing", "approve", "telegram", ID],
  ["pairing", "revoke", "telegram", ID],
  ["auth", "reset", "anthropic", ID],
  ["auth", "reset", ID, "default"],
  ["task", "show", ID],
  ["task", "cancel", ID],
  ["task", "answer", ID, "yes"],
  ["learnings", "promote", ID],
  ["learnings", "drop", ID],
  ["cron", "show", ID],
  ["cron", "history", ID],
  ["cron", "edit", ID, "--message", "hi"],
  ["cron", "rm", ID],
  ["cron", "enable", ID],
  ["cron", "disable", ID],
  ["cron", "run", ID],
];

describe("an unknown id", () => {
  it("exits 2 with one line on stderr naming it, for every subcommand that takes one", async () => {
    const cwd = tempDir();
    const home = join(cwd, "home");
    mkdirSync(home);
    await openSqliteStore({ path: join(home, "switchyard.db") }).close();
    for (const args of LOOKUPS) {
      const r = await runCli([...args, "--home", home], { cwd });
      const what = args.join(" ");
      expect(r.code, what).toBe(2);
      expect(r.out, what).toBe("");
      expect(r.err, what).toMatch(new RegExp(`^switchyard ${args[0]}[^\\n]*${ID}[^\\n]*\\n$`, "i"));
    }
  }, 120_000);

  it("is bad input too when there is no database yet", async () => {
    const cwd = tempDir();
    const r = await runCli(["sessions", "show", ID, "--home", join(cwd, "home")], { cwd });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^switchyard sessions show: no session "${ID}"[^\\n]*\\n$`));
  });
});
