import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ToolRegistry, maxResultCharsFor } from "../../../src/harness/tools/registry.js";
import { redactSecrets } from "../../../src/util/redact.js";
import type { Tool, ToolContext } from "../../../src/harness/tools/types.js";
import { ToolError } from "../../../src/harness/tools/tool-error.js";

function ctx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { workspaceDir: "/nonexistent", sessionKey: "s", runId: "r", signal };
}

function tool(name: string, run: Tool["run"]): Tool {
  return {
    name,
    description: `${name} tool`,
    groups: [],
    parameters: z.strictObject({
      path: z.string(),
      count: z.int().min(1).max(10).optional(),
      mode: z.enum(["fast", "slow"]).optional(),
      tags: z.array(z.string()).optional(),
      flag: z.boolean().optional(),
    }),
    run,
  };
}

const echo = tool("echo", async (args) => ({ content: JSON.stringify(args) }));

function registry(...tools: Tool[]): ToolRegistry {
  const r = new ToolRegistry();
  for (const t of tools) r.register(t);
  return r;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("ToolRegistry", () => {
  it("passes a result's requiresHuman through (an assignment pauses on it), and only when set", async () => {
    const asking = tool("asking", async (args) => ({ content: "may I?", requiresHuman: args.flag === true }));
    const r = registry(asking);
    expect(await r.execute("asking", '{"path":"x","flag":true}', ctx())).toEqual({
      content: "may I?",
      isError: false,
      requiresHuman: true,
    });
    expect(await r.execute("asking", '{"path":"x"}', ctx())).toEqual({ content: "may I?", isError: false });
  });

  it("registers, lists and describes tools; duplicate names throw", () => {
    const r = registry(
      echo,
      tool("other", async () => ({ content: "" })),
    );
    expect(r.list().map((t) => t.name)).toEqual(["echo", "other"]);
    expect(r.specs()[0]).toEqual({
      name: "echo",
      description: "echo tool",
      parameters: {
        type: "object",
        properties: {
          path: { type: "string" },
          count: { type: "integer", minimum: 1, maximum: 10 },
          mode: { type: "string", enum: ["fast", "slow"] },
          tags: { type: "array", items: { type: "string" } },
          flag: { type: "boolean" },
        },
        required: ["path"],
        additionalProperties: false,
      },
    });
    expect(() => r.register(echo)).toThrow(/already registered/);
  });

  it("sends z.toJSONSchema of the input side, without $schema, identical on every call", () => {
    const parameters = z.strictObject({
      query: z.string().min(1).describe("What to look for"),
      limit: z.int().min(1).default(10).describe("Results to return (default 10)"),
    });
    const r = registry({
      name: "search",
      description: "search",
      groups: [],
      parameters,
      run: async () => ({ content: "" }),
    });
    const first = r.specs();
    const generated = z.toJSONSchema(parameters, { io: "input" });
    expect(generated.$schema).toBeDefined();
    expect(first[0]?.parameters).toEqual({
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, description: "What to look for" },
        // zod's ±(2^53 − 1) bounds on integers are left out; a field with a default is optional.
        limit: { type: "integer", minimum: 1, default: 10, description: "Results to return (default 10)" },
      },
      required: ["query"],
      additionalProperties: false,
    });
    expect(generated.properties?.limit).toMatchObject({ maximum: Number.MAX_SAFE_INTEGER });
    expect(JSON.stringify(r.specs())).toBe(JSON.stringify(first));
    expect(r.specs()[0]?.parameters).toBe(first[0]?.parameters);
    expect(Object.isFrozen(first[0]?.parameters.properties)).toBe(true);
  });

  it("refuses, at registration, parameters that are not a zod object or have no JSON Schema", () => {
    const run = async () => ({ content: "" });
    const notObject = { name: "n", description: "n", parameters: z.string(), run } as unknown as Tool;
    expect(() => new ToolRegistry().register(notObject)).toThrow(/tool "n": parameters must be a zod object/);
    const dated = {
      name: "d",
      description: "d",
      groups: [],
      parameters: z.strictObject({ at: z.date() }),
      run,
    };
    expect(() => new ToolRegistry().register(dated)).toThrow(
      /tool "d": .*cannot be expressed as JSON Schema/,
    );
  });

  it("hands the tool the parsed arguments, defaults applied", async () => {
    const parameters = z.strictObject({ path: z.string().default("."), deep: z.boolean().default(false) });
    let seen: unknown;
    const r = registry({
      name: "ls",
      description: "ls",
      groups: [],
      parameters,
      run: async (args) => {
        seen = args;
        return { content: `${args.path} ${args.deep}` };
      },
    });
    expect(await r.execute("ls", "", ctx())).toEqual({ content: ". false", isError: false });
    expect(seen).toEqual({ path: ".", deep: false });
  });

  it("runs a valid call", async () => {
    const out = await registry(echo).execute(
      "echo",
      '{"path":"a","count":3,"mode":"fast","tags":["x"]}',
      ctx(),
    );
    expect(out).toEqual({ content: '{"path":"a","count":3,"mode":"fast","tags":["x"]}', isError: false });
  });

  it("names the valid tools for an unknown tool", async () => {
    const out = await registry(
      echo,
      tool("list_files", async () => ({ content: "" })),
    ).execute("rm_rf", "{}", ctx());
    expect(out.isError).toBe(true);
    expect(out.code).toBe("unknown_tool");
    expect(out.content).toContain('"rm_rf"');
    expect(out.content).toContain("echo, list_files");
  });

  it.each([
    ["not JSON", "{path:", /not valid JSON/],
    ["not an object", '["a"]', /must be a JSON object, got an array/],
    ["missing required", "{}", /missing required property "path"/],
    ["wrong type", '{"path":42}', /"path" must be a string, got the number 42/],
    ["not an integer", '{"path":"a","count":1.5}', /"count" must be an integer, got a number/],
    ["below minimum", '{"path":"a","count":0}', /"count" must be ≥ 1, got 0/],
    ["above maximum", '{"path":"a","count":11}', /"count" must be ≤ 10, got 11/],
    ["enum violation", '{"path":"a","mode":"warp"}', /"mode" must be one of "fast", "slow", got "warp"/],
    ["wrong item type", '{"path":"a","tags":["x",1]}', /"tags"\[1\] must be a string, got the number 1/],
    ["null", '{"path":null}', /"path" must be a string, got null/],
    [
      "wrong type for an enum",
      '{"path":"a","mode":2}',
      /"mode" must be one of "fast", "slow", got the number 2/,
    ],
    ["unexpected property", '{"path":"a","colour":"red"}', /unexpected property "colour"/],
  ])("refuses arguments that are %s", async (_kind, json, problem) => {
    let ran = false;
    const spy = tool("echo", async () => {
      ran = true;
      return { content: "" };
    });
    const out = await registry(spy).execute("echo", json, ctx());
    expect(out.isError).toBe(true);
    expect(out.code).toBe("invalid_arguments");
    expect(out.content).toMatch(problem);
    expect(out.content).toContain(
      'Expected parameters: path (string, required), count (integer ≥ 1 ≤ 10, optional), mode ("fast" | "slow", optional), tags (array of string, optional), flag (boolean, optional)',
    );
    expect(ran).toBe(false);
  });

  it("lists every problem of one call", async () => {
    const out = await registry(echo).execute("echo", '{"count":"3","flag":1,"x":0}', ctx());
    expect(out.content).toContain('- missing required property "path"');
    expect(out.content).toContain('- "count" must be an integer, got a string');
    expect(out.content).toContain('- "flag" must be a boolean, got the number 1');
    expect(out.content).toContain('- unexpected property "x"');
  });

  it("names nested fields, string lengths and unions", async () => {
    const parameters = z.strictObject({
      filter: z.strictObject({ field: z.string(), value: z.union([z.string(), z.number()]) }).optional(),
      name: z.string().min(2).max(5).optional(),
      exact: z.literal("yes").optional(),
    });
    const r = registry({
      name: "q",
      description: "q",
      groups: [],
      parameters,
      run: async () => ({ content: "" }),
    });
    const out = await r.execute("q", '{"filter":{"value":true,"op":"="},"name":"x","exact":"no"}', ctx());
    expect(out.content).toContain('- missing required property "field" in "filter"');
    expect(out.content).toContain('- "filter"."value" must be string or number, got a boolean');
    expect(out.content).toContain('- unexpected property "op" in "filter"');
    expect(out.content).toContain('- "name" must have at least 2 characters, got 1');
    expect(out.content).toContain('- "exact" must be "yes", got "no"');
    expect(out.content).toContain(
      'Expected parameters: filter (object, optional), name (string, optional), exact ("yes", optional).',
    );
  });

  it("turns a ToolError into its code and other throws into failed, without a stack", async () => {
    const r = registry(
      tool("a", async () => {
        throw new ToolError("not_found", "notes.md does not exist");
      }),
      tool("b", async () => {
        throw new TypeError("boom");
      }),
      tool("c", () => {
        throw new Error("sync boom");
      }),
    );
    expect(await r.execute("a", '{"path":"x"}', ctx())).toEqual({
      content: "error (not_found): notes.md does not exist",
      isError: true,
      code: "not_found",
    });
    const b = await r.execute("b", '{"path":"x"}', ctx());
    expect(b).toMatchObject({ isError: true, code: "failed" });
    expect(b.content).toContain("boom");
    expect(b.content).not.toMatch(/\n\s+at /);
    expect(await r.execute("c", '{"path":"x"}', ctx())).toMatchObject({ isError: true, code: "failed" });
  });

  it("caps long results, keeping head and tail", async () => {
    const big = `HEAD${"x".repeat(50_000)}TAIL`;
    const r = new ToolRegistry({ maxResultChars: 1000 });
    r.register(tool("big", async () => ({ content: big })));
    const out = await r.execute("big", '{"path":"x"}', ctx());
    expect(out.content.length).toBeLessThanOrEqual(1000);
    expect(out.content.startsWith("HEAD")).toBe(true);
    expect(out.content.endsWith("TAIL")).toBe(true);
    const match = /\n\n\[… (\d+) characters omitted …\]\n\n/.exec(out.content);
    expect(match).not.toBeNull();
    const head = out.content.slice(0, match?.index);
    const tail = out.content.slice((match?.index ?? 0) + (match?.[0].length ?? 0));
    expect(Number(match?.[1])).toBe(big.length - head.length - tail.length);
    expect(big.startsWith(head) && big.endsWith(tail)).toBe(true);
  });

  it("caps at 16,000 characters by default, and leaves a result of exactly that size whole", async () => {
    const r = new ToolRegistry();
    const exact = "y".repeat(16_000);
    r.register(tool("exact", async () => ({ content: exact })));
    r.register(tool("over", async () => ({ content: `HEAD${"x".repeat(20_000)}TAIL` })));
    expect((await r.execute("exact", '{"path":"x"}', ctx())).content).toBe(exact);
    const over = (await r.execute("over", '{"path":"x"}', ctx())).content;
    expect(over.length).toBeLessThanOrEqual(16_000);
    expect(over.length).toBeGreaterThan(15_000);
    expect(over.startsWith("HEAD") && over.endsWith("TAIL")).toBe(true);
    expect(over).toMatch(/\[… \d+ characters omitted …\]/);
  });

  it("redacts secrets in results", async () => {
    const key = `sk-ant-api03-${"A1b2C3d4".repeat(10)}`;
    const out = await registry(tool("leak", async () => ({ content: `key=${key} done` }))).execute(
      "leak",
      '{"path":"x"}',
      ctx(),
    );
    expect(out.content).not.toContain(key);
    expect(out.content).toContain("[REDACTED]");
    expect(out.content).toContain("done");
  });

  it("does not run a call whose run is already aborted", async () => {
    let ran = false;
    const controller = new AbortController();
    controller.abort();
    const out = await registry(
      tool("t", async () => {
        ran = true;
        return { content: "" };
      }),
    ).execute("t", '{"path":"x"}', ctx(controller.signal));
    expect(out).toMatchObject({ isError: true, code: "aborted" });
    expect(ran).toBe(false);
  });

  it("stops a call when the run is aborted while it runs", async () => {
    const controller = new AbortController();
    const r = registry(tool("hang", () => new Promise(() => {})));
    const pending = r.execute("hang", '{"path":"x"}', ctx(controller.signal));
    controller.abort();
    expect(await pending).toMatchObject({ isError: true, code: "aborted" });
  });

  it("times out a slow call and aborts its signal", async () => {
    vi.useFakeTimers();
    let seen: AbortSignal | undefined;
    const r = new ToolRegistry({ timeoutMs: 5_000 });
    // This tool ignores its signal: the boundary must still return.
    r.register(
      tool("slow", (_args, c) => {
        seen = c.signal;
        return new Promise(() => {});
      }),
    );
    const pending = r.execute("slow", '{"path":"x"}', ctx());
    await vi.advanceTimersByTimeAsync(5_000);
    const out = await pending;
    expect(out).toMatchObject({ isError: true, code: "timeout" });
    expect(out.content).toContain("5000 ms");
    expect(seen?.aborted).toBe(true);
  });

  it("rejects bad options at construction", () => {
    expect(() => new ToolRegistry({ maxResultChars: 10 })).toThrow(/maxResultChars/);
    expect(() => new ToolRegistry({ timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});

describe("ToolRegistry result cap", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function workspace(): string {
    const dir = mkdtempSync(path.join(tmpdir(), "switchyard-registry-"));
    dirs.push(dir);
    return dir;
  }
  const MARKER = /\n\n\[… (\d+) characters omitted[^\]]*\]\n\n/;
  function parts(content: string): { head: string; tail: string; marker: string } {
    const m = MARKER.exec(content);
    if (!m) throw new Error(`no marker in ${content.slice(0, 80)}`);
    return { head: content.slice(0, m.index), tail: content.slice(m.index + m[0].length), marker: m[0] };
  }
  const lines = (n: number, label: string) =>
    Array.from({ length: n }, (_, i) => `${label} line ${i}: compiled module ${i}`).join("\n");

  it("keeps more of the tail when the output ends with an error", async () => {
    const failing = `${lines(400, "build")}\nTraceback (most recent call last):\n  File "x.py", line 3\nValueError: boom\n`;
    const passing = `${lines(400, "build")}\nDone in 3.2s\n`;
    const r = new ToolRegistry({ maxResultChars: 2_000 });
    r.register(tool("fail", async () => ({ content: failing, isError: true })));
    r.register(tool("pass", async () => ({ content: passing })));

    const failed = await r.execute("fail", '{"path":"x"}', ctx());
    expect(failed.content.length).toBeLessThanOrEqual(2_000);
    const f = parts(failed.content);
    expect(f.tail.length).toBeGreaterThan(f.head.length * 2);
    expect(f.tail).toContain("Traceback (most recent call last):");
    expect(f.tail.endsWith("ValueError: boom\n")).toBe(true);

    const passed = parts((await r.execute("pass", '{"path":"x"}', ctx())).content);
    expect(passed.head.length).toBeGreaterThan(passed.tail.length * 2);
  });

  it("cuts at line breaks when one is near", async () => {
    const r = new ToolRegistry({ maxResultChars: 3_000 });
    r.register(tool("log", async () => ({ content: lines(500, "log") })));
    const out = await r.execute("log", '{"path":"x"}', ctx());
    const { head, tail, marker } = parts(out.content);
    expect(head.endsWith("\n")).toBe(true);
    expect(tail.startsWith("log line ")).toBe(true);
    expect(Number(MARKER.exec(marker)?.[1])).toBe(lines(500, "log").length - head.length - tail.length);
  });

  it("saves the full, redacted text of a cut result to outputDir and names the file", async () => {
    const dir = workspace();
    const key = `sk-ant-api03-${"A1b2C3d4".repeat(10)}`;
    const big = `key=${key}\n${lines(300, "out")}`;
    const r = new ToolRegistry({ maxResultChars: 1_000, outputDir: path.join(dir, ".agent-output") });
    r.register(tool("big", async () => ({ content: big })));
    r.register(tool("small", async () => ({ content: "short" })));

    const c = { ...ctx(), workspaceDir: dir, runId: "run-7", toolCallId: "toolu_01/AB" };
    const out = await r.execute("big", '{"path":"x"}', c);
    expect(out.content.length).toBeLessThanOrEqual(1_000);
    const saved = `.agent-output${path.sep}run-7-toolu_01_AB-1.txt`;
    expect(out.content).toContain(
      `full output (${redactSecrets(big).length} chars) saved to ${saved}; read it with read_file`,
    );
    const file = readFileSync(path.join(dir, saved), "utf8");
    expect(file).toBe(redactSecrets(big));
    expect(file).not.toContain(key);

    // Without a call id the tool's name is used; every save gets its own file.
    const again = await r.execute("big", '{"path":"x"}', { ...c, toolCallId: undefined });
    expect(again.content).toContain(`saved to .agent-output${path.sep}run-7-big-2.txt`);
    expect(readdirSync(path.join(dir, ".agent-output")).sort()).toEqual([
      "run-7-big-2.txt",
      "run-7-toolu_01_AB-1.txt",
    ]);
    expect((await r.execute("small", '{"path":"x"}', c)).content).toBe("short");
  });

  it("never overwrites a file already there", async () => {
    const dir = workspace();
    const out = path.join(dir, ".agent-output");
    const r = new ToolRegistry({ maxResultChars: 1_000, outputDir: out });
    r.register(tool("big", async () => ({ content: "z".repeat(5_000) })));
    mkdirSync(out);
    writeFileSync(path.join(out, "r-big-1.txt"), "earlier");
    const res = await r.execute("big", '{"path":"x"}', { ...ctx(), workspaceDir: dir });
    expect(res.content).toContain(`saved to .agent-output${path.sep}r-big-2.txt`);
    expect(readFileSync(path.join(out, "r-big-1.txt"), "utf8")).toBe("earlier");
  });

  it("falls back to the plain marker when the output cannot be written", async () => {
    const dir = workspace();
    writeFileSync(path.join(dir, "not-a-folder"), "");
    const r = new ToolRegistry({ maxResultChars: 1_000, outputDir: path.join(dir, "not-a-folder", "out") });
    r.register(tool("big", async () => ({ content: `HEAD${"x".repeat(5_000)}TAIL` })));
    const out = await r.execute("big", '{"path":"x"}', { ...ctx(), workspaceDir: dir });
    expect(out.content).toMatch(/\n\n\[… \d+ characters omitted …\]\n\n/);
    expect(out.content).not.toContain("saved to");
    expect(out.content.startsWith("HEAD") && out.content.endsWith("TAIL")).toBe(true);
  });

  it("names a file outside the workspace by its absolute path", async () => {
    const dir = workspace();
    const elsewhere = workspace();
    const r = new ToolRegistry({ maxResultChars: 1_000, outputDir: elsewhere });
    r.register(tool("big", async () => ({ content: "z".repeat(5_000) })));
    const out = await r.execute("big", '{"path":"x"}', { ...ctx(), workspaceDir: dir });
    expect(out.content).toContain(`saved to ${path.join(elsewhere, "r-big-1.txt")};`);
  });

  it("takes a smaller cap per call, and sizes caps from a context window", async () => {
    const r = new ToolRegistry();
    r.register(tool("big", async () => ({ content: "z".repeat(5_000) })));
    expect((await r.execute("big", '{"path":"x"}', ctx())).content).toHaveLength(5_000);
    const capped = await r.execute("big", '{"path":"x"}', ctx(), { maxResultChars: 1_000 });
    expect(capped.content.length).toBeLessThanOrEqual(1_000);
    const floor = await r.execute("big", '{"path":"x"}', ctx(), { maxResultChars: 10 });
    expect(floor.content.length).toBeLessThanOrEqual(200);
    expect(floor.content).toMatch(/characters omitted/);
    expect(maxResultCharsFor(200_000)).toBe(240_000);
    expect(maxResultCharsFor(32_000, 0.1)).toBe(12_800);
    expect(maxResultCharsFor(100)).toBe(200);
  });

  it("rejects a relative outputDir", () => {
    expect(() => new ToolRegistry({ outputDir: ".agent-output" })).toThrow(/outputDir/);
  });
});
