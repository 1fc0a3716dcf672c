/**
 * Anthropic Messages behind the ModelProvider port, through the official SDK (loaded on the
 * first call). Prompts are marked cache-stable: breakpoints on the system prompt, the last tool
 * and the last message. The SDK never retries (`maxRetries: 0`): the gateway's wrappers do.
 */
import type { Anthropic } from "@anthropic-ai/sdk";
import { abortedError, toProviderError } from "./errors.js";
import { type SdkProviderOptions, checkSdkProviderOptions } from "./options.js";
import type {
  ChatMessage,
  ModelProvider,
  ModelRequest,
  ProviderEvent,
  StopReason,
  TokenUsage,
} from "./types.js";
import { ProviderError } from "./provider-error.js";

type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlockParam = Anthropic.Messages.ContentBlockParam;

/** Options of {@link AnthropicProvider}. */
export type AnthropicProviderOptions = SdkProviderOptions;

const EPHEMERAL = { type: "ephemeral" } as const;

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: "end_turn",
  stop_sequence: "end_turn",
  tool_use: "tool_use",
  max_tokens: "max_tokens",
  model_context_window_exceeded: "max_tokens",
  refusal: "refusal",
};

/**
 * The Anthropic adapter. `stream()` follows the ProviderEvent contract: text deltas as they
 * arrive, one `tool_call` per tool_use block once the block is complete, then `usage` and
 * `stop`; any failure, an abort included, is the final `error` event. It never throws.
 */
export class AnthropicProvider implements ModelProvider {
  readonly id = "anthropic";
  readonly simulated: boolean;
  readonly #options: AnthropicProviderOptions & { requestTimeoutMs: number };
  #client: Promise<Anthropic> | undefined;

  constructor(options: AnthropicProviderOptions) {
    this.#options = checkSdkProviderOptions("AnthropicProviderOptions", options);
    this.simulated = options.simulated ?? false;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    const usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const toolBlocks = new Map<number, { id: string; name: string; json: string }>();
    let stopReason: string | null = null;
    let stopped = false;
    try {
      const client = await this.#loadClient();
      const stream = await client.messages.create(toAnthropicParams(request), { signal });
      for await (const event of stream) {
        switch (event.type) {
          case "message_start":
            readUsage(usage, event.message.usage);
            break;
          case "content_block_start":
            if (event.content_block.type === "tool_use") {
              const { id, name } = event.content_block;
              toolBlocks.set(event.index, { id, name, json: "" });
            }
            break;
          case "content_block_delta":
            if (event.delta.type === "text_delta") yield { type: "text_delta", text: event.delta.text };
            else if (event.delta.type === "input_json_delta") {
              const block = toolBlocks.get(event.index);
              if (block) block.json += event.delta.partial_json;
            }
            break;
          case "content_block_stop": {
            const block = toolBlocks.get(event.index);
            if (block) {
              toolBlocks.delete(event.index);
              const argumentsJson = block.json === "" ? "{}" : block.json;
              yield { type: "tool_call", call: { id: block.id, name: block.name, argumentsJson } };
            }
            break;
          }
          case "message_delta":
            // Cumulative totals: they replace the message_start figures, never add to them.
            readUsage(usage, event.usage);
            stopReason = event.delta.stop_reason ?? stopReason;
            break;
          case "message_stop":
            stopped = true;
            break;
        }
      }
    } catch (err) {
      yield { type: "error", error: this.#fail(signal.aborted ? abortedError("anthropic", err) : err) };
      return;
    }
    // The SDK ends an aborted stream quietly, and a cut connection may end it without message_stop.
    if (signal.aborted) {
      yield { type: "error", error: this.#fail(abortedError("anthropic", signal.reason)) };
      return;
    }
    if (!stopped) {
      const cut = new ProviderError("network", "anthropic network: the stream ended before message_stop", {
        provider: "anthropic",
      });
      yield { type: "error", error: this.#fail(cut) };
      return;
    }
    yield { type: "usage", usage };
    yield { type: "stop", reason: (stopReason && STOP_REASONS[stopReason]) || "other" };
  }

  prepare(): Promise<void> {
    return this.#loadClient().then(
      () => undefined,
      () => undefined, // the call itself reports it
    );
  }

  #loadClient(): Promise<Anthropic> {
    this.#client ??= import("@anthropic-ai/sdk").then(
      ({ Anthropic: Client }) =>
        new Client({
          apiKey: this.#options.apiKey,
          baseURL: this.#options.baseUrl ?? "https://api.anthropic.com",
          timeout: this.#options.requestTimeoutMs,
          maxRetries: 0,
          // No OpenTelemetry spans or trace headers: the gateway records its own run metrics.
          openTelemetry: false,
          ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}),
        }),
    );
    return this.#client;
  }

  #fail(err: unknown): ProviderError {
    const error = toProviderError(err, "anthropic");
    if (error.kind !== "aborted") {
      this.#options.logger?.warn(
        { kind: error.kind, status: error.status, requestId: error.requestId },
        error.message,
      );
    }
    return error;
  }
}

/** Copies the non-null usage figures (message_start and message_delta carry the same fields). */
function readUsage(
  usage: TokenUsage,
  raw: {
    input_tokens: number | null;
    output_tokens: number;
    cache_read_input_tokens: number | null;
    cache_creation_input_tokens: number | null;
  },
): void {
  if (raw.input_tokens != null) usage.inputTokens = raw.input_tokens;
  usage.outputTokens = raw.output_tokens;
  if (raw.cache_read_input_tokens != null) usage.cacheReadTokens = raw.cache_read_input_tokens;
  if (raw.cache_creation_input_tokens != null) usage.cacheWriteTokens = raw.cache_creation_input_tokens;
}

function toAnthropicParams(request: ModelRequest): Anthropic.Messages.MessageCreateParamsStreaming {
  const tools: Anthropic.Messages.Tool[] = request.tools.map((tool, i) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { type: "object", ...tool.parameters },
    ...(i === request.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
  const messages = toAnthropicMessages(request.messages);
  // The breakpoint moves with the conversation; the prefix before it is read from cache.
  const lastBlock = messages.at(-1)?.content.at(-1);
  if (lastBlock) Object.assign(lastBlock, { cache_control: EPHEMERAL });
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    // An empty text block is rejected, so an empty system prompt is left out.
    ...(request.system === ""
      ? {}
      : { system: [{ type: "text", text: request.system, cache_control: EPHEMERAL }] }),
    ...(tools.length > 0 ? { tools } : {}),
    messages,
    stream: true,
  };
}

/**
 * Maps the conversation to Anthropic turns. Content is always an array of blocks (so the
 * serialized prefix stays identical turn to turn); consecutive messages of the same role merge,
 * which puts a run of tool results into one user message.
 */
function toAnthropicMessages(
  messages: ChatMessage[],
): Array<{ role: "user" | "assistant"; content: ContentBlockParam[] }> {
  const turns: Array<{ role: "user" | "assistant"; content: ContentBlockParam[] }> = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks = toBlocks(message);
    const last = turns.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  return turns satisfies MessageParam[];
}

function toBlocks(message: ChatMessage): ContentBlockParam[] {
  switch (message.role) {
    case "user":
      // The API refuses empty text blocks; a placeholder keeps the history valid.
      return [{ type: "text", text: message.content === "" ? "(empty)" : message.content }];
    case "assistant": {
      const blocks: ContentBlockParam[] =
        message.content === "" ? [] : [{ type: "text", text: message.content }];
      for (const call of message.toolCalls) {
        blocks.push({
          type: "tool_use",
          id: call.id,
          name: call.name,
          input: parseArguments(call.argumentsJson),
        });
      }
      return blocks.length > 0 ? blocks : [{ type: "text", text: "(no reply)" }];
    }
    case "tool":
      return [
        {
          type: "tool_result",
          tool_use_id: message.toolCallId,
          content: message.content,
          is_error: message.isError,
        },
      ];
  }
}

/** Arguments as an object; invalid JSON (a truncated call) becomes `{}`. */
function parseArguments(json: string): unknown {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}
