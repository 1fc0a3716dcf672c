/**
 * `switchyard cron`: add, list, show, edit, enable/disable, run, rm and history against the
 * database in a home folder; every bad input is one line naming the field, exit 2, nothing
 * stored; config jobs are listed but not changed here.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

/** A home and a config with a Telegram bot, so `telegram:default:…` is a known target. */
function setup(extraYaml = ""): { cwd: string; home: string } {
  const cwd = tempDir();
  writeFileSync(
    join(cwd, "switchyard.yaml"),
    `channels:\n  telegram:\n    token: "123456:AAexample-token-for-the-cron-test-00"\ncron:\n  timezone: Europe/Berlin\n${extraYaml}`,
  );
  return { cwd, home: join(cwd, "home") };
}

const cron = (s: { cwd: string; home: string }, ...args: string[]) =>
  runCli(["cron", ...args, "--home", s.home], { cwd: s.cwd });

async function jobCount(home: string): Promise<number> {
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  try {
    return (await store.cron.list()).length;
  } finally {
    await store.close();
  }
}

describe("switchyard cron", () => {
  // Each step spawns the CLI (~1 s); on a loaded machine a sequence of them needs more than 30 s.
  it("adds, lists, shows, edits, disables, runs and removes a job", async () => {
    const s = setup();
    const add = await cron(
      s,
      "add",
      "--name",
      "standup",
      "--cron",
      "0 9 * * 1-5",
      "--tz",
      "Europe/Berlin",
      "--message",
      "Summarize yesterday's notes",
      "--deliver",
      "telegram:default:123456",
    );
    expect(add.err).toBe("");
    expect(add.code).toBe(0);
    expect(add.out).toMatch(
      /^added job "standup" \(#1\): cron 0 9 \* \* 1-5 \(Europe\/Berlin\), next run 20\d\d-\d\d-\d\dT0[78]:00:00\.000Z, delivers to telegram:default:123456$/m,
    );
    expect(
      (
        await cron(
          s,
          "add",
          "--name",
          "ping",
          "--at",
          "in 20m",
          "--message",
          "Remind me to stretch",
          "--deliver",
          "last",
        )
      ).code,
    ).toBe(0);
    const list = await cron(s, "list");
    expect(list.out).toMatch(
      /^standup +cron 0 9 \* \* 1-5 \(Europe\/Berlin\) {2}next .* {2}→ telegram:default:123456 {2}\[ok\]$/m,
    );
    expect(list.out).toMatch(/^ping +at .* {2}→ last {2}\[ok\]$/m);
    expect((await cron(s, "show", "standup")).out).toContain("message: Summarize yesterday's notes");
    const edit = await cron(s, "edit", "standup", "--every", "2h");
    expect(edit.out).toMatch(/^changed job "standup": every 2h, next run /m);
    expect((await cron(s, "disable", "standup")).out).toBe('disabled job "standup"\n');
    expect((await cron(s, "list")).out).toMatch(/^standup .*\[disabled\]$/m);
    expect((await cron(s, "run", "standup")).out).toMatch(/is due now/);
    expect((await cron(s, "history", "standup")).out).toBe("  no runs yet\n");
    expect((await cron(s, "rm", "ping")).out).toBe('removed job "ping" and its history\n');
    expect(await jobCount(s.home)).toBe(1);
  }, 120_000);

  it("names the field of every bad input, exits 2 and stores nothing", async () => {
    const s = setup();
    const bad: Array<[string[], RegExp]> = [
      [
        ["--cron", "61 * * * *"],
        /^switchyard cron: cron: invalid cron expression "61 \* \* \* \*" \(minute: 61 is a invalid expression for minute\)$/,
      ],
      [
        ["--cron", "0 9 * * *", "--tz", "Mars/Olympus"],
        /^switchyard cron: tz: unknown timezone "Mars\/Olympus"/,
      ],
      [
        // The fifth Monday of February: only when 29 February is a Monday (2044).
        ["--cron", "0 0 * 2 1#5", "--tz", "UTC"],
        /^switchyard cron: cron: "0 0 \* 2 1#5" never fires \(no matching day within eight years in UTC\)$/,
      ],
      [
        ["--cron", "0 9 * * 1#6"],
        /^switchyard cron: cron: invalid cron expression "0 9 \* \* 1#6" \(dayOfWeek: 1#6 is a invalid expression for week day\)$/,
      ],
      [["--at", "2020-01-01T00:00"], /^switchyard cron: at: "2020-01-01T00:00" is in the past$/],
      [["--every", "10s"], /^switchyard cron: every: "10s" is below the 1-minute floor$/],
      [
        ["--every", "1h", "--deliver", "discord:default:1"],
        /^switchyard cron: deliver: unknown delivery target "discord:default:1": no channel discord:default is configured/,
      ],
      [["--every", "1h", "--at", "in 1h"], /^switchyard cron: schedule: give only one of --every, --at$/],
    ];
    for (const [args, expected] of bad) {
      const r = await cron(s, "add", "--name", "x", "--message", "m", ...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err.trim()).toMatch(expected);
    }
    expect(await jobCount(s.home)).toBe(0);
    // Times that do not exist are bad input, not rolled over into another time.
    for (const at of ["tomorrow 25:00", "tomorrow 9:75", "2027-02-30T10:00:00"]) {
      const r = await cron(s, "add", "--name", "x", "--message", "m", "--at", at);
      expect([r.code, r.err.startsWith(`switchyard cron: at: "${at}" is not a `)], at).toEqual([2, true]);
    }
    expect(await jobCount(s.home)).toBe(0);
    expect((await cron(s, "add", "--name", "dup", "--every", "1h", "--message", "m")).code).toBe(0);
    for (const limit of ["x", "0"]) {
      const r = await cron(s, "history", "dup", "--limit", limit);
      expect([r.code, r.err]).toEqual([
        2,
        `switchyard cron: limit: "${limit}" is not a whole number of runs of 1 or more\n`,
      ]);
    }
    const noop = await cron(s, "edit", "dup");
    expect([noop.code, noop.err]).toEqual([
      2,
      "switchyard cron: edit: nothing to change: give at least one of --name, --message, --cron, --every, --at, --tz, --deliver, --session, --catch-up, --timeout, --disabled\n",
    ]);
    const dup = await cron(s, "add", "--name", "dup", "--every", "2h", "--message", "m");
    expect([dup.code, dup.err]).toEqual([2, 'switchyard cron: name: a job named "dup" already exists\n']);
  }, 120_000);

  it("lists config jobs once the gateway synced them, and refuses to change them", async () => {
    const s = setup(
      '  jobs:\n    - name: digest\n      every: 1d\n      message: "Send the digest"\n      deliver: none\n',
    );
    // The gateway upserts config jobs at start; here the same routine runs directly.
    const { loadConfig } = await import("../../src/config/load.js");
    const { syncConfigJobs } = await import("../../src/capabilities/cron/cron.js");
    const { ChannelDirectory } = await import("../../src/gateway/channel-directory.js");
    const { config } = loadConfig({ cwd: s.cwd, env: {} });
    const store = openSqliteStore({ path: join(s.home, "switchyard.db") });
    try {
      await syncConfigJobs(config, {
        store,
        channels: new ChannelDirectory(),
        clock: { now: () => Date.now() } as never,
      });
    } finally {
      await store.close();
    }
    expect((await cron(s, "list")).out).toMatch(/^digest +every 1d .*\[ok\] \(config\)$/m);
    const rm = await cron(s, "rm", "digest");
    expect(rm.code).toBe(2);
    expect(rm.err).toMatch(
      /^switchyard cron: job "digest" is defined in the config file \(.*switchyard\.yaml\) under cron\.jobs: change it there$/m,
    );
  });
});
