/**
 * A tool as the registry holds it: the tool with what is derived from its schema once — the
 * frozen spec providers are sent, the JSON Schema, and the one-line parameter summary.
 */
import type { ToolSpec } from "../providers/types.js";
import { type JsonSchema, describeParameters, toolJsonSchema } from "./tool-schema.js";
import type { Tool } from "./types.js";

/** A tool with what was derived from its schema once. */
export interface ToolEntry {
  tool: Tool;
  /** What providers are sent; the same frozen object on every call. */
  spec: ToolSpec;
  schema: JsonSchema;
  /** `path (string, required), …`, for invalid-argument errors. */
  expected: string;
}

/**
 * Builds a tool's entry. Throws a TypeError naming the tool when its parameters are not a zod
 * object JSON Schema can express, or its own `jsonSchema` is not an object schema.
 */
export function toolEntry(tool: Tool): ToolEntry {
  const schema = toolJsonSchema(tool);
  const spec: ToolSpec = Object.freeze({
    name: tool.name,
    description: tool.description,
    parameters: schema,
  });
  return { tool, spec, schema, expected: describeParameters(schema) };
}
