/**
 * A client of the admin live stream (`GET /v1/admin/events`) over node:http that only counts:
 * frames per SSE event name and bytes, without parsing the JSON, so the client stays cheap.
 */
import { type ClientRequest, request } from "node:http";

/** An open stream and its counts so far. */
export interface SseCounter {
  /** Frames received per `event:` name. */
  readonly frames: Map<string, number>;
  /** Body bytes received. */
  readonly bytes: number;
  /** Closes the connection; idempotent. */
  close(): void;
}

/** Opens the stream at `url`; resolves once the server answered 200 with an event stream. */
export function openSseCounter(url: string, timeoutMs = 10_000): Promise<SseCounter> {
  return new Promise((resolve, reject) => {
    const frames = new Map<string, number>();
    let bytes = 0;
    let buffer = "";
    let req: ClientRequest | undefined;
    const counter: SseCounter = {
      frames,
      get bytes() {
        return bytes;
      },
      close: () => req?.destroy(),
    };
    req = request(url, { headers: { accept: "text/event-stream" } }, (res) => {
      req?.setTimeout(0); // only the wait for the head is limited: an open stream may be quiet
      if (res.statusCode !== 200 || !String(res.headers["content-type"]).startsWith("text/event-stream")) {
        res.resume();
        reject(new Error(`GET ${url}: ${res.statusCode} ${res.headers["content-type"]}`));
        return;
      }
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        bytes += Buffer.byteLength(chunk);
        buffer += chunk;
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const name = /^event: (.*)$/m.exec(frame)?.[1];
          if (name !== undefined) frames.set(name, (frames.get(name) ?? 0) + 1);
          end = buffer.indexOf("\n\n");
        }
      });
      res.on("error", () => {});
      resolve(counter);
    });
    req.setTimeout(timeoutMs, () => req?.destroy(new Error(`GET ${url}: no answer in ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  });
}
