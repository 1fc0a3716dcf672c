/**
 * Model Markdown → Telegram HTML (`parse_mode: "HTML"`).
 *
 * Telegram's HTML mode accepts a small tag set and rejects the whole message on any
 * unbalanced tag or unknown entity, so the renderer escapes everything it does not
 * translate and only ever emits balanced tags it opened itself. Its length limit (4096)
 * applies to the text after entity parsing, so chunking is done on the Markdown, whose
 * length bounds the visible text, and code fences are closed and reopened across chunks.
 */
import { chunkText } from "../chunking.js";

export interface TelegramChunk {
  /** The chunk as Telegram HTML, for `parse_mode: "HTML"`. */
  html: string;
  /** The visible text of the same chunk, for the plain-text fallback. */
  text: string;
}

/** Splits a Markdown reply into chunks whose visible text fits `maxChars`, each rendered. */
export function renderTelegramChunks(markdown: string, maxChars: number): TelegramChunk[] {
  const out: TelegramChunk[] = [];
  for (const chunk of chunkText(markdown, maxChars)) {
    const html = markdownToTelegramHtml(chunk);
    const text = htmlToText(html, maxChars);
    if (text.length <= maxChars) {
      out.push({ html, text });
      continue;
    }
    // Rendering never lengthens the visible text; if it ever did, send plain pieces.
    for (const piece of chunkText(text, maxChars)) out.push({ html: escapeHtml(piece), text: piece });
  }
  return out;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;

/** Renders Markdown as Telegram HTML. Anything it does not understand is shown literally. */
export function markdownToTelegramHtml(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      const marker = fence[1] as string;
      const lang = fence[2] ?? "";
      const body: string[] = [];
      i++;
      while (i < lines.length && !isFenceClose(lines[i] as string, marker)) body.push(lines[i++] as string);
      i++; // the closing fence (or the end of the text: an unclosed fence runs to the end)
      const code = escapeHtml(body.join("\n"));
      out.push(
        lang && /^[\w+#.-]+$/.test(lang)
          ? `<pre><code class="language-${lang}">${code}</code></pre>`
          : `<pre>${code}</pre>`,
      );
      continue;
    }
    if (/^ {0,3}>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^ {0,3}>/.test(lines[i] as string)) {
        quoted.push(renderInline((lines[i++] as string).replace(/^ {0,3}> ?/, "")));
      }
      out.push(`<blockquote>${quoted.join("\n")}</blockquote>`);
      continue;
    }
    out.push(renderLine(line));
    i++;
  }
  return out.join("\n");
}

function isFenceClose(line: string, marker: string): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
  return m !== null && m[1]?.[0] === marker[0] && (m[1]?.length ?? 0) >= marker.length;
}

function renderLine(line: string): string {
  const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return `<b>${renderInline(heading[1] ?? "")}</b>`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${renderInline(bullet[2] ?? "")}`;
  if (/^ {0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) return "———";
  return renderInline(line);
}

interface InlineRule {
  /** The opening delimiter. */
  open: string;
  close: string;
  tag: string;
}

const PAIRED: readonly InlineRule[] = [
  { open: "**", close: "**", tag: "b" },
  { open: "__", close: "__", tag: "b" },
  { open: "~~", close: "~~", tag: "s" },
  { open: "||", close: "||", tag: "tg-spoiler" },
  { open: "*", close: "*", tag: "i" },
  { open: "_", close: "_", tag: "i" },
];

const LINK = /^\[([^\]\n]+)\]\(([^)\s]+)\)/;
const SAFE_URL = /^(https?:\/\/|tg:\/\/|mailto:)/i;

/** Inline Markdown → HTML: code spans, bold, italic, strike, spoilers, links. */
export function renderInline(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === "`") {
      const end = text.indexOf("`", i + 1);
      if (end > i + 1) {
        out += `<code>${escapeHtml(text.slice(i + 1, end))}</code>`;
        i = end + 1;
        continue;
      }
    }
    if (ch === "[") {
      const link = LINK.exec(text.slice(i));
      if (link && SAFE_URL.test(link[2] as string)) {
        out += `<a href="${escapeAttribute(link[2] as string)}">${renderInline(link[1] as string)}</a>`;
        i += link[0].length;
        continue;
      }
    }
    const span = matchPaired(text, i);
    if (span) {
      out += `<${span.tag}>${renderInline(span.inner)}</${span.tag}>`;
      i = span.end;
      continue;
    }
    out += escapeHtml(ch);
    i++;
  }
  return out;
}

function matchPaired(text: string, at: number): { tag: string; inner: string; end: number } | undefined {
  for (const rule of PAIRED) {
    if (!text.startsWith(rule.open, at)) continue;
    const start = at + rule.open.length;
    const first = text[start];
    if (first === undefined || /\s/.test(first)) continue;
    // `_` only delimits at word boundaries, so snake_case names stay as they are.
    if (rule.open === "_" && at > 0 && /\w/.test(text[at - 1] as string)) continue;
    let from = start + 1;
    while (from <= text.length) {
      const end = text.indexOf(rule.close, from);
      if (end < 0) break;
      const before = text[end - 1] as string;
      const after = text[end + rule.close.length];
      const wordAfter = rule.open === "_" && after !== undefined && /\w/.test(after);
      // A single `*` or `_` must not close on half of a `**` or `__`.
      const doubled = rule.close.length === 1 && after === rule.close;
      if (!/\s/.test(before) && !wordAfter && !doubled) {
        return { tag: rule.tag, inner: text.slice(start, end), end: end + rule.close.length };
      }
      from = end + (doubled ? 2 : 1);
    }
  }
  return undefined;
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

/**
 * Telegram HTML → the text Telegram would show, for the plain-text fallback when it
 * rejects the markup. Link targets are appended in brackets when the result still fits
 * `maxChars`, so nothing the model wrote is lost.
 */
export function htmlToText(html: string, maxChars = Number.POSITIVE_INFINITY): string {
  const strip = (s: string) =>
    s
      .replace(/<[^>]+>/g, "")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"')
      .replace(/&#(\d+);/g, (_m, n: string) => String.fromCodePoint(Number(n)))
      .replace(/&amp;/g, "&");
  const bare = strip(html);
  const withUrls = strip(
    html.replace(/<a href="([^"]*)">([\s\S]*?)<\/a>/g, (m, url: string, inner: string) =>
      strip(inner) === strip(url) ? m : `${inner} (${url})`,
    ),
  );
  return withUrls.length <= maxChars ? withUrls : bare;
}

/** The visible text of a Markdown reply as Telegram would show it. */
export function markdownToPlainText(markdown: string): string {
  return htmlToText(markdownToTelegramHtml(markdown));
}
