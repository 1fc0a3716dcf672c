/**
 * The Anthropic Messages dialect of the simulator: the named-event stream, the non-stream
 * message and error bodies exactly as @anthropic-ai/sdk 1.x parses them (wire-protocols.md §5).
 */
import { argumentFragments, sseFrame, splitChunks } from "./frames.js";
import type { PlannedReply, RenderedError, SimulatedError, WireDialect } from "./types.js";

const CONTEXT_OVERFLOW_MESSAGE = "prompt is too long: 208310 tokens > 200000 maximum";

/** Default [type, message] per HTTP status. */
const ERROR_DEFAULTS: Record<number, [string, string]> = {
  400: ["invalid_request_error", "Invalid request."],
  401: ["authentication_error", "invalid x-api-key"],
  402: ["billing_error", "Your credit balance is too low to access the Anthropic API."],
  403: ["permission_error", "Your API key does not have permission to use the specified resource."],
  404: ["not_found_error", "Not found."],
  408: ["timeout_error", "Request timed out."],
  413: ["request_too_large", "Request exceeds the maximum allowed number of bytes."],
  429: ["rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."],
  500: ["api_error", "Internal server error"],
  503: ["api_error", "Service unavailable"],
  504: ["timeout_error", "Gateway timeout"],
  529: ["overloaded_error", "Overloaded"],
};

function usageBody(reply: PlannedReply, outputTokens: number): Record<string, unknown> {
  const { inputTokens, cacheReadTokens, cacheWriteTokens } = reply.usage;
  return {
    input_tokens: inputTokens,
    cache_creation_input_tokens: cacheWriteTokens,
    cache_read_input_tokens: cacheReadTokens,
    output_tokens: outputTokens,
  };
}

function messageShell(
  reply: PlannedReply,
  content: unknown[],
  stopReason: string | null,
  outputTokens: number,
) {
  return {
    id: `msg_sim_${reply.seq}`,
    type: "message",
    role: "assistant",
    model: reply.model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      ...usageBody(reply, outputTokens),
      cache_creation: {
        ephemeral_5m_input_tokens: reply.usage.cacheWriteTokens,
        ephemeral_1h_input_tokens: 0,
      },
      service_tier: "standard",
    },
  };
}

function event(type: string, fields: Record<string, unknown> = {}): string {
  return sseFrame({ type, ...fields }, type);
}

function headAndText(reply: PlannedReply): string[] {
  const frames = [
    event("message_start", { message: messageShell(reply, [], null, 1) }),
    sseFrame({ type: "ping" }, "ping"),
  ];
  if (reply.text !== "") {
    frames.push(event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }));
    for (const text of splitChunks(reply.text, reply.chunkChars)) {
      frames.push(event("content_block_delta", { index: 0, delta: { type: "text_delta", text } }));
    }
  }
  return frames;
}

/** The Anthropic dialect. */
export const anthropicDialect: WireDialect = {
  protocol: "anthropic",
  requestIdHeader: "request-id",

  streamFrames(reply) {
    const frames = headAndText(reply);
    let index = 0;
    if (reply.text !== "") frames.push(event("content_block_stop", { index: index++ }));
    for (const call of reply.toolCalls) {
      const block = { type: "tool_use", id: call.id, name: call.name, input: {} };
      frames.push(event("content_block_start", { index, content_block: block }));
      for (const partial_json of ["", ...argumentFragments(call.argsJson, reply.chunkChars)]) {
        frames.push(
          event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } }),
        );
      }
      frames.push(event("content_block_stop", { index: index++ }));
    }
    frames.push(
      event("message_delta", {
        delta: { stop_reason: reply.stopReason, stop_sequence: null },
        usage: usageBody(reply, reply.usage.outputTokens),
      }),
      event("message_stop"),
    );
    return frames;
  },

  midStreamFrames(reply, error) {
    return [...headAndText(reply), event("error", { error: { type: error.type, message: error.message } })];
  },

  json(reply) {
    const content: unknown[] = reply.text === "" ? [] : [{ type: "text", text: reply.text, citations: null }];
    for (const call of reply.toolCalls) {
      content.push({ type: "tool_use", id: call.id, name: call.name, input: JSON.parse(call.argsJson) });
    }
    return messageShell(reply, content, reply.stopReason, reply.usage.outputTokens);
  },

  error(spec: SimulatedError, requestId: string): RenderedError {
    const overflow = spec.code === "context_length_exceeded";
    const fallback: [string, string] = spec.status >= 500 ? ERROR_DEFAULTS[500]! : ERROR_DEFAULTS[400]!;
    const [type, message] = ERROR_DEFAULTS[spec.status] ?? fallback;
    // Anthropic has no error_code for context overflow: it is told by the message.
    const details = spec.code !== undefined && !overflow ? { details: { error_code: spec.code } } : {};
    return {
      status: spec.status,
      body: {
        type: "error",
        error: {
          type: spec.type ?? type,
          message: spec.message ?? (overflow ? CONTEXT_OVERFLOW_MESSAGE : message),
          ...details,
        },
        request_id: requestId,
      },
    };
  },
};
