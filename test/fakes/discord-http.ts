/**
 * HTTP plumbing of the fake Discord REST API: Discord's JSON error bodies, request bodies (JSON
 * or multipart with `payload_json`), the X-RateLimit-* headers on every answer, scripted fault
 * answers (429s with Discord's headers, error statuses) and fault route matching.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FaultMatch, RestFault, UploadedFile } from "./discord-types.js";

/** Largest request body accepted (Discord's upload limit for bots is 10 MiB; leave room). */
const MAX_BODY_BYTES = 26 * 1024 * 1024;

/** A Discord JSON error: `{message, code, errors?}` with an HTTP status. */
export class DiscordError extends Error {
  readonly status: number;
  readonly code: number;
  readonly errors: Record<string, unknown> | undefined;

  constructor(status: number, code: number, message: string, errors?: Record<string, unknown>) {
    super(message);
    this.status = status;
    this.code = code;
    this.errors = errors;
  }

  toBody(): Record<string, unknown> {
    return { message: this.message, code: this.code, ...(this.errors ? { errors: this.errors } : {}) };
  }
}

/** 400 Invalid Form Body (50035) with one field error, as Discord nests them. */
export function formError(field: string, code: string, message: string): DiscordError {
  const path = field.split(".");
  let errors: Record<string, unknown> = { _errors: [{ code, message }] };
  for (const key of path.reverse()) errors = { [key]: errors };
  return new DiscordError(400, 50035, "Invalid Form Body", errors);
}

export const unknownChannel = () => new DiscordError(404, 10003, "Unknown Channel");
export const unknownMessage = () => new DiscordError(404, 10008, "Unknown Message");

/** A parsed request body: JSON fields plus multipart files. */
export interface ParsedBody {
  /** The body's JSON value (an array for bulk command overwrites). */
  value: unknown;
  /** The body as an object ({} when it is not one). */
  json: Record<string, unknown>;
  files: UploadedFile[];
  /** The body was not JSON (nor multipart with valid payload_json). */
  invalid: boolean;
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new DiscordError(413, 40005, "Request entity too large");
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** Parses JSON or multipart/form-data (`payload_json` plus `files[n]`) bodies. */
export async function parseBody(contentType: string, raw: Buffer): Promise<ParsedBody> {
  if (raw.length === 0) return { value: undefined, json: {}, files: [], invalid: false };
  if (contentType.startsWith("multipart/form-data")) {
    const form = await new Request("http://127.0.0.1/", {
      method: "POST",
      headers: { "content-type": contentType },
      body: raw,
    }).formData();
    const files: UploadedFile[] = [];
    let json: Record<string, unknown> = {};
    let invalid = false;
    for (const [field, value] of form.entries()) {
      if (typeof value === "string") {
        if (field === "payload_json") {
          const parsed = parseJson(value);
          if (isObject(parsed)) json = parsed;
          else invalid = true;
        } else json[field] = value;
      } else {
        const bytes = Buffer.from(await value.arrayBuffer());
        files.push({ field, name: value.name, contentType: value.type || "application/octet-stream", bytes });
      }
    }
    return { value: json, json, files, invalid };
  }
  const parsed = parseJson(raw.toString("utf8"));
  return { value: parsed, json: isObject(parsed) ? parsed : {}, files: [], invalid: parsed === undefined };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** X-RateLimit-* headers of a bucket with room left (`remaining` > 0 keeps discord.js from waiting). */
export function rateLimitHeaders(bucket: string, nowMs: number): Record<string, string> {
  return {
    "x-ratelimit-limit": "5",
    "x-ratelimit-remaining": "4",
    "x-ratelimit-reset": ((nowMs + 5000) / 1000).toFixed(3),
    "x-ratelimit-reset-after": "5.000",
    "x-ratelimit-bucket": bucket,
  };
}

/** Writes a JSON answer (or an empty one for 204) unless the response is gone. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

const DEFAULT_FAULT_ERRORS: Record<number, [number, string]> = {
  403: [50013, "Missing Permissions"],
  404: [0, "404: Not Found"],
  500: [0, "500: Internal Server Error"],
  502: [0, "502: Bad Gateway"],
  503: [0, "503: Service Unavailable"],
};

/** Answers a 429 or error-status fault (not the hang kinds) as Discord would. */
export function answerFault(
  res: ServerResponse,
  fault: Exclude<RestFault, { hang: true } | { hangAfter: true } | { until: Promise<unknown> }>,
  bucket: string,
  nowMs: number,
): number {
  if (fault.status === 429) {
    const after = fault.retryAfterSec;
    const global = fault.global === true;
    const headers: Record<string, string> =
      fault.bucketHeaders === false
        ? { "retry-after": String(after), "x-ratelimit-scope": "shared" }
        : {
            "retry-after": String(after),
            "x-ratelimit-limit": "5",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": (nowMs / 1000 + after).toFixed(3),
            "x-ratelimit-reset-after": after.toFixed(3),
            "x-ratelimit-bucket": bucket,
            "x-ratelimit-scope": global ? "global" : "user",
            ...(global ? { "x-ratelimit-global": "true" } : {}),
          };
    sendJson(res, 429, { message: "You are being rate limited.", retry_after: after, global }, headers);
    return 429;
  }
  const [code, message] = DEFAULT_FAULT_ERRORS[fault.status] ?? [0, `${fault.status}`];
  if (fault.status === 502 && fault.message === undefined) {
    // Discord's edge answers a bad gateway with HTML, not JSON.
    const html = "<html><head><title>502 Bad Gateway</title></head><body>502 Bad Gateway</body></html>";
    if (!res.headersSent && !res.destroyed) {
      res.writeHead(502, { "content-type": "text/html", "content-length": String(Buffer.byteLength(html)) });
      res.end(html);
    }
    return 502;
  }
  sendJson(res, fault.status, { message: fault.message ?? message, code: fault.code ?? code });
  return fault.status;
}

/** Whether a fault's matcher applies to this request (path after /api/v10). */
export function faultMatches(match: FaultMatch, method: string, path: string): boolean {
  if (match.method && match.method.toUpperCase() !== method) return false;
  if (match.route instanceof RegExp) return match.route.test(path);
  if (!match.route.includes(":")) return match.route === path;
  const want = match.route.split("/");
  const got = path.split("/");
  return want.length === got.length && want.every((part, i) => part.startsWith(":") || part === got[i]);
}
