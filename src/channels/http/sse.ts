/**
 * Server-sent events for streamed answers. While the model is slow nothing else is written, and
 * proxies cut a connection that stays silent too long (often 30–60 s), so a comment line is
 * sent every `keepAliveMs` (default 15 s) that no data was.
 */
import type { ServerResponse } from "node:http";

/** One open event stream. */
export interface SseStream {
  /** Writes complete frames (each ending in a blank line). */
  write(frames: string): void;
  /** Writes the last frames and ends the response. */
  end(frames: string): void;
  /** Stops the keep-alive timer; idempotent (ending does it too). */
  close(): void;
}

/** The keep-alive comment: ignored by every SSE client, enough traffic for every proxy. */
export const SSE_KEEP_ALIVE = ": keep-alive\n\n";

/** Sends the SSE headers and starts the keep-alive timer. */
export function openSse(res: ServerResponse, keepAliveMs = 15_000): SseStream {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    // nginx buffers responses unless told not to; a buffered stream is no stream.
    "x-accel-buffering": "no",
  });
  let quiet = true;
  const timer = setInterval(() => {
    if (quiet && !res.writableEnded) res.write(SSE_KEEP_ALIVE);
    quiet = true;
  }, keepAliveMs);
  timer.unref();
  const close = () => clearInterval(timer);
  res.once("close", close);
  return {
    write(frames) {
      quiet = false;
      if (!res.writableEnded) res.write(frames);
    },
    end(frames) {
      close();
      if (!res.writableEnded) res.end(frames);
    },
    close,
  };
}
