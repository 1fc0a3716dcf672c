/**
 * A minimal HTTP/1.1 client over node:http with a keep-alive agent: cheaper and steadier per
 * request than fetch, so client-side cost does not blur the gateway's figures.
 */
import { Agent, request } from "node:http";

/** What came back. */
export interface HttpResult {
  status: number;
  text: string;
}

/** Options for {@link HttpClient}. */
export interface HttpClientOptions {
  /** Sockets kept per host; default 64. */
  maxSockets?: number;
  /** Per-request limit; default 60_000. */
  timeoutMs?: number;
}

/** Keep-alive client; `close()` destroys its sockets. */
export class HttpClient {
  readonly #agent: Agent;
  readonly #timeoutMs: number;

  constructor(options: HttpClientOptions = {}) {
    this.#agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 64 });
    this.#timeoutMs = options.timeoutMs ?? 60_000;
  }

  /** GET; rejects on connection errors and after the timeout. */
  get(url: string, headers: Record<string, string> = {}): Promise<HttpResult> {
    return this.#send("GET", url, undefined, headers);
  }

  /** POST with a JSON body. */
  postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
    return this.#send("POST", url, JSON.stringify(body), { "content-type": "application/json", ...headers });
  }

  /** Destroys every socket. */
  close(): void {
    this.#agent.destroy();
  }

  #send(
    method: "GET" | "POST",
    url: string,
    payload: string | undefined,
    headers: Record<string, string>,
  ): Promise<HttpResult> {
    return new Promise<HttpResult>((resolve, reject) => {
      const req = request(url, { method, agent: this.#agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      });
      req.setTimeout(this.#timeoutMs, () =>
        req.destroy(new Error(`${method} ${url}: no answer in ${this.#timeoutMs} ms`)),
      );
      req.on("error", reject);
      req.end(payload);
    });
  }
}

/** The body of a `POST /v1/chat` answer, as far as the benchmarks look at it. */
export interface ChatAnswer {
  state?: string;
  replies?: Array<{ text: string }>;
}

/** True when a `/v1/chat` answer is a 200 with at least one reply. */
export function isAnswered(result: HttpResult): boolean {
  if (result.status !== 200) return false;
  try {
    const body = JSON.parse(result.text) as ChatAnswer;
    return Array.isArray(body.replies) && body.replies.length > 0;
  } catch {
    return false;
  }
}
