/**
 * Server-sent events read from a `fetch` body (EventSource cannot send a Bearer header): an
 * incremental parser of `event:` / `id:` / `data:` frames, and a reader over a byte stream.
 * Comment lines (`: ping`) are skipped; several `data:` lines of one frame join with "\n".
 */

/** One event of a stream. */
export interface SseFrame {
  /** The frame's `event:` ("message" when it has none). */
  event: string;
  /** The frame's `id:`, when it has one. */
  id?: string;
  /** The frame's `data:` lines, joined with "\n". */
  data: string;
}

/** Splits text, fed in pieces of any size, into frames; a frame is complete at its blank line. */
export class SseParser {
  #buffer = "";

  /** Adds `text` and returns the frames it completed, in order. Frames without data are dropped. */
  push(text: string): SseFrame[] {
    this.#buffer += text;
    // A lone "\r" at the end may be the first half of "\r\n": keep it for the next piece.
    const keepCr = this.#buffer.endsWith("\r");
    const body = (keepCr ? this.#buffer.slice(0, -1) : this.#buffer).replace(/\r\n?/g, "\n");
    const frames: SseFrame[] = [];
    let start = 0;
    let end = body.indexOf("\n\n", start);
    while (end >= 0) {
      const frame = parseBlock(body.slice(start, end));
      if (frame) frames.push(frame);
      start = end + 2;
      end = body.indexOf("\n\n", start);
    }
    this.#buffer = body.slice(start) + (keepCr ? "\r" : "");
    return frames;
  }
}

/** One frame's lines → the frame, or undefined when it carries no data (a comment, a keep-alive). */
function parseBlock(block: string): SseFrame | undefined {
  let event: string | undefined;
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return undefined;
  return { event: event ?? "message", data: data.join("\n"), ...(id !== undefined ? { id } : {}) };
}

/** A stream body as `fetch` gives it: what {@link readSse} needs of a ReadableStream. */
export interface ByteStream {
  getReader(): {
    read(): Promise<{ done: boolean; value?: Uint8Array | undefined }>;
    cancel(reason?: unknown): Promise<void>;
  };
}

/**
 * The frames of `body` in order; ends when the body ends, throws when it is cut. Calls `onFrame`
 * for each; resolves when the stream is over. Aborting `signal` cancels the reader.
 */
export async function readSse(
  body: ByteStream,
  onFrame: (frame: SseFrame) => void,
  signal?: AbortSignal,
): Promise<void> {
  const reader = body.getReader();
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const cancel = () => {
    reader.cancel().catch(() => {});
  };
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value) for (const frame of parser.push(decoder.decode(value, { stream: true }))) onFrame(frame);
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
  }
}
