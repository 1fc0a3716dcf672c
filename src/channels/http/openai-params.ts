/**
 * The chat-completion parameters the endpoint reads besides `messages`, `model` and `user`,
 * checked as OpenAI checks them: a mistyped one (`"stream": "yes"`) or an unsupported value
 * (`n: 2`) is a 400 naming the parameter, never silently read as something else.
 */
import { HttpError } from "../../http/server.js";

/** The parameters read from a valid request. */
export interface CompletionParams {
  stream: boolean;
  /** `stream_options.include_usage` (only read when streaming). */
  includeUsage: boolean;
}

/** Reads `stream`, `stream_options` and `n` from a request body; throws a 400 HttpError naming the bad one. */
export function completionParams(body: Record<string, unknown>): CompletionParams {
  const stream = optionalBoolean(body.stream, "stream");
  const options = body.stream_options;
  let includeUsage = false;
  if (options !== undefined && options !== null) {
    if (typeof options !== "object" || Array.isArray(options))
      throw invalidType("stream_options", "an object", options);
    includeUsage = optionalBoolean(
      (options as Record<string, unknown>).include_usage,
      "stream_options.include_usage",
    );
  }
  if (options !== undefined && options !== null && !stream)
    throw new HttpError(
      400,
      `"stream_options" is only allowed when "stream" is true`,
      "unsupported_value",
      "stream_options",
    );
  const n = body.n;
  if (n !== undefined && n !== null) {
    if (typeof n !== "number" || !Number.isInteger(n)) throw invalidType("n", "an integer", n);
    if (n !== 1)
      throw new HttpError(
        400,
        `"n" is ${n}: only n: 1 is supported (the agent gives one answer per message)`,
        "unsupported_value",
        "n",
      );
  }
  return { stream, includeUsage: stream && includeUsage };
}

/** A boolean parameter; absent or null reads as false. */
function optionalBoolean(value: unknown, param: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") throw invalidType(param, "a boolean (true or false)", value);
  return value;
}

function invalidType(param: string, expected: string, got: unknown): HttpError {
  const shown = JSON.stringify(got) ?? String(got);
  const cut = shown.length > 40 ? `${shown.slice(0, 40)}…` : shown;
  return new HttpError(400, `"${param}" must be ${expected}, got ${cut}`, "invalid_type", param);
}
