/**
 * Private paths are decided on what a path really names. Through the real file tools and the
 * registry's policy, in a group chat: a symlink in the workspace to MEMORY.md or to memory/, a
 * climb out of the workspace and back in, and a different case are refused like the plain name;
 * saved tool outputs of other chats are refused while the chat's own stay readable.
 */
import { mkdir, mkdtemp, readdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileTools } from "../../../src/harness/tools/file-tools.js";
import {
  SAVED_OUTPUTS_DIR,
  chatOutputsDir,
  privatePathKind,
} from "../../../src/harness/tools/private-paths.js";
import { ToolRegistry } from "../../../src/harness/tools/registry.js";
import { ToolPolicy } from "../../../src/harness/tools/tool-policy.js";
import type { ToolContext } from "../../../src/harness/tools/types.js";

let ws: string;
let tools: ToolRegistry;
const GROUP_KEY = "agent:main:telegram:group:-1001";

beforeEach(async () => {
  ws = await realpath(await mkdtemp(path.join(tmpdir(), "switchyard-private-")));
  await writeFile(path.join(ws, "MEMORY.md"), "The safe code is 4711-SECRET.\n");
  await mkdir(path.join(ws, "memory"));
  await writeFile(path.join(ws, "memory", "2026-01-01.md"), "daily SECRET-NOTE\n");
  await writeFile(path.join(ws, "todo.md"), "shared list\n");
  tools = new ToolRegistry({
    policy: new ToolPolicy(),
    maxResultChars: 400,
    outputDir: path.join(ws, SAVED_OUTPUTS_DIR),
  });
  for (const t of fileTools()) tools.register(t);
});
afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

function ctx(group: boolean, sessionKey = group ? GROUP_KEY : "agent:main:main"): ToolContext {
  return {
    workspaceDir: ws,
    sessionKey,
    runId: "run-1",
    toolCallId: "call",
    signal: new AbortController().signal,
    replyTarget: { channel: "telegram", accountId: "default", chatId: group ? "-1001" : "42" },
    asker: { senderId: "43", privateChat: !group, groupChat: group },
  };
}

const call = (name: string, args: Record<string, unknown>, group = true) =>
  tools.execute(name, JSON.stringify(args), ctx(group));

describe("private memory through links and tricks", () => {
  it("refuses a symlink to MEMORY.md and one to memory/ in a group chat; the owner reads them", async () => {
    await symlink(path.join(ws, "MEMORY.md"), path.join(ws, "notes.md"));
    await symlink("memory", path.join(ws, "journal"));
    for (const p of ["notes.md", "journal/2026-01-01.md"]) {
      const out = await call("read_file", { path: p });
      expect(out.code).toBe("denied");
      expect(out.content).toBe(
        `error (denied): read_file is not available here: denied: ${p} is private memory, only for the owner's private chat.`,
      );
    }
    expect((await call("list_files", { path: "journal" })).code).toBe("denied");
    expect((await call("read_file", { path: "notes.md" }, false)).content).toContain("4711-SECRET");
    expect((await call("read_file", { path: "todo.md" })).content).toBe("shared list\n");
  });

  it("refuses a climb out and back in, a different case, and a MEMORY.md that is itself a link", async () => {
    const back = `../${path.basename(ws)}/MEMORY.md`;
    expect((await call("read_file", { path: back })).code).toBe("denied");
    expect((await call("read_file", { path: "todo.md/../memory/2026-01-01.md" })).code).toBe("denied");
    expect((await call("read_file", { path: "Memory/2026-01-01.md" })).code).toBe("denied");
    // MEMORY.md pointing elsewhere in the workspace: the target is private memory too.
    await mkdir(path.join(ws, "kept"));
    await rm(path.join(ws, "MEMORY.md"));
    await writeFile(path.join(ws, "kept", "mem.md"), "moved SECRET\n");
    await symlink("kept/mem.md", path.join(ws, "MEMORY.md"));
    expect((await call("read_file", { path: "kept/mem.md" })).code).toBe("denied");
    expect(privatePathKind("kept/mem.md", { workspaceDir: ws })).toBe("memory");
    expect(privatePathKind("kept/other.md", { workspaceDir: ws })).toBeUndefined();
  });

  it("refuses writes through a link the same way for anyone but the owner (an HTTP sender here)", async () => {
    await symlink("memory", path.join(ws, "journal"));
    const http: ToolContext = {
      ...ctx(false, "agent:main:http:dm:client"),
      replyTarget: { channel: "http", accountId: "default", chatId: "client" },
      asker: { senderId: "client", privateChat: false, groupChat: false },
    };
    const args = { path: "journal/2026-01-01.md", old_text: "daily", new_text: "x" };
    const out = await tools.execute("edit_file", JSON.stringify(args), http);
    expect(out.code).toBe("denied");
    expect((await tools.execute("edit_file", JSON.stringify(args), ctx(false))).isError).toBe(false);
  });
});

describe("saved tool outputs", () => {
  it("a group chat cannot read the private chat's saved outputs, but reads back its own", async () => {
    await writeFile(path.join(ws, "big.txt"), `${"PRIVATE-OUTPUT ".repeat(80)}\n`);
    const own = await call("read_file", { path: "big.txt" }, false);
    const privateSaved = /saved to (\S+?\.txt)/.exec(own.content)?.[1] ?? "";
    expect(privateSaved.startsWith(`${SAVED_OUTPUTS_DIR}${path.sep}run-1`)).toBe(true);
    const refused = await call("read_file", { path: privateSaved });
    expect(refused.content).toBe(
      `error (denied): read_file is not available here: denied: ${privateSaved} is a saved tool output of another chat, readable only there.`,
    );
    await symlink(SAVED_OUTPUTS_DIR, path.join(ws, "outputs"));
    expect((await call("read_file", { path: `outputs/${path.basename(privateSaved)}` })).code).toBe("denied");
    expect((await call("list_files", { path: SAVED_OUTPUTS_DIR })).code).toBe("denied");

    // The group's own cut result is saved in its chat's folder and reads back in the group.
    const groupCut = await call("read_file", { path: "big.txt" });
    const groupSaved = /saved to (\S+?\.txt)/.exec(groupCut.content)?.[1] ?? "";
    expect(groupSaved.startsWith(path.join(SAVED_OUTPUTS_DIR, chatOutputsDir(GROUP_KEY)))).toBe(true);
    const back = await tools.execute("read_file", JSON.stringify({ path: groupSaved, limit: 1 }), ctx(true));
    expect(back.isError).toBe(false);
    // Another group cannot read it.
    const other = await tools.execute(
      "read_file",
      JSON.stringify({ path: groupSaved }),
      ctx(true, "agent:main:telegram:group:-2002"),
    );
    expect(other.code).toBe("denied");
    expect((await readdir(path.join(ws, SAVED_OUTPUTS_DIR))).sort()).toEqual(["chats", "run-1-call-1.txt"]);
  });

  it("chat folders are distinct per session and safe as one path segment", () => {
    const a = chatOutputsDir("telegram:group:1");
    const b = chatOutputsDir("telegram.group.1");
    expect(a).not.toBe(b);
    expect(a.startsWith(`chats${path.sep}`)).toBe(true);
    expect(chatOutputsDir("../../etc").split(path.sep)).toHaveLength(2);
  });
});
