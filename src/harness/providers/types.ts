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
  /** A cap in `limits:` stopped the call before it was made (not the provider's doing). */
  | "budget"
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
 * The model router announces a wait for a cooling auth profile with `retry_wait` (no model
 * call is in flight until the matching `retry_resume`) and the next attempt with
 * `retry_resume`, yielded *before* that attempt starts. A pull-based consumer may therefore
 * give its model-call slot back on `retry_wait` and take one again while handling
 * `retry_resume`; a consumer that ignores both simply holds its slot throughout.
 *
 * The model router announces who makes each attempt (`attempt`: provider, model, auth
 * profile, when, after how long a wait) before it starts, and an attempt that failed but will
 * be followed by another (`attempt_failed`): everything that attempt streamed is void — its
 * text and tool calls are discarded, and text already shown live must be replaced. Its usage
 * events carry the call's price. Providers themselves never emit these.
 */
export type ProviderEvent =
  | {
      type: "attempt";
      provider: string;
      model: string;
      profileId: string;
      attempt: number;
      /** Epoch ms when it starts. */
      at?: number;
      /** Time waited for a cooling profile before it, in ms. */
      waitMs?: number;
    }
  | { type: "attempt_failed"; error: ProviderError }
  | { type: "text_delta"; text: string }
  | { type: "tool_call"; call: ToolCall }
  | { type: "usage"; usage: TokenUsage; costUsd?: number }
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
  /** Loads what the first call needs (the vendor SDK) ahead of it; never rejects. */
  prepare?(): Promise<void>;
}
