/**
 * What the model is sent about tools: the JSON Schema z.toJSONSchema makes of the file tools,
 * and how both real SDK adapters carry it to the wire (the model simulator records the body).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnthropicProvider } from "../../../src/harness/providers/anthropic.js";
import { OpenAIProvider } from "../../../src/harness/providers/openai.js";
import type { ModelProvider } from "../../../src/harness/providers/types.js";
import { fileTools } from "../../../src/harness/tools/file-tools.js";
import { ToolRegistry } from "../../../src/harness/tools/registry.js";
import { ModelSimulator } from "../../fakes/model-simulator.js";
import { collect, request } from "../providers/provider-contract.js";

function fileRegistry(): ToolRegistry {
  const registry = new ToolRegistry();
  for (const tool of fileTools()) registry.register(tool);
  return registry;
}

describe("file tool schemas", () => {
  it("are plain JSON Schema objects with descriptions, closed to unknown properties", () => {
    const specs = fileRegistry().specs();
    expect(specs.map((s) => s.name)).toEqual(["read_file", "write_file", "edit_file", "list_files"]);
    for (const spec of specs) {
      expect(spec.parameters).toMatchObject({ type: "object", additionalProperties: false });
      expect(JSON.stringify(spec.parameters)).not.toContain("$schema");
    }
    expect(specs[0]?.parameters).toEqual({
      type: "object",
      properties: {
        path: { type: "string", description: "File path relative to the workspace root, e.g. MEMORY.md" },
        offset: {
          type: "integer",
          minimum: 1,
          description: "First line to return, from 1 (default 1)",
        },
        limit: {
          type: "integer",
          minimum: 1,
          description: "Maximum number of lines to return (default: all)",
        },
      },
      required: ["path"],
      additionalProperties: false,
    });
    // Defaults make list_files' fields optional for the model.
    expect(specs[3]?.parameters).toEqual({
      type: "object",
      properties: {
        path: {
          type: "string",
          default: ".",
          description: 'Folder relative to the workspace root (default ".")',
        },
        recursive: { type: "boolean", default: false, description: "Also list subfolders (default false)" },
      },
      additionalProperties: false,
    });
  });

  it("tell the model what was wrong and what the tool takes", async () => {
    const out = await fileRegistry().execute("read_file", '{"path":"a.md","offset":0,"lines":3}', {
      workspaceDir: "/nonexistent",
      sessionKey: "s",
      runId: "r",
      signal: new AbortController().signal,
    });
    expect(out).toMatchObject({ isError: true, code: "invalid_arguments" });
    expect(out.content).toBe(
      [
        "error (invalid_arguments): invalid arguments for read_file:",
        '- "offset" must be ≥ 1, got 0',
        '- unexpected property "lines"',
        "Expected parameters: path (string, required), offset (integer ≥ 1, optional), limit (integer ≥ 1, optional).",
      ].join("\n"),
    );
  });
});

/** The `tools` array of a recorded request body. */
function toolsOf(body: unknown): unknown[] {
  const tools = (body as { tools?: unknown[] } | undefined)?.tools;
  if (!Array.isArray(tools)) throw new Error(`no tools in ${JSON.stringify(body)}`);
  return tools;
}

describe("tool schemas on the wire", () => {
  const sim = new ModelSimulator();
  beforeAll(() => sim.start());
  afterAll(() => sim.close());

  const adapters: Array<[string, () => ModelProvider, (tool: unknown) => unknown]> = [
    [
      "anthropic",
      () => new AnthropicProvider({ apiKey: "k", baseUrl: sim.url }),
      (tool) => (tool as { input_schema: unknown }).input_schema,
    ],
    [
      "openai",
      () => new OpenAIProvider({ apiKey: "k", baseUrl: `${sim.url}/v1` }),
      (tool) => (tool as { function: { parameters: unknown } }).function.parameters,
    ],
  ];

  it.each(adapters)(
    "%s sends each schema as it is, byte-identical from call to call",
    async (_name, make, schemaOf) => {
      const provider = make();
      const registry = fileRegistry();
      const before = sim.requests.length;
      for (let i = 0; i < 2; i++) {
        sim.script({ text: "ok" });
        const events = await collect(
          provider.stream(request({ tools: registry.specs() }), new AbortController().signal),
        );
        expect(events.at(-1)).toEqual({ type: "stop", reason: "end_turn" });
      }
      const [first, second] = sim.requests.slice(before).map((r) => toolsOf(r.body));
      expect(first?.map(schemaOf)).toEqual(registry.specs().map((s) => s.parameters));
      expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    },
  );
});
