/**
 * Request parsing for the fake Bot API: method parameters may come as a query string, JSON,
 * `application/x-www-form-urlencoded` or `multipart/form-data` (files as `attach://<part>` or
 * as a part named after the field), as the real server accepts. Form fields stay strings; the
 * typed readers below decode numbers and JSON-encoded objects (`reply_parameters={"message_id":1}`).
 */
import type { IncomingMessage } from "node:http";
import { BotApiError, badRequest } from "./telegram-errors.js";
import { readBodyCapped } from "../../src/http/server.js";

/** A file sent in a multipart request. */
export interface UploadedFile {
  readonly kind: "upload";
  readonly filename: string;
  readonly contentType: string;
  readonly content: Buffer;
}

/** Method parameters after parsing. */
export type ApiParams = Record<string, unknown>;

/** Reads the whole body, failing with 413 past `maxBytes`. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const body = await readBodyCapped(req, maxBytes);
  if (!body) throw new BotApiError(413, "Request Entity Too Large");
  return body;
}

/** Parses query string and body into one parameter object (body fields win). */
export function parseParams(query: URLSearchParams, contentType: string, body: Buffer): ApiParams {
  const params: ApiParams = {};
  for (const [key, value] of query) params[key] = value;
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  if (body.length === 0) return params;
  if (type === "application/json") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      throw badRequest("invalid JSON in request body");
    }
    if (isRecord(parsed)) Object.assign(params, parsed);
  } else if (type === "application/x-www-form-urlencoded") {
    for (const [key, value] of new URLSearchParams(body.toString("utf8"))) params[key] = value;
  } else if (type === "multipart/form-data") {
    const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
    const marker = boundary?.[1] ?? boundary?.[2];
    if (!marker) throw badRequest("multipart boundary is missing");
    Object.assign(params, parseMultipart(body, marker));
  }
  return params;
}

function parseMultipart(body: Buffer, boundary: string): ApiParams {
  const delimiter = Buffer.from(`--${boundary}`);
  const fields: ApiParams = {};
  const files = new Map<string, UploadedFile>();
  let position = body.indexOf(delimiter);
  while (position >= 0) {
    let start = position + delimiter.length;
    if (body.subarray(start, start + 2).toString("latin1") === "--") break;
    if (body[start] === 13 && body[start + 1] === 10) start += 2;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const end = body[next - 2] === 13 && body[next - 1] === 10 ? next - 2 : next;
    const part = body.subarray(start, end);
    const headerEnd = part.indexOf("\r\n\r\n");
    if (headerEnd >= 0) {
      const headers = part.subarray(0, headerEnd).toString("utf8").split("\r\n");
      const content = part.subarray(headerEnd + 4);
      let disposition = "";
      let contentType = "application/octet-stream";
      for (const line of headers) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === "content-disposition") disposition = value;
        else if (name === "content-type") contentType = value;
      }
      const name = dispositionParam(disposition, "name");
      const filename = dispositionParam(disposition, "filename");
      if (name !== undefined && filename !== undefined) {
        files.set(name, { kind: "upload", filename, contentType, content: Buffer.from(content) });
      } else if (name !== undefined) {
        fields[name] = content.toString("utf8");
      }
    }
    position = next;
  }
  // grammY sends `photo=attach://<id>` plus a file part named `<id>`; other clients name the part `photo`.
  const attached = new Set<string>();
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value !== "string" || !value.startsWith("attach://")) continue;
    const file = files.get(value.slice("attach://".length));
    if (file) {
      fields[key] = file;
      attached.add(value.slice("attach://".length));
    }
  }
  for (const [name, file] of files) if (!attached.has(name)) fields[name] = file;
  return fields;
}

function dispositionParam(disposition: string, key: string): string | undefined {
  const match = new RegExp(`(?:^|;)\\s*${key}=(?:"([^"]*)"|([^;]*))`, "i").exec(disposition);
  if (!match) return undefined;
  return (match[1] ?? match[2] ?? "").trim();
}

/** True for a plain (non-array) object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for a multipart upload. */
export function isUpload(value: unknown): value is UploadedFile {
  return isRecord(value) && value.kind === "upload" && Buffer.isBuffer(value.content);
}

/** An integer parameter (number or numeric string), or undefined when absent or not a number. */
export function intParam(params: ApiParams, name: string): number | undefined {
  const value = params[name];
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^-?\d+$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

/** A string parameter (numbers are stringified), or undefined. */
export function stringParam(params: ApiParams, name: string): string | undefined {
  const value = params[name];
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** A boolean parameter (`true`, `"true"`, `1`, `"1"`); false when absent. */
export function boolParam(params: ApiParams, name: string): boolean {
  const value = params[name];
  return value === true || value === 1 || value === "true" || value === "1";
}

/** An object parameter, given as an object or as JSON text. */
export function objectParam(params: ApiParams, name: string): Record<string, unknown> | undefined {
  const value = params[name];
  if (isRecord(value)) return value;
  if (typeof value === "string") {
    try {
      const parsed: unknown = JSON.parse(value);
      return isRecord(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** An array parameter, given as an array or as JSON text. */
export function arrayParam(params: ApiParams, name: string): unknown[] | undefined {
  const value = params[name];
  if (Array.isArray(value)) return value;
  if (typeof value === "string") {
    try {
      const parsed: unknown = JSON.parse(value);
      return Array.isArray(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The `chat_id` parameter: a number, or an `@username` string. */
export function chatIdParam(params: ApiParams): number | string | undefined {
  return intParam(params, "chat_id") ?? stringParam(params, "chat_id");
}
