/**
 * The error a fake Bot API method throws; the server turns it into the Bot API error envelope
 * `{ok:false, error_code, description, parameters?}` with HTTP status = `error_code`.
 */

/** The `parameters` object of a Bot API error. */
export interface BotApiErrorParameters {
  retry_after?: number;
  migrate_to_chat_id?: number;
}

/** A Bot API error answer; `code` is the HTTP status and `error_code`. */
export class BotApiError extends Error {
  readonly code: number;
  readonly description: string;
  readonly parameters: BotApiErrorParameters | undefined;

  constructor(code: number, description: string, parameters?: BotApiErrorParameters) {
    super(`${code}: ${description}`);
    this.name = "BotApiError";
    this.code = code;
    this.description = description;
    this.parameters = parameters;
  }

  /** The JSON body Telegram sends for this error. */
  toBody(): Record<string, unknown> {
    return {
      ok: false,
      error_code: this.code,
      description: this.description,
      ...(this.parameters ? { parameters: this.parameters } : {}),
    };
  }
}

/** `400 Bad Request: <reason>`. */
export function badRequest(reason: string): BotApiError {
  return new BotApiError(400, `Bad Request: ${reason}`);
}

/** `403 Forbidden: <reason>`. */
export function forbidden(reason: string): BotApiError {
  return new BotApiError(403, `Forbidden: ${reason}`);
}

/** The error for text Telegram cannot parse as entities (`reason` ends with the byte offset). */
export function cantParseEntities(reason: string): BotApiError {
  return badRequest(`can't parse entities: ${reason}`);
}
