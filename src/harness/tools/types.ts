/**
 * The tool port. Tools register themselves in a ToolRegistry; every call goes through one
 * boundary (ToolRegistry.execute) that validates arguments, caps result size and formats errors.
 */

/** What a tool sees of the run that called it. */
export interface ToolContext {
  /** Absolute path of the agent workspace; file tools are confined to it. */
  workspaceDir: string;
  sessionKey: string;
  runId: string;
  signal: AbortSignal;
}

/** A tool's outcome before the boundary formats it. */
export interface ToolOutput {
  content: string;
  isError?: boolean;
}

/** One tool. `parameters` is a JSON Schema (type: object) the boundary validates against. */
export interface Tool {
  name: string;
  description: string;
  parameters: JsonSchemaObject;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput>;
}

/** The subset of JSON Schema the boundary validates. */
export interface JsonSchemaObject {
  type: "object";
  properties: Record<string, JsonSchemaProperty>;
  required?: string[];
  additionalProperties?: boolean;
}

export interface JsonSchemaProperty {
  type: "string" | "number" | "integer" | "boolean" | "array" | "object";
  description?: string;
  enum?: string[];
  items?: JsonSchemaProperty;
  minimum?: number;
  maximum?: number;
}

/** A tool error the model can act on: a stable code and a message that lists what is valid. */
export class ToolError extends Error {
  readonly code: "unknown_tool" | "invalid_arguments" | "path_outside_workspace" | "not_found" | "failed";
  constructor(code: ToolError["code"], message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "ToolError";
    this.code = code;
  }
}
