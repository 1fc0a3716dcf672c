/**
 * Contracts of the model simulator: the scripted turns tests queue, the requests it records,
 * and the small per-protocol wire interface its two dialects (OpenAI, Anthropic) implement.
 */

/** The two wire protocols the simulator speaks. */
export type SimulatedProtocol = "openai" | "anthropic";

/** Usage figures a turn may force instead of the computed ones (protocol-neutral). */
export interface SimulatedUsage {
  /** Uncached input tokens. */
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/** Options every turn may carry. */
export interface TurnPacing {
  /** Latency before each streamed chunk after the first; overrides the simulator option. */
  chunkDelayMs?: number;
  /** Overrides the computed usage figures. */
  usage?: SimulatedUsage;
}

/** An HTTP error answered in the protocol's exact error body shape. */
export interface SimulatedError {
  status: number;
  /** Error type; default per status (e.g. anthropic 529 → "overloaded_error"). */
  type?: string;
  /** Default per status. */
  message?: string;
  /** Sent as a `retry-after` header (whole or fractional seconds) when given. */
  retryAfterSeconds?: number;
  /**
   * Sent as a `retry-after-ms` header when given (OpenAI and Anthropic both send it; clients
   * read it before `retry-after`).
   */
  retryAfterMs?: number;
  /**
   * OpenAI `error.code`, Anthropic `error.details.error_code`. The code "context_length_exceeded"
   * yields the vendor's real context-overflow body in both protocols.
   */
  code?: string;
}

/**
 * One scripted reply, consumed FIFO, one per request, across both protocols (from the request's
 * API key's own script first, see `ModelSimulator.scriptFor`). Variants are told apart by their
 * distinguishing key: `error`, `hang`, `midStreamError`, `dropAfterChunks`, `toolCalls`, else `text`.
 */
export type ScriptedTurn =
  | ({ text: string } & TurnPacing)
  | ({ toolCalls: Array<{ name: string; args: unknown }>; text?: string } & TurnPacing)
  | ({ error: SimulatedError } & TurnPacing)
  /** Streams this many chunks, then destroys the socket (a non-stream request is dropped at once). */
  | ({ dropAfterChunks: number; text: string } & TurnPacing)
  /** Never answers; the socket is released when the client aborts or the simulator closes. */
  | ({ hang: true } & TurnPacing)
  /** Streams the text, then an in-stream error frame (a non-stream request gets HTTP 500). */
  | ({ midStreamError: { type: string; message: string }; text?: string } & TurnPacing);

/** One request as the simulator received it (recorded before it is answered). */
export interface SimulatedRequest {
  protocol: SimulatedProtocol;
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /**
   * The credential the request carried: Anthropic's `x-api-key`, else the token of
   * `authorization: Bearer <token>`; OpenAI the other way round. Undefined when it had none.
   */
  apiKey?: string;
  /** Parsed JSON body (undefined when there was none or it did not parse). */
  body: unknown;
  /** Epoch milliseconds when the request was received. */
  timeMs: number;
}

/** Produces the reply when the script is empty. Must be deterministic for a given request. */
export type Responder = (request: SimulatedRequest) => ScriptedTurn | Promise<ScriptedTurn>;

/** A protocol-neutral reply, rendered by a {@link WireDialect}. */
export interface PlannedReply {
  /** Per-request sequence number; ids derive from it so replies are deterministic. */
  seq: number;
  model: string;
  text: string;
  toolCalls: Array<{ id: string; name: string; argsJson: string }>;
  usage: Required<SimulatedUsage>;
  stopReason: "end_turn" | "tool_use";
  /** Characters of text (and of tool arguments) per streamed delta. */
  chunkChars: number;
  /** OpenAI only: the request asked for `stream_options.include_usage`. */
  includeUsage: boolean;
}

/** An HTTP error as the dialect renders it. */
export interface RenderedError {
  status: number;
  body: unknown;
}

/** One wire protocol: how replies, errors and stream frames look. */
export interface WireDialect {
  readonly protocol: SimulatedProtocol;
  /** Header carrying the request id. */
  readonly requestIdHeader: string;
  /** Complete SSE frames of a streamed reply, terminator included. */
  streamFrames(reply: PlannedReply): string[];
  /** Frames of a stream that fails after its text: start, text deltas, error frame. */
  midStreamFrames(reply: PlannedReply, error: { type: string; message: string }): string[];
  /** The non-stream JSON body. */
  json(reply: PlannedReply): unknown;
  error(spec: SimulatedError, requestId: string): RenderedError;
}

/** A tool call the model made after the newest ask, with its result once the gateway sent it. */
export interface ConversationCall {
  name: string;
  /** Parsed arguments (`{}` when they did not parse). */
  args: unknown;
  /** Undefined while no result follows the call. */
  result?: { content: string; isError: boolean };
}

/**
 * A request's conversation reduced to what the default responder decides on, the same for
 * both protocols: the newest ask, the tool calls made since, and the tools on offer.
 */
export interface SimulatedConversation {
  /** The person's words of the newest user message with text (the gateway's `<context>` block left out). */
  ask: string;
  /** Tool calls of the assistant turns after the ask, in order. */
  calls: ConversationCall[];
  /** Names of the tools the request offers. */
  offered: ReadonlySet<string>;
}
