/**
 * An MCP server's tools as the agent's: each listed tool becomes a Tool named `<server>__<tool>`
 * in group `mcp:<server>`, its JSON Schema passed through (an object schema of at most
 * MAX_SCHEMA_BYTES, else the tool is dropped with a logged reason). A call goes through the
 * destructive-command guard when the tool takes a command (a string argument named command,
 * cmd, script or shell), then to the server; the result's text reaches the model inside an
 * untrusted block, and an `isError` result is an error.
 */
import { z } from "zod";
import { type CommandGuardObserver, checkCommand } from "../../harness/tools/command-guard.js";
import { ToolError } from "../../harness/tools/tool-error.js";
import type { JsonSchema } from "../../harness/tools/tool-schema.js";
import type { Tool, ToolOutput } from "../../harness/tools/types.js";
import { untrustedBlock } from "../../harness/tools/untrusted.js";
import { McpServerError } from "./mcp-error.js";
import type { McpCallResult, McpListedTool } from "./server-connection.js";

/** Largest JSON Schema of one tool, in bytes of JSON; a larger one drops the tool. */
export const MAX_SCHEMA_BYTES = 8 * 1024;
/** Characters of a tool's description kept. */
const MAX_DESCRIPTION_CHARS = 1_024;
/** A provider's tool name: letters, digits, _ and -, at most 64 characters. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Argument names that carry a shell command: checked by the command guard before the call. */
const COMMAND_ARGUMENTS = ["command", "cmd", "script", "shell"] as const;

/** What the tools of one server call through. */
export interface McpToolsContext {
  server: string;
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult>;
  /** `~` and $HOME for the command guard. */
  homeDir: string | undefined;
  /** Told of each guard verdict (the hooks capability's record of the built-in guard). */
  onGuard?: CommandGuardObserver | undefined;
}

/** A listed tool that is not offered, and why. */
export interface DroppedTool {
  name: string;
  reason: string;
}

/** The agent's tools for one server's listing, and the listed tools dropped (with the reason). */
export function mcpTools(
  listed: readonly McpListedTool[],
  ctx: McpToolsContext,
): { tools: Tool[]; dropped: DroppedTool[] } {
  const tools: Tool[] = [];
  const dropped: DroppedTool[] = [];
  const seen = new Set<string>();
  for (const item of listed) {
    const rawName = typeof item.name === "string" ? item.name : JSON.stringify(item.name ?? null);
    const name = `${ctx.server}__${rawName}`;
    const problem = nameProblem(name, rawName, seen) ?? schemaProblem(item.inputSchema);
    if (problem !== undefined) {
      dropped.push({ name: rawName, reason: problem });
      continue;
    }
    seen.add(name);
    tools.push(toTool(name, rawName, item, ctx));
  }
  return { tools, dropped };
}

function nameProblem(name: string, rawName: string, seen: ReadonlySet<string>): string | undefined {
  if (!TOOL_NAME.test(name))
    return `its name ${JSON.stringify(rawName)} makes ${JSON.stringify(name)}, not a valid tool name (letters, digits, _ and -, at most 64)`;
  if (seen.has(name)) return "it is listed twice";
  return undefined;
}

/** Why a listed input schema is not usable, or undefined when it is an object schema within the cap. */
export function schemaProblem(schema: unknown): string | undefined {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    return "its inputSchema is not a JSON Schema object";
  const s = schema as Record<string, unknown>;
  if (s.type !== "object") return 'its inputSchema is not an object schema (type: "object")';
  if (
    s.properties !== undefined &&
    (typeof s.properties !== "object" || s.properties === null || Array.isArray(s.properties))
  )
    return "its inputSchema's properties is not a mapping";
  if (
    s.required !== undefined &&
    !(Array.isArray(s.required) && s.required.every((r) => typeof r === "string"))
  )
    return "its inputSchema's required is not a list of names";
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(schema));
  } catch {
    return "its inputSchema cannot be written as JSON";
  }
  if (bytes > MAX_SCHEMA_BYTES)
    return `its inputSchema is ${bytes} bytes, over the ${MAX_SCHEMA_BYTES}-byte cap`;
  return undefined;
}

function toTool(name: string, rawName: string, item: McpListedTool, ctx: McpToolsContext): Tool {
  const schema = item.inputSchema as JsonSchema;
  const described =
    typeof item.description === "string"
      ? item.description
      : typeof item.title === "string"
        ? item.title
        : "";
  const description = `${described.slice(0, MAX_DESCRIPTION_CHARS) || `Tool ${rawName}`} (MCP server ${ctx.server})`;
  const commandArgs = COMMAND_ARGUMENTS.filter((arg) => {
    const prop = schema.properties?.[arg];
    return typeof prop === "object" && prop !== null && prop.type === "string";
  });
  return {
    name,
    description,
    parameters: z.looseObject({}),
    jsonSchema: schema,
    groups: [`mcp:${ctx.server}`],
    async run(args, toolCtx): Promise<ToolOutput> {
      for (const arg of commandArgs) {
        const value = args[arg];
        if (typeof value !== "string") continue;
        const started = performance.now();
        const verdict = checkCommand(value, {
          workspaceDir: toolCtx.workspaceDir,
          homeDir: ctx.homeDir ?? toolCtx.workspaceDir,
        });
        ctx.onGuard?.(verdict, performance.now() - started);
        if (verdict.type === "block") return { content: verdict.reason, isError: true };
      }
      let result: McpCallResult;
      try {
        result = await ctx.call(rawName, args, toolCtx.signal);
      } catch (err) {
        if (err instanceof McpServerError) throw new ToolError("failed", err.message, { cause: err });
        throw err;
      }
      const text = resultText(result);
      return {
        content: untrustedBlock(`mcp ${ctx.server}.${rawName}`, text).text,
        isError: result.isError === true,
      };
    },
  };
}

/** The text items joined; other items named in one line each; structured content when no text. */
export function resultText(result: McpCallResult): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    if (typeof item !== "object" || item === null) continue;
    const c = item as Record<string, unknown>;
    if (c.type === "text" && typeof c.text === "string") parts.push(c.text);
    else if (c.type === "resource_link" && typeof c.uri === "string") parts.push(`[resource ${c.uri}]`);
    else if (c.type === "resource") {
      const r = c.resource as Record<string, unknown> | undefined;
      parts.push(typeof r?.text === "string" ? r.text : `[resource ${String(r?.uri ?? "")}]`);
    } else
      parts.push(
        `[${String(c.type)} content${typeof c.mimeType === "string" ? ` ${c.mimeType}` : ""} not shown]`,
      );
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    return JSON.stringify(result.structuredContent);
  return parts.length === 0 ? "(no content)" : parts.join("\n");
}
