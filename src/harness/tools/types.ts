/**
 * The tool port. Tools register themselves in a ToolRegistry; every call goes through one
 * boundary (ToolRegistry.execute) that validates arguments, caps result size and formats errors
 * (a tool throws a ToolError, tool-error.ts, for a failure the model can act on).
 */
import type { z } from "zod";
import type { ToolGroup } from "./tool-groups.js";
import type { JsonSchema } from "./tool-schema.js";

/** What a tool sees of the run that called it. */
export interface ToolContext {
  /** Absolute path of the agent workspace; file tools are confined to it. */
  workspaceDir: string;
  sessionKey: string;
  runId: string;
  /**
   * The model's id for this call, when known; names the file a cut result is saved to
   * (ToolRegistryOptions.outputDir). Default: the tool's name.
   */
  toolCallId?: string;
  signal: AbortSignal;
  /** The chat this turn answers in (a reminder the agent schedules goes there); absent: none. */
  replyTarget?: ReplyTarget;
  /** Who the turn answers and whether the chat is private (a direct chat); absent: unknown. */
  asker?: Asker;
  /** What started the run (HookTurn.trigger: "user", "heartbeat", "assignment", …); absent: unknown. */
  trigger?: string;
  /** The names of the tools offered in this turn (a helper gets at most these); absent: unknown. */
  offeredTools?: readonly string[];
}

/** The person a turn answers, as tools see them. */
export interface Asker {
  /** The sender of the message (absent for background work). */
  senderId?: string;
  /** A direct chat: MEMORY.md and daily notes are loaded there. */
  privateChat: boolean;
  /** A group chat (several people); absent: not known to be one. */
  groupChat?: boolean;
}

/** A chat as tools see it (the gateway's ChatTarget, restated: the harness imports no channel). */
export interface ReplyTarget {
  channel: string;
  accountId: string;
  chatId: string;
  threadId?: string;
}

/** A tool's outcome before the boundary formats it. */
export interface ToolOutput {
  content: string;
  isError?: boolean;
  /**
   * This call's result is a question for a person, as every call of a `requiresHuman` tool is:
   * in an assignment's run it is sent to the owner and the run pauses for the answer.
   */
  requiresHuman?: boolean;
}

/**
 * The schema a tool declares its arguments with: a zod object, because both vendors require
 * the tool input to be a JSON object (`type: "object"`).
 */
export type ToolParameters = z.ZodObject;

/**
 * One tool. The boundary validates the model's arguments with `parameters` before `run` sees
 * them, and sends its JSON Schema (`z.toJSONSchema`, input side) to the model. Declare it with
 * `z.strictObject` so a misspelt property is reported to the model instead of silently dropped;
 * put what the model should know about a field in `.describe(...)`.
 */
export interface Tool<P extends ToolParameters = ToolParameters> {
  name: string;
  description: string;
  parameters: P;
  /**
   * The JSON Schema sent to the model instead of `parameters`' own, for a tool whose schema
   * comes from elsewhere (an MCP server's): `parameters` is then `z.looseObject({})`, which only
   * checks that the arguments are an object, and the tool's own end validates the rest.
   * Must be an object schema (`type: "object"`). Default: `z.toJSONSchema(parameters)`.
   */
  jsonSchema?: JsonSchema;
  /**
   * The groups the tool belongs to (tool-groups.ts), which `tools.*` policy rules name as
   * `group:<name>`; a built-in tool's must equal its TOOL_CATALOG entry.
   */
  groups: readonly ToolGroup[];
  /**
   * The call needs a person: in an assignment's run, a successful call's result is the question,
   * sent to the owner; the run pauses, and the owner's answer becomes the call's result.
   */
  requiresHuman?: boolean;
  /** Receives the parsed arguments: defaults applied, types as declared. */
  run(args: z.output<P>, ctx: ToolContext): Promise<ToolOutput>;
}

/** Why a tool call failed, as the model is told (`error (<code>): …`); see ToolError. */
export type ToolErrorCode =
  | "unknown_tool"
  | "invalid_arguments"
  | "path_outside_workspace"
  | "not_found"
  | "failed"
  | "denied"
  /** A limit of the configuration (sub-agents: depth, children at once, spawns per run). */
  | "limit";
