/**
 * Request parsing and the error type of the fake Slack Web API. Bodies come form-urlencoded
 * (what `@slack/web-api` sends, object values JSON-encoded into fields) or as JSON; the token
 * comes as `Authorization: Bearer …` or as a `token` field, as Slack accepts both.
 */
import type { IncomingMessage } from "node:http";
import { readBodyCapped } from "../../src/http/server.js";

/** A Web API error: HTTP 200 `{ok:false, error, ...fields}`. */
export class SlackApiError extends Error {
  readonly error: string;
  readonly fields: Record<string, unknown>;

  constructor(error: string, fields: Record<string, unknown> = {}) {
    super(error);
    this.name = "SlackApiError";
    this.error = error;
    this.fields = fields;
  }

  /** The JSON body Slack sends for this error. */
  toBody(): Record<string, unknown> {
    return { ok: false, error: this.error, ...this.fields };
  }
}

/** A request the server refuses at the HTTP level (body too large, bad JSON). */
export class HttpError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Method parameters after parsing. */
export type Params = Record<string, unknown>;

/** Form fields that carry JSON, decoded after parsing (Slack decodes them too). */
const JSON_FIELDS = new Set([
  "metadata",
  "blocks",
  "attachments",
  "loading_messages",
  "prompts",
  "unfurls",
  "chunks",
]);

/** Reads the whole body; 413 past `maxBytes`. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const body = await readBodyCapped(req, maxBytes);
  if (!body) throw new HttpError(413, "Request Entity Too Large");
  return body;
}

/** Query string and body as one parameter object (body fields win); JSON fields decoded. */
export function parseParams(query: URLSearchParams, contentType: string, body: Buffer): Params {
  const params: Params = {};
  for (const [key, value] of query) params[key] = value;
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  if (body.length > 0 && type === "application/json") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      // Slack answers malformed JSON bodies with invalid_json.
      throw new SlackApiError("invalid_json");
    }
    if (isRecord(parsed)) Object.assign(params, parsed);
  } else if (body.length > 0) {
    // Form-urlencoded, and Slack's fallback for anything else.
    for (const [key, value] of new URLSearchParams(body.toString("utf8"))) params[key] = value;
  }
  for (const key of JSON_FIELDS) {
    const value = params[key];
    if (typeof value !== "string") continue;
    try {
      params[key] = JSON.parse(value);
    } catch {
      // Left as a string: the method reports it (e.g. invalid_metadata_format).
    }
  }
  return params;
}

/** The request's token: the bearer header, else a `token` parameter. */
export function requestToken(req: IncomingMessage, params: Params): string | undefined {
  const header = req.headers.authorization;
  const bearer = header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  if (bearer) return bearer;
  return typeof params.token === "string" && params.token !== "" ? params.token : undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string parameter (numbers are stringified); undefined when absent or empty. */
export function str(params: Params, key: string): string | undefined {
  const value = params[key];
  if (typeof value === "number") return String(value);
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A required string parameter; `error` (default `invalid_arguments`) when missing. */
export function requireStr(params: Params, key: string, error = "invalid_arguments"): string {
  const value = str(params, key);
  if (value === undefined) throw new SlackApiError(error);
  return value;
}

/** Slack's booleans: true, 1, "true", "1". */
export function bool(params: Params, key: string): boolean {
  const value = params[key];
  return value === true || value === 1 || value === "true" || value === "1";
}

/** An integer parameter; undefined when absent, `invalid_arguments` when not an integer. */
export function int(params: Params, key: string): number | undefined {
  const value = params[key];
  if (value === undefined || value === "") return undefined;
  const n = typeof value === "number" ? value : Number(value);
  if (!Number.isInteger(n)) throw new SlackApiError("invalid_arguments");
  return n;
}

/** Whether `ts` looks like a Slack message timestamp ("1700000000.000100"). */
export function isTs(ts: string): boolean {
  return /^\d{1,10}\.\d{6}$/.test(ts);
}
