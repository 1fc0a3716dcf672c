/** Server-sent-event framing and delta splitting shared by both simulator dialects. */

/** One SSE frame: an optional `event:` line, one `data:` line, a blank line. */
export function sseFrame(data: unknown, event?: string): string {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return event === undefined ? `data: ${payload}\n\n` : `event: ${event}\ndata: ${payload}\n\n`;
}

/** Splits text into pieces of at most `size` characters (none for the empty string). */
export function splitChunks(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

/** Splits tool-argument JSON into at least two fragments (when it has two characters or more). */
export function argumentFragments(json: string, size: number): string[] {
  return splitChunks(json, Math.max(1, Math.min(size, Math.ceil(json.length / 2))));
}
