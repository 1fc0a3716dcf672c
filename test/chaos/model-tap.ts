/**
 * A pass-through HTTP proxy between the gateway and the model simulator that watches each
 * streamed answer: which message it answers (the tag in the request's last user text), each
 * text chunk as it goes to the gateway, and its end. The driver aims kills at "mid-stream" with
 * it and subtracts the model's own streaming time from a restart's figure.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { findTag, lastUserText, type Tag } from "./answers.js";
import type { ModelStream } from "./types.js";

/** What the tap reports, synchronously, as bytes go to the gateway. */
export type TapEvent =
  | { type: "start"; stream: number; tag: Tag | undefined; atMs: number }
  /** A chunk holding text deltas was written to the gateway; `deltas` counts them so far. */
  | { type: "delta"; stream: number; tag: Tag | undefined; deltas: number; startMs: number; atMs: number }
  /** The answer went out whole (`cut: false`) or the gateway went away first (`cut: true`). */
  | { type: "end"; stream: number; tag: Tag | undefined; cut: boolean; atMs: number };

export interface ModelTapOptions {
  /** The simulator's base URL, e.g. `http://127.0.0.1:PORT`. */
  upstream: string;
  /** The driver's clock, in ms. */
  now: () => number;
}

/** See the file header. `start()`, point the gateway's provider baseUrl at `url`, `close()`. */
export class ModelTap {
  /** Every stream of a tagged request, in start order. */
  readonly streams: ModelStream[] = [];
  readonly #o: ModelTapOptions;
  readonly #listeners = new Set<(event: TapEvent) => void>();
  readonly #open = new Set<ServerResponse>();
  #server: Server | undefined;
  #url: string | undefined;
  #count = 0;

  constructor(options: ModelTapOptions) {
    this.#o = options;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => this.#proxy(req, res));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.#url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** `http://127.0.0.1:PORT`. */
  get url(): string {
    if (this.#url === undefined) throw new Error("ModelTap: call start() first");
    return this.#url;
  }

  /** Calls `listener` for every event; returns the unsubscribe. */
  onEvent(listener: (event: TapEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops listening and drops every open stream. */
  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    for (const res of this.#open) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #emit(event: TapEvent): void {
    for (const listener of [...this.#listeners]) listener(event);
  }

  #proxy(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", () => res.destroy());
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const tag = findTag(lastUserText(parseJson(body.toString("utf8"))));
      const stream = ++this.#count;
      const startMs = this.#o.now();
      const record: ModelStream | undefined = tag ? { chat: tag.chat, seq: tag.seq, startMs } : undefined;
      if (record) this.streams.push(record);
      this.#open.add(res);
      this.#emit({ type: "start", stream, tag, atMs: startMs });
      const { host: _host, ...headers } = req.headers;
      const upstream = request(`${this.#o.upstream}${req.url ?? "/"}`, { method: req.method, headers });
      let ended = false;
      const end = (cut: boolean) => {
        if (ended) return;
        ended = true;
        this.#open.delete(res);
        if (record && !cut) record.endMs = this.#o.now();
        this.#emit({ type: "end", stream, tag, cut, atMs: this.#o.now() });
      };
      res.on("finish", () => end(false));
      res.on("close", () => {
        if (res.writableFinished) return;
        upstream.destroy();
        end(true);
      });
      upstream.on("error", () => res.destroy());
      upstream.on("response", (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        let pending = "";
        let deltas = 0;
        answer.on("data", (chunk: Buffer) => {
          res.write(chunk);
          pending += chunk.toString("utf8");
          const frames = pending.split("\n\n");
          pending = frames.pop() ?? "";
          const before = deltas;
          for (const frame of frames) if (frame.includes('"text_delta"')) deltas++;
          if (deltas > before)
            this.#emit({ type: "delta", stream, tag, deltas, startMs, atMs: this.#o.now() });
        });
        answer.on("end", () => res.end());
        answer.on("error", () => res.destroy());
      });
      upstream.end(body);
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
