import type { ProviderError } from "./provider-error.js";

/**
 * The model-provider port: one streamed, normalized event union for every vendor, and one
 * error class whose `kind` drives retry and failover.
 */

/** The closed set of failure kinds. Code branches on these, never on message text. */
export type ProviderErrorKind =
  | "rate_limit"
  | "overloaded"
  | "auth"
  | "billing"
  | "timeout"
  | "context_overflow"
  | "invalid_request"
  | "network"
  | "aborted"
  | "unknown";

/** A tool the model may call. `parameters` is a JSON Schema object. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A tool call the model made. */
export interface ToolCall {
  id: string;
  name: string;
  /** Raw JSON text of the arguments as the model produced them. */
  argumentsJson: string;
}

/** Conversation messages in vendor-neutral form. */
export type ChatMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls: ToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; content: string; isError: boolean };

/** One model call. */
export interface ModelRequest {
  model: string;
  /** System prompt; stable across turns so prompt caches stay warm. */
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  maxTokens: number;
}

/** Token usage of one model call. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "refusal" | "other";

/**
 * The normalized stream. Contract: a stream never throws once iteration has begun; a failure
 * is delivered as a final `{ type: "error" }` event and the stream ends. A successful stream
 * ends with exactly one `stop` event. `tool_call` events carry complete arguments.
 *
 * Wrappers that retry (RetryingProvider) announce a wait with `retry_wait` (the failed attempt
 * produced nothing; no model call is in flight until the matching `retry_resume`) and the next
 * attempt with `retry_resume`, yielded *before* that attempt starts. A pull-based consumer may
 * therefore give its model-call slot back on `retry_wait` and take one again while handling
 * `retry_resume`; a consumer that ignores both simply holds its slot throughout.
 *
 * The model router announces who makes each attempt (`attempt`: provider, model, auth
 * profile) before it starts; providers themselves never emit it.
 */
export type ProviderEvent =
  | { type: "attempt"; provider: string; model: string; profileId: string; attempt: number }
  | { type: "text_delta"; text: string }
  | { type: "tool_call"; call: ToolCall }
  | { type: "usage"; usage: TokenUsage }
  | { type: "stop"; reason: StopReason }
  | { type: "retry_wait"; attempt: number; waitMs: number; error: ProviderError }
  | { type: "retry_resume"; attempt: number }
  | { type: "error"; error: ProviderError };

/** A model vendor behind one interface. */
export interface ModelProvider {
  /** "openai" | "anthropic" | ... */
  readonly id: string;
  /** True when replies come from the built-in simulator, not a real model. */
  readonly simulated: boolean;
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ProviderEvent>;
}
