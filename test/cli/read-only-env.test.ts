/**
 * The README's service keeps secrets in the unit's environment file, not the owner's shell:
 * commands that only read run without the `${VAR}`s the shell lacks and name them in one line on
 * stderr; anything that starts the gateway or changes a job still refuses.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

const YAML = `providers:
  anthropic:
    profiles:
      - id: work
        apiKey: \${ANTHROPIC_KEY_WORK}
`;

async function setup(): Promise<{ cwd: string; home: string }> {
  const cwd = tempDir();
  const home = join(cwd, "home");
  mkdirSync(home);
  writeFileSync(join(cwd, "switchyard.yaml"), YAML);
  await openSqliteStore({ path: join(home, "switchyard.db") }).close();
  return { cwd, home };
}

describe("a secret this shell lacks", () => {
  it("does not stop read-only commands; they name it in one line", async () => {
    const { cwd, home } = await setup();
    for (const args of [
      ["auth", "status"],
      ["cron", "list"],
      ["task", "list"],
      ["learnings", "list"],
      ["usage"],
    ]) {
      const r = await runCli([...args, "--home", home], { cwd });
      const what = args.join(" ");
      expect(r.code, `${what}: ${r.err}`).toBe(0);
      if (args[0] !== "usage") {
        expect(r.err, what).toMatch(
          /^switchyard [a-z ]+: not set in this shell: \$\{ANTHROPIC_KEY_WORK\} \(providers\.anthropic\.profiles\.0\.apiKey\); going on without it\n$/,
        );
      }
    }
    const auth = await runCli(["auth", "status", "--home", home], { cwd });
    expect(auth.out).toMatch(/^anthropic\s+work\s+ok\s.*providers\.anthropic\.profiles\[0\]/m);
  }, 120_000);

  it("still stops the gateway and a change to a job", async () => {
    const { cwd, home } = await setup();
    const gateway = await runCli(["gateway", "--home", home, "--port", "0"], { cwd });
    expect(gateway.code).toBe(2);
    expect(gateway.err).toContain("environment variable ANTHROPIC_KEY_WORK is not set");
    const add = await runCli(
      ["cron", "add", "--name", "x", "--every", "1h", "--message", "hi", "--home", home],
      { cwd },
    );
    expect(add.code).toBe(2);
    expect(add.err).toContain("environment variable ANTHROPIC_KEY_WORK is not set");
  }, 60_000);
});
