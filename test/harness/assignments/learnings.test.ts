/**
 * Learnings: the dedupe key, the one-line check, MEMORY.md's `## Learned` section, and the log
 * (a real SQLite store and a temp workspace) that promotes a lesson reported by 3 sources.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { AssignmentInputError } from "../../../src/harness/assignments/errors.js";
import {
  dropLearning,
  promoteLearning,
  recordLearning,
} from "../../../src/harness/assignments/learning-log.js";
import {
  LEARNING_MAX_CHARS,
  LEARNING_PROMOTE_AT,
  cleanLearning,
  normalizeLearning,
  promoteToMemory,
  withLearned,
} from "../../../src/harness/memory/learnings.js";
import { openSqliteStore } from "../../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../../src/store/types.js";

const root = mkdtempSync(path.join(tmpdir(), "switchyard-learnings-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let seq = 0;

describe("normalizeLearning", () => {
  it("ignores case, spacing and punctuation", () => {
    expect(normalizeLearning("Always run tests first.")).toBe(normalizeLearning("always run  tests first"));
    expect(normalizeLearning("Always run tests first.")).toBe("always run tests first");
    expect(normalizeLearning("  Deploy\tafter\n\nreview!!  ")).toBe("deploy after review");
    expect(normalizeLearning("Use `npm ci`, not `npm install`.")).toBe("use npm ci not npm install");
  });

  it("drops accents and a leading lesson/learning/note/tip marker", () => {
    expect(normalizeLearning("Café façade")).toBe("cafe facade");
    expect(normalizeLearning("Note: the API is slow")).toBe("the api is slow");
    expect(normalizeLearning("TIP : the API is slow")).toBe("the api is slow");
    expect(normalizeLearning("lesson: The API is slow.")).toBe(normalizeLearning("the api is slow"));
  });

  it("keeps letters and digits of any script", () => {
    expect(normalizeLearning("Port 8080 — Привет")).toBe("port 8080 привет");
  });
});

describe("cleanLearning", () => {
  it("makes one line of it, whitespace collapsed", () => {
    expect(cleanLearning("  run the\n tests\t first  ")).toBe("run the tests first");
  });

  it("refuses text that normalizes to fewer than 3 characters", () => {
    expect(cleanLearning("ab")).toEqual({ error: "text: expected a lesson of at least a few words" });
    expect(cleanLearning("?!.  ")).toEqual({ error: "text: expected a lesson of at least a few words" });
    expect(cleanLearning("Note: ok")).toEqual({ error: "text: expected a lesson of at least a few words" });
    expect(cleanLearning("abc")).toBe("abc");
  });

  it("takes LEARNING_MAX_CHARS characters and refuses one more", () => {
    const max = "x".repeat(LEARNING_MAX_CHARS);
    expect(cleanLearning(max)).toBe(max);
    expect(cleanLearning(`${max}y`)).toEqual({
      error: `text: ${LEARNING_MAX_CHARS + 1} characters is too long (at most ${LEARNING_MAX_CHARS}); say it in one line`,
    });
    // Counted after collapsing whitespace.
    expect(cleanLearning(`${"x".repeat(LEARNING_MAX_CHARS - 2)}\n\n\n\ny`)).toBe(
      `${"x".repeat(LEARNING_MAX_CHARS - 2)} y`,
    );
  });
});

describe("withLearned", () => {
  it("adds the section at the end when there is none", () => {
    expect(withLearned("# Memory\n\nAnn likes tea.\n", "Run tests first")).toBe(
      "# Memory\n\nAnn likes tea.\n\n## Learned\n\n- Run tests first\n",
    );
  });

  it("makes the section alone in an empty document", () => {
    expect(withLearned("", "Run tests first")).toBe("## Learned\n\n- Run tests first\n");
    expect(withLearned("\n\n  \n", "Run tests first")).toBe("## Learned\n\n- Run tests first\n");
  });

  it("adds at the end of the section, before the next ## section, which stays as it was", () => {
    const doc = "# Memory\n\n## Learned\n\n- First lesson\n- Second lesson\n\n## People\n\n- Ann likes tea\n";
    expect(withLearned(doc, "Third lesson")).toBe(
      "# Memory\n\n## Learned\n\n- First lesson\n- Second lesson\n- Third lesson\n\n## People\n\n- Ann likes tea\n",
    );
  });

  it("adds to an empty section followed by another one", () => {
    expect(withLearned("## Learned\n## People\n- Ann\n", "Run tests first")).toBe(
      "## Learned\n\n- Run tests first\n\n## People\n- Ann\n",
    );
  });

  it("finds the heading in any case and keeps ### subsections inside it", () => {
    expect(withLearned("## learned\n\n- one lesson\n\n### Older\n- two lesson\n", "three lesson")).toBe(
      "## learned\n\n- one lesson\n\n### Older\n- two lesson\n- three lesson\n",
    );
  });

  it("skips a lesson the section already has in other words of case, spacing or punctuation", () => {
    const doc = "# Memory\n\n## Learned\n\n- Always run tests first.\n\n## People\n\n- Ann\n";
    expect(withLearned(doc, "always run  tests first")).toBe(doc);
    expect(withLearned(doc, "ALWAYS run tests, first!")).toBe(doc);
  });

  it("does not count the same line in another section as a duplicate", () => {
    const doc = "## People\n\n- Run tests first\n\n## Learned\n\n- Other lesson\n";
    expect(withLearned(doc, "Run tests first")).toBe(
      "## People\n\n- Run tests first\n\n## Learned\n\n- Other lesson\n- Run tests first\n",
    );
  });

  it("reads CRLF documents and writes LF", () => {
    expect(withLearned("# Memory\r\n\r\n## Learned\r\n\r\n- One lesson\r\n", "Two lesson")).toBe(
      "# Memory\n\n## Learned\n\n- One lesson\n- Two lesson\n",
    );
  });
});

describe("promoteToMemory", () => {
  it("creates MEMORY.md when missing and leaves it alone for a duplicate", async () => {
    const ws = path.join(root, `ws-${++seq}`);
    mkdirSync(ws, { recursive: true });
    await promoteToMemory(ws, "Run tests first");
    const file = path.join(ws, "MEMORY.md");
    expect(readFileSync(file, "utf8")).toBe(
      "# MEMORY.md — long-term memory\n\n## Learned\n\n- Run tests first\n",
    );
    await promoteToMemory(ws, "run tests first.");
    expect(readFileSync(file, "utf8")).toBe(
      "# MEMORY.md — long-term memory\n\n## Learned\n\n- Run tests first\n",
    );
  });
});

describe("the learning log", () => {
  let store: Store;
  let ws: string;
  const memory = () => readFileSync(path.join(ws, "MEMORY.md"), "utf8");
  const record = (text: string, source: string, agentId = "main") =>
    recordLearning(store, ws, { agentId, text, source }, 1_000 + seq);

  beforeEach(() => {
    const dir = path.join(root, `log-${++seq}`);
    ws = path.join(dir, "workspace");
    mkdirSync(ws, { recursive: true });
    writeFileSync(path.join(ws, "MEMORY.md"), "# Memory\n\n## People\n\n- Ann likes tea\n");
    store = openSqliteStore({ path: path.join(dir, "switchyard.db") });
  });
  afterEach(() => store.close());

  it("promotes at 3 sources", () => {
    expect(LEARNING_PROMOTE_AT).toBe(3);
  });

  it("keeps the same learning from one source three times a candidate with that one source", async () => {
    for (let i = 0; i < 3; i++) {
      const { learning, promoted } = await record("Always run tests first.", "t1");
      expect(promoted).toBe(false);
      expect(learning).toMatchObject({ state: "candidate", sources: ["t1"] });
    }
    expect(await store.learnings.list("main")).toHaveLength(1);
    expect(memory()).not.toContain("Always run tests first");
  });

  it("promotes it at the third source, once under ## Learned, and a fourth source adds nothing", async () => {
    expect((await record("Always run tests first.", "t1")).promoted).toBe(false);
    expect((await record("always run  tests first", "t2")).promoted).toBe(false);
    const third = await record("ALWAYS run tests first!", "t3");
    expect(third.promoted).toBe(true);
    expect(third.learning).toMatchObject({
      state: "promoted",
      text: "Always run tests first.",
      norm: "always run tests first",
      sources: ["t1", "t2", "t3"],
    });
    expect(await store.learnings.get(third.learning.id)).toMatchObject({ state: "promoted" });
    const after = "# Memory\n\n## People\n\n- Ann likes tea\n\n## Learned\n\n- Always run tests first.\n";
    expect(memory()).toBe(after);

    const fourth = await record("Always run tests first", "t4");
    expect(fourth.promoted).toBe(false);
    expect(fourth.learning.state).toBe("promoted");
    expect(memory()).toBe(after);
    expect(memory().match(/run tests first/gi)).toHaveLength(1);
  });

  it("keeps agents apart: three sources spread over two agents promote nothing", async () => {
    await record("Run tests first", "t1", "main");
    await record("Run tests first", "t2", "main");
    const other = await record("Run tests first", "t3", "ops");
    expect(other.promoted).toBe(false);
    expect(other.learning.sources).toEqual(["t3"]);
    expect(memory()).not.toContain("Run tests first");
  });

  it("never promotes a dropped learning, whatever its count", async () => {
    const { learning } = await record("Run tests first", "t1");
    expect(await dropLearning(store, "main", String(learning.id), 2_000)).toMatchObject({ state: "dropped" });
    await record("Run tests first", "t2");
    const third = await record("Run tests first", "t3");
    expect(third.promoted).toBe(false);
    expect(third.learning.state).toBe("dropped");
    expect(memory()).not.toContain("Run tests first");
  });

  it("refuses a lesson too short, as an AssignmentInputError, and stores nothing", async () => {
    await expect(record("ok", "t1")).rejects.toThrow(AssignmentInputError);
    await expect(record("ok", "t1")).rejects.toThrow("text: expected a lesson of at least a few words");
    expect(await store.learnings.list("main")).toEqual([]);
  });

  it("promotes on the owner's word (id with or without #), then refuses to promote it again", async () => {
    const { learning } = await record("Deploys need a review", "t1");
    const promoted = await promoteLearning(store, ws, "main", `#${learning.id}`, 2_000);
    expect(promoted).toMatchObject({ id: learning.id, state: "promoted" });
    expect(memory()).toContain("## Learned\n\n- Deploys need a review\n");
    await expect(promoteLearning(store, ws, "main", String(learning.id), 3_000)).rejects.toThrow(
      `learning #${learning.id} is already in MEMORY.md`,
    );
    // Dropping a promoted one is allowed; the line stays in MEMORY.md.
    expect(await dropLearning(store, "main", String(learning.id), 4_000)).toMatchObject({ state: "dropped" });
    expect(memory()).toContain("- Deploys need a review");
    await expect(dropLearning(store, "main", String(learning.id), 5_000)).rejects.toThrow(
      `learning #${learning.id} is already dropped`,
    );
  });

  it("refuses unknown ids, ids that are not numbers, and another agent's learning", async () => {
    const { learning } = await record("Deploys need a review", "t1", "ops");
    for (const id of ["99", "#99", "abc", "0", "-1", "1.5", String(learning.id)]) {
      await expect(promoteLearning(store, ws, "main", id, 2_000)).rejects.toThrow(
        `id: no learning "${id}" (see learnings list)`,
      );
      await expect(dropLearning(store, "main", id, 2_000)).rejects.toThrow(AssignmentInputError);
    }
    expect(await store.learnings.get(learning.id)).toMatchObject({ state: "candidate" });
    expect(existsSync(path.join(ws, "MEMORY.md"))).toBe(true);
    expect(memory()).not.toContain("Deploys");
  });
});
