/**
 * The request side of Telegram webhook mode: Telegram POSTs one Update as JSON with the secret
 * given to setWebhook in the X-Telegram-Bot-Api-Secret-Token header.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Update } from "grammy/types";
import { readBodyCapped } from "../../http/server.js";

/**
 * Checks the secret (401 when wrong or missing), reads the body up to `maxBytes` (413 past
 * it) and parses it (400 when it is not JSON). Resolves with the update, or undefined once it
 * has answered the request itself.
 */
export async function readWebhookUpdate(
  req: IncomingMessage,
  res: ServerResponse,
  options: { secret: string; maxBytes: number },
): Promise<Update | undefined> {
  const given = Buffer.from(String(req.headers["x-telegram-bot-api-secret-token"] ?? ""));
  const secret = Buffer.from(options.secret);
  if (given.length !== secret.length || !timingSafeEqual(given, secret)) {
    res.writeHead(401).end("secret token is wrong");
    return undefined;
  }
  const body = await readBodyCapped(req, options.maxBytes);
  if (!body) {
    res.writeHead(413).end("update too large");
    return undefined;
  }
  try {
    return JSON.parse(body.toString("utf8")) as Update;
  } catch {
    res.writeHead(400).end("bad update");
    return undefined;
  }
}
