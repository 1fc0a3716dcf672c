/**
 * Reads a server-sent event stream as the gateway writes it: frames separated by a blank line,
 * with `id:`, `event:` and one `data:` line each; comment lines (keep-alives) are skipped.
 */

/** One event of the stream. */
export interface SseFrame {
  event: string;
  /** The frame's `id:` (absent when it has none). */
  id?: string;
  /** The `data:` line, as sent (JSON on every gateway stream). */
  data: string;
}

/** The frames of `body` in order; ends when the body does (a cut connection throws). */
export async function* readSseFrames(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replaceAll("\r\n", "\n");
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      const frame: Partial<SseFrame> = {};
      for (const line of block.split("\n")) {
        const colon = line.indexOf(":");
        if (colon <= 0) continue; // a comment (": keep-alive") or a line without a field
        const field = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, "");
        if (field === "event" || field === "id" || field === "data") frame[field] = value;
      }
      if (frame.data !== undefined)
        yield {
          event: frame.event ?? "message",
          data: frame.data,
          ...(frame.id !== undefined ? { id: frame.id } : {}),
        };
    }
  }
}
