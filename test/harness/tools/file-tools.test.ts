import { mkdir, mkdtemp, readFile, readdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_READ_BYTES, fileTools, resolveInWorkspace } from "../../../src/harness/tools/file-tools.js";
import { ToolRegistry, type ToolResult } from "../../../src/harness/tools/registry.js";

let tmp: string;
let ws: string;
let outside: string;
let tools: ToolRegistry;

beforeEach(async () => {
  tmp = await realpath(await mkdtemp(path.join(tmpdir(), "switchyard-files-")));
  ws = path.join(tmp, "ws");
  outside = path.join(tmp, "outside");
  await mkdir(ws);
  await mkdir(outside);
  await writeFile(path.join(outside, "secret.txt"), "top secret");
  tools = new ToolRegistry();
  for (const t of fileTools()) tools.register(t);
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return tools.execute(name, JSON.stringify(args), {
    workspaceDir: ws,
    sessionKey: "s",
    runId: "r",
    signal: new AbortController().signal,
  });
}

describe("file tools", () => {
  it("writes (creating folders), reads and lists", async () => {
    expect(await call("write_file", { path: "notes/2025/today.md", content: "one\ntwo\nthree\n" })).toEqual({
      content: "wrote 14 characters to notes/2025/today.md (created)",
      isError: false,
    });
    expect((await call("read_file", { path: "notes/2025/today.md" })).content).toBe("one\ntwo\nthree\n");
    expect((await call("write_file", { path: "a.md", content: "x" })).content).toContain("(created)");
    expect((await call("write_file", { path: "a.md", content: "y" })).content).toContain("(replaced)");

    expect((await call("list_files", {})).content).toBe("a.md\nnotes/");
    expect((await call("list_files", { path: ".", recursive: true })).content).toBe(
      "a.md\nnotes/\nnotes/2025/\nnotes/2025/today.md",
    );
    expect((await call("list_files", { path: "notes/2025" })).content).toBe("notes/2025/today.md");
  });

  it("reads a window of lines with offset and limit", async () => {
    await writeFile(path.join(ws, "f.md"), "l1\nl2\nl3\nl4\nl5\n");
    expect((await call("read_file", { path: "f.md", offset: 2, limit: 2 })).content).toBe(
      "l2\nl3\n\n[lines 2–3 of 5; continue with offset=4]",
    );
    expect((await call("read_file", { path: "f.md", offset: 4 })).content).toBe("l4\nl5\n\n[lines 4–5 of 5]");
    const past = await call("read_file", { path: "f.md", offset: 9 });
    expect(past).toMatchObject({ isError: true, code: "invalid_arguments" });
    expect(past.content).toContain("has 5 lines");
  });

  it("explains a missing file and refuses files over 2 MB", async () => {
    expect(await call("read_file", { path: "nope.md" })).toMatchObject({ isError: true, code: "not_found" });
    await writeFile(path.join(ws, "big.log"), Buffer.alloc(MAX_READ_BYTES + 1, 97));
    const big = await call("read_file", { path: "big.log" });
    expect(big).toMatchObject({ isError: true, code: "failed" });
    expect(big.content).toContain("over 2 MB");
  });

  it("edits one exact, unique passage", async () => {
    await writeFile(path.join(ws, "m.md"), "# Memory\n- likes tea\n- lives in Oslo\n");
    const out = await call("edit_file", {
      path: "m.md",
      old_text: "lives in Oslo",
      new_text: "lives in Bergen ($1 $&)",
    });
    expect(out).toEqual({ content: "edited m.md: replaced 1 passage starting at line 3", isError: false });
    expect(await readFile(path.join(ws, "m.md"), "utf8")).toBe(
      "# Memory\n- likes tea\n- lives in Bergen ($1 $&)\n",
    );
  });

  it("refuses an edit with no match or several matches", async () => {
    await writeFile(path.join(ws, "m.md"), "- todo\n- todo\n");
    const none = await call("edit_file", { path: "m.md", old_text: "- done", new_text: "x" });
    expect(none).toMatchObject({ isError: true, code: "not_found" });
    expect(none.content).toContain("old_text was not found in m.md");
    const two = await call("edit_file", { path: "m.md", old_text: "- todo", new_text: "x" });
    expect(two).toMatchObject({ isError: true, code: "failed" });
    expect(two.content).toContain("occurs 2 times");
    expect(await readFile(path.join(ws, "m.md"), "utf8")).toBe("- todo\n- todo\n");
  });

  it("caps recursive listings at 500 entries", async () => {
    await mkdir(path.join(ws, "many"));
    await Promise.all(
      Array.from({ length: 520 }, (_, i) => writeFile(path.join(ws, "many", `f${i}.md`), "")),
    );
    const out = (await call("list_files", { recursive: true })).content.split("\n");
    expect(out).toHaveLength(501);
    expect(out[500]).toContain("stopped at 500 entries");
  });
});

describe("workspace confinement", () => {
  it.each([
    ["read_file", { path: "../outside/secret.txt" }],
    ["read_file", { path: "/etc/passwd" }],
    ["write_file", { path: "../x", content: "x" }],
    ["write_file", { path: "a/../../x", content: "x" }],
    ["list_files", { path: ".." }],
    ["edit_file", { path: "/etc/hosts", old_text: "a", new_text: "b" }],
  ])("%s refuses %j", async (name, args) => {
    const out = await call(name, args);
    expect(out).toMatchObject({ isError: true, code: "path_outside_workspace" });
    expect(out.content).toContain(JSON.stringify(args.path));
  });

  it("refuses a symlink inside the workspace that points outside, for reading and writing", async () => {
    await symlink(path.join(outside, "secret.txt"), path.join(ws, "link.txt"));
    await symlink(outside, path.join(ws, "linkdir"));
    for (const [name, args] of [
      ["read_file", { path: "link.txt" }],
      ["write_file", { path: "link.txt", content: "pwned" }],
      ["edit_file", { path: "link.txt", old_text: "top", new_text: "no" }],
      ["read_file", { path: "linkdir/secret.txt" }],
      ["write_file", { path: "linkdir/new/file.txt", content: "pwned" }],
      ["list_files", { path: "linkdir" }],
    ] as const) {
      expect(await call(name, args), `${name} ${args.path}`).toMatchObject({
        isError: true,
        code: "path_outside_workspace",
      });
    }
    expect(await readFile(path.join(outside, "secret.txt"), "utf8")).toBe("top secret");
    expect(await readdir(outside)).toEqual(["secret.txt"]);
  });

  it("refuses a dangling symlink that would create a file outside", async () => {
    await symlink(path.join(outside, "planted.txt"), path.join(ws, "dangling.txt"));
    expect(await call("write_file", { path: "dangling.txt", content: "x" })).toMatchObject({
      code: "path_outside_workspace",
    });
    expect(await readdir(outside)).toEqual(["secret.txt"]);
  });

  it("allows symlinks that stay inside, and a workspace reached through a symlink", async () => {
    await mkdir(path.join(ws, "real"));
    await writeFile(path.join(ws, "real", "n.md"), "inside");
    await symlink(path.join(ws, "real"), path.join(ws, "alias"));
    expect((await call("read_file", { path: "alias/n.md" })).content).toBe("inside");

    const viaLink = path.join(tmp, "ws-link");
    await symlink(ws, viaLink);
    expect(resolveInWorkspace(viaLink, "real/new.md")).toBe(path.join(ws, "real", "new.md"));
    expect(resolveInWorkspace(viaLink, "sub/../real/n.md")).toBe(path.join(ws, "real", "n.md"));
  });

  it("lists symlinks without following them", async () => {
    await symlink(outside, path.join(ws, "linkdir"));
    expect((await call("list_files", { recursive: true })).content).toBe("linkdir (symbolic link)");
  });
});
