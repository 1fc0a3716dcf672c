/**
 * `switchyard learnings`: list what agents reported, promote one into the workspace's MEMORY.md
 * (`## Learned`), drop one; an unknown id or a second promote is one line, exit 2.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Learning } from "../../src/store/repos/assignment-repo.js";
import type { Store } from "../../src/store/types.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

/** A home with a workspace holding a MEMORY.md, and a config naming nothing special. */
function setup(): { cwd: string; home: string; workspace: string } {
  const cwd = tempDir();
  writeFileSync(join(cwd, "switchyard.yaml"), "agent:\n  id: main\n");
  const home = join(cwd, "home");
  const workspace = join(home, "workspace");
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, "MEMORY.md"), "# MEMORY.md\n\n## People\n\n- Ann likes tea\n");
  return { cwd, home, workspace };
}

const learnings = (s: { cwd: string; home: string }, ...args: string[]) =>
  runCli(["learnings", ...args, "--home", s.home], { cwd: s.cwd });

async function withStore<T>(home: string, use: (store: Store) => Promise<T>): Promise<T> {
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** Records `text` as reported by each of `sources`; returns the learning. */
function seed(home: string, text: string, sources: string[], agentId = "main"): Promise<Learning> {
  return withStore(home, async (st) => {
    let l: Learning | undefined;
    for (const source of sources)
      l = await st.learnings.record(
        { agentId, norm: text.toLowerCase().replace(/[^a-z0-9 ]+/g, ""), text, scope: null, source },
        Date.now(),
      );
    return l as Learning;
  });
}

describe("switchyard learnings", () => {
  it("lists, promotes into MEMORY.md and drops learnings", async () => {
    const s = setup();
    expect((await learnings(s, "list")).out).toBe("no learnings yet (agents report them as they work)\n");
    const csv = await seed(s.home, "Check the CSV encoding before parsing it.", ["ta", "tb"]);
    const tz = await seed(s.home, "The API returns times in UTC.", ["tc"]);
    await seed(s.home, "Another agent's lesson.", ["td"], "other");

    const list = await learnings(s, "list");
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/^ID +STATE +SEEN IN +TEXT$/m);
    expect(list.out).toMatch(
      new RegExp(`^ *${csv.id} +candidate +2 assignments +Check the CSV encoding before parsing it\\.$`, "m"),
    );
    expect(list.out).toMatch(
      new RegExp(`^ *${tz.id} +candidate +1 assignment +The API returns times in UTC\\.$`, "m"),
    );
    expect(list.out).not.toContain("Another agent");
    const json = JSON.parse((await learnings(s, "list", "--json")).out) as Learning[];
    expect(json.map((l) => l.id)).toEqual([csv.id, tz.id]);

    const promote = await learnings(s, "promote", String(csv.id));
    expect(promote.err).toBe("");
    expect(promote.code).toBe(0);
    expect(promote.out).toBe(
      `promoted learning #${csv.id} into ${join(s.workspace, "MEMORY.md")} (## Learned)\n`,
    );
    const memory = readFileSync(join(s.workspace, "MEMORY.md"), "utf8");
    expect(memory).toContain("- Ann likes tea");
    expect(memory).toMatch(/^## Learned\n\n- Check the CSV encoding before parsing it\.$/m);

    const again = await learnings(s, "promote", `#${csv.id}`);
    expect([again.code, again.err]).toEqual([
      2,
      `switchyard learnings: learning #${csv.id} is already in MEMORY.md\n`,
    ]);

    const drop = await learnings(s, "drop", String(tz.id));
    expect([drop.code, drop.out]).toEqual([0, `dropped learning #${tz.id}: it is never promoted\n`]);
    const states = await withStore(s.home, (st) => st.learnings.list("main"));
    expect(states.map((l) => [l.id, l.state])).toEqual([
      [csv.id, "promoted"],
      [tz.id, "dropped"],
    ]);
    expect(readFileSync(join(s.workspace, "MEMORY.md"), "utf8")).not.toContain("UTC");
    expect((await learnings(s, "list")).out).toMatch(new RegExp(`^ *${tz.id} +dropped `, "m"));
    const dropTwice = await learnings(s, "drop", String(tz.id));
    expect(dropTwice.code).toBe(2);
  });

  it("refuses an unknown id, another agent's learning and a missing id with exit 2 and one line", async () => {
    const s = setup();
    const other = await seed(s.home, "Another agent's lesson.", ["ta"], "other");
    const cases: Array<[string[], string]> = [
      [["promote", "999"], 'switchyard learnings: id: no learning "999" (see learnings list)\n'],
      [["drop", "abc"], 'switchyard learnings: id: no learning "abc" (see learnings list)\n'],
      [
        ["promote", String(other.id)],
        `switchyard learnings: id: no learning "${other.id}" (see learnings list)\n`,
      ],
      [["drop"], "switchyard learnings: drop needs a learning id (see switchyard learnings list)\n"],
      [["promote", "1", "2"], 'switchyard learnings: unexpected argument "2"\n'],
    ];
    const results = await Promise.all(cases.map(([args]) => learnings(s, ...args)));
    results.forEach((r, i) => {
      const [args, err] = cases[i] as [string[], string];
      expect([r.code, r.err, r.out], args.join(" ")).toEqual([2, err, ""]);
    });
    expect(readFileSync(join(s.workspace, "MEMORY.md"), "utf8")).not.toContain("Learned");
    expect((await withStore(s.home, (st) => st.learnings.get(other.id)))?.state).toBe("candidate");
  });

  it("prints its usage for help, and for no action with exit 2", async () => {
    const s = setup();
    const help = await learnings(s, "help");
    expect([help.code, help.out]).toEqual([
      0,
      expect.stringMatching(/^usage: switchyard learnings <action>/),
    ]);
    expect((await learnings(s)).code).toBe(2);
  });
});
