/**
 * Webhook delivery for the fake Bot API: POSTs Updates as JSON with the secret header, in order
 * per bot, with bounded retries, and hands back the answer body (a webhook reply may carry an
 * API call for the fake to execute).
 */
import { type ClientRequest, request } from "node:http";
import type { TelegramUpdate, WebhookDelivery } from "./telegram-types.js";
import type { UpdateQueue } from "./telegram-update-queue.js";

/** What the webhook answered; `status` 0 when there was no HTTP answer. */
export interface WebhookAnswer {
  status: number;
  body: string;
  error?: string;
}

/** Header Telegram sets when `setWebhook` was given a `secret_token`. */
export const SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token";

const MAX_REPLY_BYTES = 1024 * 1024;

/**
 * POSTs `update` to `url` (http only) with the secret header when `secretToken` is set.
 * `inFlight` tracks the request so the fake can abort it on close. Never rejects.
 */
export function postUpdate(
  url: string,
  update: unknown,
  secretToken: string | undefined,
  timeoutMs: number,
  inFlight: Set<ClientRequest>,
): Promise<WebhookAnswer> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      resolve({ status: 0, body: "", error: `invalid webhook URL ${url}` });
      return;
    }
    if (target.protocol !== "http:") {
      resolve({ status: 0, body: "", error: `the fake delivers only to http:// webhooks, not ${url}` });
      return;
    }
    const payload = Buffer.from(JSON.stringify(update));
    const headers: Record<string, string | number> = {
      "content-type": "application/json",
      "content-length": payload.length,
    };
    if (secretToken !== undefined) headers[SECRET_HEADER] = secretToken;
    const req = request(target, { method: "POST", headers, agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_REPLY_BYTES) chunks.push(chunk);
      });
      res.on("end", () => {
        inFlight.delete(req);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") });
      });
      res.on("error", (error) => {
        inFlight.delete(req);
        resolve({ status: res.statusCode ?? 0, body: "", error: error.message });
      });
    });
    inFlight.add(req);
    req.on("timeout", () => req.destroy(new Error(`webhook timed out after ${timeoutMs} ms`)));
    req.on("error", (error) => {
      inFlight.delete(req);
      resolve({ status: 0, body: "", error: error.message });
    });
    req.end(payload);
  });
}

/** A webhook as `setWebhook` configured it, plus the last delivery error for getWebhookInfo. */
export interface WebhookTarget {
  url: string;
  secretToken: string | undefined;
  maxConnections: number;
  lastErrorDate?: number;
  lastError?: string;
}

/** Options for {@link WebhookSender}; the fake passes its own (validated) settings. */
export interface WebhookSenderOptions {
  /** Attempts per update before it is given up. */
  maxAttempts: number;
  /** Pause before retry n is n × this, in ms. */
  retryDelayMs: number;
  /** Per-request timeout, in ms. */
  timeoutMs: number;
  /** Unix seconds, for `last_error_date`. */
  nowSeconds: () => number;
}

/** A bot's side of delivery: its queue, its current webhook, and what to do with a 2xx body. */
export interface WebhookBot {
  readonly token: string;
  readonly queue: UpdateQueue;
  webhook(): WebhookTarget | undefined;
  onAnswer(body: string): void;
}

/**
 * Delivers queued updates to webhooks as Telegram does: one at a time and in order per bot,
 * retrying a failed or non-2xx delivery after a short pause, and giving it up after
 * `maxAttempts` (recorded as the webhook's last error). Every attempt lands in `deliveries`.
 */
export class WebhookSender {
  /** Every delivery attempt, in order. */
  readonly deliveries: WebhookDelivery[] = [];
  readonly #options: WebhookSenderOptions;
  readonly #inFlight = new Set<ClientRequest>();
  readonly #sleepers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  readonly #draining = new Set<string>();
  #closed = false;

  constructor(options: WebhookSenderOptions) {
    this.#options = options;
  }

  /** POSTs one update once (outside any queue) and records the attempt. */
  async sendOnce(
    token: string,
    url: string,
    update: TelegramUpdate,
    secret: string | undefined,
  ): Promise<WebhookAnswer> {
    const answer = await postUpdate(url, update, secret, this.#options.timeoutMs, this.#inFlight);
    this.#record(token, update.update_id, 1, answer);
    return answer;
  }

  /** Delivers the bot's queue until it is empty, the webhook goes away, or the sender closes. */
  async drain(bot: WebhookBot): Promise<void> {
    if (this.#draining.has(bot.token)) return;
    this.#draining.add(bot.token);
    try {
      for (;;) {
        const hook = bot.webhook();
        const update = bot.queue.peek(1)[0];
        if (this.#closed || !hook || !update) return;
        let finished = false;
        for (let attempt = 1; attempt <= this.#options.maxAttempts && !finished; attempt++) {
          const answer = await postUpdate(
            hook.url,
            update,
            hook.secretToken,
            this.#options.timeoutMs,
            this.#inFlight,
          );
          if (this.#closed) return;
          this.#record(bot.token, update.update_id, attempt, answer);
          if (answer.status >= 200 && answer.status < 300) {
            finished = true;
            bot.onAnswer(answer.body);
            break;
          }
          hook.lastErrorDate = this.#options.nowSeconds();
          hook.lastError = answer.error ?? `Wrong response from the webhook: ${answer.status}`;
          finished = attempt === this.#options.maxAttempts;
          if (!finished) await this.#sleep(this.#options.retryDelayMs * attempt);
          if (this.#closed || bot.webhook() !== hook) break; // Changed or deleted: keep the update.
        }
        if (finished) bot.queue.remove(update);
      }
    } finally {
      this.#draining.delete(bot.token);
    }
  }

  /** Aborts requests in flight and ends retry pauses; later deliveries do nothing. */
  close(): void {
    this.#closed = true;
    for (const sleeper of this.#sleepers) {
      clearTimeout(sleeper.timer);
      sleeper.resolve();
    }
    this.#sleepers.clear();
    for (const req of this.#inFlight) req.destroy(new Error("fake Bot API closed"));
    this.#inFlight.clear();
  }

  #record(token: string, updateId: number, attempt: number, answer: WebhookAnswer): void {
    this.deliveries.push({
      token,
      updateId,
      status: answer.status,
      attempt,
      ...(answer.error !== undefined ? { error: answer.error } : {}),
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const sleeper = {
        timer: setTimeout(() => {
          this.#sleepers.delete(sleeper);
          resolve();
        }, ms),
        resolve,
      };
      sleeper.timer.unref();
      this.#sleepers.add(sleeper);
    });
  }
}
