/**
 * A pass-through HTTP proxy in front of the fake Telegram Bot API that tells gateway processes
 * apart and records every getUpdates request's open interval. Each gateway process (each life of
 * each node) is given its own `apiRoot`, `<proxy>/<life>`, so a request's path names the process
 * that sent it; the proxy strips that prefix and forwards to the fake. A client that goes away
 * (a SIGKILLed process's socket closes) aborts the forwarded request, so the fake sees its long
 * poll end as Telegram would. The fake itself behaves as Telegram does: a getUpdates arriving
 * while another is open ends the older one with 409 "Conflict: terminated by other getUpdates
 * request".
 */
import { type IncomingMessage, request, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One getUpdates request as the proxy saw it. */
export interface PollRecord {
  /** The process that sent it (the first path segment of its URL). */
  life: string;
  /** When the request arrived (driver clock, ms). */
  openMs: number;
  /** When its answer went back, or its client went away; undefined while open. */
  closeMs: number | undefined;
  /** HTTP status of the answer; undefined when the client went away first. */
  status: number | undefined;
  /** Update ids the answer carried. */
  updateIds: number[];
}

/** A message the bot sent (sendMessage answered ok), and which process sent it. */
export interface SentRecord {
  life: string;
  /** When the fake's answer came back through the proxy (driver clock, ms). */
  atMs: number;
  chatId: number;
  messageId: number;
  text: string;
}

/** The proxy and its records. `start()`, give each process `rootFor(life)`, `close()`. */
export class PollRecorder {
  /** Every getUpdates request, in arrival order. */
  readonly polls: PollRecord[] = [];
  /** Every message sent through the proxy, in answer order. */
  readonly sent: SentRecord[] = [];
  readonly #upstream: URL;
  readonly #now: () => number;
  readonly #open = new Set<ServerResponse>();
  #server: Server | undefined;
  #url: string | undefined;

  /** `upstream` is the fake's apiRoot; `now` the driver's clock. */
  constructor(upstream: string, now: () => number) {
    this.#upstream = new URL(upstream);
    this.#now = now;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => this.#forward(req, res));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.#url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** The `apiRoot` for one process. */
  rootFor(life: string): string {
    if (this.#url === undefined) throw new Error("PollRecorder: call start() first");
    return `${this.#url}/${life}`;
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    for (const res of this.#open) res.destroy();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  #forward(req: IncomingMessage, res: ServerResponse): void {
    const m = /^\/([^/]+)(\/.*)$/.exec(req.url ?? "/");
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const life = m[1] as string;
    const path = m[2] as string;
    const record: PollRecord | undefined = /\/getUpdates\b/i.test(path)
      ? { life, openMs: this.#now(), closeMs: undefined, status: undefined, updateIds: [] }
      : undefined;
    if (record) this.polls.push(record);
    this.#open.add(res);
    const upstream = request(
      {
        host: this.#upstream.hostname,
        port: this.#upstream.port,
        method: req.method,
        path,
        headers: { ...req.headers, host: this.#upstream.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (c: Buffer) => chunks.push(c));
        answer.on("end", () => {
          const body = Buffer.concat(chunks);
          if (record && record.closeMs === undefined) {
            record.closeMs = this.#now();
            record.status = answer.statusCode;
            record.updateIds = updateIdsOf(body);
          }
          if (/\/sendMessage\b/i.test(path)) this.#noteSent(life, body);
          this.#open.delete(res);
          if (res.destroyed) return;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(body);
        });
        answer.on("error", () => res.destroy());
      },
    );
    upstream.on("error", () => {
      this.#open.delete(res);
      res.destroy();
    });
    // The client went away (a SIGKILLed process): its long poll ends at the fake too.
    res.on("close", () => {
      this.#open.delete(res);
      if (record && record.closeMs === undefined) record.closeMs = this.#now();
      // Only a poll is ended: a write the process sent is carried out (and recorded) regardless.
      if (record && !res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  #noteSent(life: string, body: Buffer): void {
    try {
      const parsed = JSON.parse(body.toString()) as {
        ok?: boolean;
        result?: { message_id: number; chat: { id: number }; text?: string };
      };
      const m = parsed.ok ? parsed.result : undefined;
      if (m)
        this.sent.push({
          life,
          atMs: this.#now(),
          chatId: m.chat.id,
          messageId: m.message_id,
          text: m.text ?? "",
        });
    } catch {
      // Not a message.
    }
  }
}

function updateIdsOf(body: Buffer): number[] {
  try {
    const parsed = JSON.parse(body.toString()) as { ok?: boolean; result?: Array<{ update_id?: number }> };
    return parsed.ok && Array.isArray(parsed.result)
      ? parsed.result.map((u) => u.update_id).filter((id): id is number => typeof id === "number")
      : [];
  } catch {
    return [];
  }
}
