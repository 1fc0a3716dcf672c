/**
 * OpenAI Chat Completions behind the ModelProvider port, through the official SDK (loaded on
 * the first call: it costs ~10 MB and ~100 ms at start-up). Streams with usage; the SDK never
 * retries (`maxRetries: 0`): retry and failover belong to the gateway's wrappers.
 */
import type { OpenAI } from "openai";
import { abortedError, toProviderError } from "./errors.js";
import { type SdkProviderOptions, checkSdkProviderOptions } from "./options.js";
import type {
  ChatMessage,
  ModelProvider,
  ModelRequest,
  ProviderEvent,
  StopReason,
  ToolCall,
} from "./types.js";
import { ProviderError } from "./provider-error.js";

type ChatCompletionMessageParam = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatCompletionFunctionTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;

/** The request field that carries the output-token limit. */
export type MaxTokensField = "max_completion_tokens" | "max_tokens";

/** Options of {@link OpenAIProvider}. */
export interface OpenAIProviderOptions extends SdkProviderOptions {
  /**
   * Where `maxTokens` goes in the request. Default "max_completion_tokens" (the official API,
   * which rejects `max_tokens` for reasoning models) without `baseUrl`, and "max_tokens" with a
   * `baseUrl`: OpenAI-compatible servers such as Ollama, vLLM and llama.cpp honour only that.
   */
  maxTokensField?: MaxTokensField;
}

const MAX_TOKENS_FIELDS: readonly MaxTokensField[] = ["max_completion_tokens", "max_tokens"];

const FINISH_REASONS: Record<string, StopReason> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  function_call: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

/**
 * The OpenAI adapter. `stream()` follows the ProviderEvent contract: text deltas as they
 * arrive, then one `tool_call` per call (reassembled by index), `usage`, and `stop`; any
 * failure, an abort included, is the final `error` event. It never throws.
 */
export class OpenAIProvider implements ModelProvider {
  readonly id = "openai";
  readonly simulated: boolean;
  readonly #options: OpenAIProviderOptions & { requestTimeoutMs: number };
  readonly #maxTokensField: MaxTokensField;
  #client: Promise<OpenAI> | undefined;

  constructor(options: OpenAIProviderOptions) {
    this.#options = checkSdkProviderOptions("OpenAIProviderOptions", options);
    const field = options.maxTokensField ?? (options.baseUrl ? "max_tokens" : "max_completion_tokens");
    if (!MAX_TOKENS_FIELDS.includes(field)) {
      throw new TypeError(
        `OpenAIProviderOptions.maxTokensField: got ${JSON.stringify(field)}, expected "max_completion_tokens" or "max_tokens"`,
      );
    }
    this.#maxTokensField = field;
    this.simulated = options.simulated ?? false;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    const calls = new Map<number, { id: string; name: string; args: string }>();
    let finish: string | null = null;
    let usage: OpenAI.Completions.CompletionUsage | undefined;
    try {
      const client = await this.#loadClient();
      const stream = await client.chat.completions.create(toOpenAIParams(request, this.#maxTokensField), {
        signal,
      });
      for await (const chunk of stream) {
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices[0];
        if (!choice) continue;
        if (choice.delta.content) yield { type: "text_delta", text: choice.delta.content };
        for (const fragment of choice.delta.tool_calls ?? []) {
          const call = calls.get(fragment.index) ?? { id: "", name: "", args: "" };
          if (fragment.id) call.id = fragment.id;
          if (fragment.function?.name) call.name = fragment.function.name;
          call.args += fragment.function?.arguments ?? "";
          calls.set(fragment.index, call);
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    } catch (err) {
      yield { type: "error", error: this.#fail(signal.aborted ? abortedError("openai", err) : err) };
      return;
    }
    // The SDK ends an aborted stream quietly, and a cut connection may end it without a finish.
    if (signal.aborted) {
      yield { type: "error", error: this.#fail(abortedError("openai", signal.reason)) };
      return;
    }
    if (finish === null) {
      const cut = new ProviderError("network", "openai network: the stream ended before finish_reason", {
        provider: "openai",
      });
      yield { type: "error", error: this.#fail(cut) };
      return;
    }
    for (const [, call] of [...calls].sort(([a], [b]) => a - b)) {
      const toolCall: ToolCall = {
        id: call.id,
        name: call.name,
        argumentsJson: call.args === "" ? "{}" : call.args,
      };
      yield { type: "tool_call", call: toolCall };
    }
    if (usage) {
      // prompt_tokens includes the cached ones; TokenUsage.inputTokens counts uncached input only.
      const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
      yield {
        type: "usage",
        usage: {
          inputTokens: usage.prompt_tokens - cached,
          outputTokens: usage.completion_tokens,
          cacheReadTokens: cached,
          cacheWriteTokens: 0,
        },
      };
    }
    yield { type: "stop", reason: FINISH_REASONS[finish] ?? "other" };
  }

  prepare(): Promise<void> {
    return this.#loadClient().then(
      () => undefined,
      () => undefined, // the call itself reports it
    );
  }

  #loadClient(): Promise<OpenAI> {
    this.#client ??= import("openai").then(
      ({ OpenAI: Client }) =>
        new Client({
          apiKey: this.#options.apiKey,
          baseURL: this.#options.baseUrl ?? "https://api.openai.com/v1",
          timeout: this.#options.requestTimeoutMs,
          maxRetries: 0,
          ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}),
        }),
    );
    return this.#client;
  }

  #fail(err: unknown): ProviderError {
    const error = toProviderError(err, "openai");
    if (error.kind !== "aborted") {
      this.#options.logger?.warn(
        { kind: error.kind, status: error.status, requestId: error.requestId },
        error.message,
      );
    }
    return error;
  }
}

function toOpenAIParams(
  request: ModelRequest,
  maxTokensField: MaxTokensField,
): OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming {
  const messages: ChatCompletionMessageParam[] = [];
  if (request.system !== "") messages.push({ role: "system", content: request.system });
  for (const message of request.messages) messages.push(toOpenAIMessage(message));
  const tools: ChatCompletionFunctionTool[] = request.tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
  return {
    model: request.model,
    messages,
    // Computed key: `max_tokens` is deprecated in the SDK's types but is what compatible servers read.
    [maxTokensField]: request.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
    // OpenAI rejects an empty tools array.
    ...(tools.length > 0 ? { tools } : {}),
  };
}

function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case "user":
      return { role: "user", content: message.content };
    case "assistant":
      if (message.toolCalls.length === 0) return { role: "assistant", content: message.content };
      return {
        role: "assistant",
        content: message.content === "" ? null : message.content,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.argumentsJson },
        })),
      };
    case "tool":
      // Chat Completions has no error flag on tool results; the content carries the failure.
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
  }
}
