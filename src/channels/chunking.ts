/**
 * Splitting a reply into messages a platform accepts: at paragraph, then line, then word
 * boundaries; a hard cut only for a single word longer than the limit.
 */

/** Splits `text` into chunks of at most `maxChars` characters, in order. Empty text → []. */
export function chunkText(text: string, maxChars: number): string[] {
  if (maxChars < 1) throw new Error(`chunkText: maxChars must be ≥ 1, got ${maxChars}`);
  const trimmed = text.trim();
  if (trimmed.length === 0) return [];
  const chunks: string[] = [];
  let rest = trimmed;
  while (rest.length > maxChars) {
    const window = rest.slice(0, maxChars + 1);
    let cut = window.lastIndexOf("\n\n");
    if (cut < maxChars * 0.3) cut = window.lastIndexOf("\n");
    if (cut < maxChars * 0.3) cut = window.lastIndexOf(" ");
    if (cut <= 0) cut = maxChars;
    chunks.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length > 0) chunks.push(rest);
  return chunks;
}
