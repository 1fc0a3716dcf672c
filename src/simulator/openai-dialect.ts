/**
 * The OpenAI Chat Completions dialect of the simulator: stream chunks, the non-stream
 * completion and error bodies exactly as openai 6.x parses them (wire-protocols.md §4).
 */
import { argumentFragments, sseFrame, splitChunks } from "./frames.js";
import type { PlannedReply, RenderedError, SimulatedError, WireDialect } from "./types.js";

const CONTEXT_OVERFLOW_MESSAGE =
  "This model's maximum context length is 128000 tokens. However, your messages resulted in 208310 tokens. Please reduce the length of the messages.";

/** Default [type, code, message] per HTTP status. */
const ERROR_DEFAULTS: Record<number, [string, string | null, string]> = {
  400: ["invalid_request_error", null, "Invalid request."],
  401: ["invalid_request_error", "invalid_api_key", "Incorrect API key provided."],
  402: ["insufficient_quota", "insufficient_quota", "You exceeded your current quota."],
  403: ["invalid_request_error", "unsupported_country_region_territory", "Country not supported."],
  404: ["invalid_request_error", "model_not_found", "The model does not exist."],
  408: ["timeout", null, "Request timed out."],
  429: ["requests", "rate_limit_exceeded", "Rate limit reached for requests."],
  500: ["server_error", null, "The server had an error while processing your request."],
  503: ["server_error", null, "The server is overloaded or not ready yet."],
};

function usageBody(reply: PlannedReply): Record<string, unknown> {
  const { inputTokens, cacheReadTokens, cacheWriteTokens, outputTokens } = reply.usage;
  const prompt = inputTokens + cacheReadTokens + cacheWriteTokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: outputTokens,
    total_tokens: prompt + outputTokens,
    prompt_tokens_details: { cached_tokens: cacheReadTokens, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  };
}

function finishReason(reply: PlannedReply): string {
  return reply.stopReason === "tool_use" ? "tool_calls" : "stop";
}

function chunkFactory(reply: PlannedReply): (choices: unknown[], usage?: unknown) => string {
  const created = Math.floor(Date.now() / 1000);
  return (choices, usage = null) =>
    sseFrame({
      id: `chatcmpl-sim-${reply.seq}`,
      object: "chat.completion.chunk",
      created,
      model: reply.model,
      system_fingerprint: "fp_simulator",
      choices,
      usage,
    });
}

function deltaChoice(delta: unknown, finish: string | null = null): unknown {
  return { index: 0, delta, logprobs: null, finish_reason: finish };
}

function headAndText(reply: PlannedReply, chunk: ReturnType<typeof chunkFactory>): string[] {
  const frames = [chunk([deltaChoice({ role: "assistant", content: "" })])];
  for (const piece of splitChunks(reply.text, reply.chunkChars))
    frames.push(chunk([deltaChoice({ content: piece })]));
  return frames;
}

/** The OpenAI dialect. */
export const openaiDialect: WireDialect = {
  protocol: "openai",
  requestIdHeader: "x-request-id",

  streamFrames(reply) {
    const chunk = chunkFactory(reply);
    const frames = headAndText(reply, chunk);
    reply.toolCalls.forEach((call, index) => {
      const first = { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } };
      frames.push(chunk([deltaChoice({ tool_calls: [first] })]));
      for (const fragment of argumentFragments(call.argsJson, reply.chunkChars)) {
        frames.push(chunk([deltaChoice({ tool_calls: [{ index, function: { arguments: fragment } }] })]));
      }
    });
    frames.push(chunk([deltaChoice({}, finishReason(reply))]));
    // The usage chunk exists only when the request asked for it (stream_options.include_usage).
    if (reply.includeUsage) frames.push(chunk([], usageBody(reply)));
    frames.push(sseFrame("[DONE]"));
    return frames;
  },

  midStreamFrames(reply, error) {
    const frames = headAndText(reply, chunkFactory(reply));
    frames.push(sseFrame({ error: { message: error.message, type: error.type, param: null, code: null } }));
    return frames;
  },

  json(reply) {
    const toolCalls = reply.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.argsJson },
    }));
    return {
      id: `chatcmpl-sim-${reply.seq}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: reply.model,
      system_fingerprint: "fp_simulator",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: reply.text === "" && toolCalls.length > 0 ? null : reply.text,
            refusal: null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          logprobs: null,
          finish_reason: finishReason(reply),
        },
      ],
      usage: usageBody(reply),
    };
  },

  error(spec: SimulatedError): RenderedError {
    const quota = spec.code === "insufficient_quota";
    const overflow = spec.code === "context_length_exceeded";
    const fallback: [string, string | null, string] =
      spec.status >= 500 ? ERROR_DEFAULTS[500]! : ERROR_DEFAULTS[400]!;
    const [type, code, message] = quota ? ERROR_DEFAULTS[402]! : (ERROR_DEFAULTS[spec.status] ?? fallback);
    return {
      status: spec.status,
      body: {
        error: {
          message: spec.message ?? (overflow ? CONTEXT_OVERFLOW_MESSAGE : message),
          type: spec.type ?? type,
          param: overflow ? "messages" : null,
          code: spec.code ?? code,
        },
      },
    };
  },
};
