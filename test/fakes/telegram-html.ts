/**
 * Telegram's `parse_mode: "HTML"` parser, written after TDLib's `parse_html` (the parser behind the
 * Bot API): the same tags, attribute rules, entity decoding and error messages with UTF-8 byte
 * offsets, so a gateway that escapes badly fails here as it would against Telegram.
 */
import { cantParseEntities } from "./telegram-errors.js";
import type { TelegramMessageEntity } from "./telegram-types.js";

/** Options for {@link parseTelegramHtml}. */
export interface TelegramHtmlOptions {
  /**
   * Reject a `&` that does not start `&lt;`, `&gt;`, `&amp;`, `&quot;` or a numeric entity.
   * Telegram itself keeps such text as written; the fake is stricter by default so that
   * unescaped user text is caught. Default true.
   */
  strictAmpersand?: boolean;
}

/** Visible text and entities (UTF-16 offsets) of a parsed HTML message. */
export interface ParsedText {
  text: string;
  entities: TelegramMessageEntity[];
}

const SUPPORTED_TAGS = new Set([
  "a",
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "span",
  "tg-spoiler",
  "tg-emoji",
  "code",
  "pre",
  "blockquote",
]);

const SIMPLE_ENTITY_TYPES: Record<string, string> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  span: "spoiler",
  "tg-spoiler": "spoiler",
};

/** TDLib's order for entities that share offset and length (lower first). */
const TYPE_PRIORITY: Record<string, number> = {
  blockquote: 0,
  expandable_blockquote: 0,
  pre: 11,
  code: 20,
  text_link: 49,
  bold: 90,
  italic: 91,
  underline: 92,
  strikethrough: 93,
  spoiler: 94,
  custom_emoji: 99,
};

const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

interface OpenTag {
  tag: string;
  argument: string;
  expandable: boolean;
  offset: number;
}

interface Collected extends TelegramMessageEntity {
  codeLanguage?: string;
}

const isSpace = (c: string | undefined): boolean =>
  c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v";
const isNameTokenChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9.-]/.test(c);

/**
 * Decodes the HTML entity starting at `s[i] === "&"`: `&lt;` `&gt;` `&amp;` `&quot;` (the `;` may be
 * omitted, as TDLib allows) and `&#NNN;` / `&#xHHH;`. Returns undefined when it is not one.
 */
function decodeEntity(s: string, i: number): { value: string; end: number } | undefined {
  let end = i + 1;
  let value: string | undefined;
  if (s[end] === "#") {
    end++;
    const hex = s[end] === "x" || s[end] === "X";
    if (hex) end++;
    const digitsStart = end;
    while (end < s.length && (hex ? /[0-9a-fA-F]/ : /[0-9]/).test(s[end] ?? "")) end++;
    if (end === digitsStart || end - digitsStart > 8) return undefined;
    const code = Number.parseInt(s.slice(digitsStart, end), hex ? 16 : 10);
    if (code === 0 || code > 0x10ffff) return undefined;
    if (code >= 0xd800 && code <= 0xdfff) {
      throw cantParseEntities(
        "Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units",
      );
    }
    value = String.fromCodePoint(code);
  } else {
    while (end < s.length && /[A-Za-z]/.test(s[end] ?? "")) end++;
    value = NAMED_ENTITIES[s.slice(i + 1, end)];
    if (value === undefined) return undefined;
  }
  if (s[end] === ";") end++;
  return { value, end };
}

/**
 * Normalises a link target as Telegram does (`host.test` → `http://host.test/`); undefined if
 * it is not a URL. Link text used as the target (`<a>` without href) must look like a web address.
 */
function normaliseUrl(raw: string, fromText: boolean): string | undefined {
  if (raw === "" || /\s/.test(raw)) return undefined;
  const hasScheme = /^[a-z][a-z0-9+.-]*:/i.test(raw);
  try {
    const url = new URL(hasScheme ? raw : `http://${raw}`);
    if (fromText && !url.hostname.includes(".")) return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

/**
 * Parses Telegram HTML into visible text and entities.
 * @throws BotApiError 400 `Bad Request: can't parse entities: <reason>` on anything Telegram rejects.
 */
export function parseTelegramHtml(html: string, options: TelegramHtmlOptions = {}): ParsedText {
  const strictAmpersand = options.strictAmpersand ?? true;
  const byteOffset = (index: number): number => Buffer.byteLength(html.slice(0, index), "utf8");
  const fail: (reason: string) => never = (reason) => {
    throw cantParseEntities(reason);
  };
  const stack: OpenTag[] = [];
  const entities: Collected[] = [];
  let text = "";
  let i = 0;
  const n = html.length;

  while (i < n) {
    const c = html[i];
    if (c === "&") {
      const decoded = decodeEntity(html, i);
      if (decoded) {
        text += decoded.value;
        i = decoded.end;
        continue;
      }
      if (strictAmpersand) {
        fail(`"&" must start an HTML entity (&amp; &lt; &gt; &quot; &#N;) at byte offset ${byteOffset(i)}`);
      }
    }
    if (c !== "<") {
      text += c;
      i++;
      continue;
    }

    const begin = i++;
    if (html[i] !== "/") {
      const nameStart = i;
      while (i < n && !isSpace(html[i]) && html[i] !== ">") i++;
      if (i >= n) fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);
      const tag = html.slice(nameStart, i).toLowerCase();
      if (!SUPPORTED_TAGS.has(tag))
        fail(`Unsupported start tag "${tag}" at byte offset ${byteOffset(begin)}`);
      const open: OpenTag = { tag, argument: "", expandable: false, offset: text.length };
      while (html[i] !== ">") {
        while (i < n && isSpace(html[i])) i++;
        if (i >= n) fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);
        if (html[i] === ">") break;
        const attributeStart = i;
        while (i < n && !isSpace(html[i]) && html[i] !== "=" && html[i] !== ">") i++;
        const attribute = html.slice(attributeStart, i).toLowerCase();
        if (attribute === "")
          fail(`Empty attribute name in the tag "${tag}" at byte offset ${byteOffset(begin)}`);
        while (i < n && isSpace(html[i])) i++;
        if (html[i] !== "=") {
          if (tag === "blockquote" && attribute === "expandable") open.expandable = true;
          continue;
        }
        i++;
        while (i < n && isSpace(html[i])) i++;
        if (i >= n) fail(`Unclosed start tag "${tag}" at byte offset ${byteOffset(begin)}`);
        let value = "";
        const quote = html[i];
        if (quote !== '"' && quote !== "'") {
          const tokenStart = i;
          while (isNameTokenChar(html[i])) i++;
          value = html.slice(tokenStart, i).toLowerCase();
          if (!isSpace(html[i]) && html[i] !== ">") {
            fail(`Unexpected end of name token at byte offset ${byteOffset(tokenStart)}`);
          }
        } else {
          i++;
          while (i < n && html[i] !== quote) {
            const decoded = html[i] === "&" ? decodeEntity(html, i) : undefined;
            if (decoded) {
              value += decoded.value;
              i = decoded.end;
            } else {
              value += html[i];
              i++;
            }
          }
          if (i >= n) fail(`Unclosed start tag at byte offset ${byteOffset(begin)}`);
          i++;
        }
        if (tag === "a" && attribute === "href") open.argument = value;
        else if (tag === "code" && attribute === "class" && value.startsWith("language-")) {
          open.argument = value.slice("language-".length);
        } else if (tag === "span" && attribute === "class" && value.startsWith("tg-")) {
          open.argument = value.slice("tg-".length);
        } else if (tag === "tg-emoji" && attribute === "emoji-id") open.argument = value;
        else if (tag === "blockquote" && attribute === "expandable") open.expandable = true;
      }
      if (tag === "span" && open.argument !== "spoiler") {
        fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(begin)}`);
      }
      open.offset = text.length;
      stack.push(open);
      i++;
      continue;
    }

    // An end tag: `</name>`, `</name   >` or `</>` (closes whatever is open).
    const open = stack.pop();
    if (!open) fail(`Unexpected end tag at byte offset ${byteOffset(begin)}`);
    i++;
    const nameStart = i;
    while (i < n && !isSpace(html[i]) && html[i] !== ">") i++;
    const endName = html.slice(nameStart, i);
    while (i < n && isSpace(html[i])) i++;
    if (html[i] !== ">") fail(`Unclosed end tag at byte offset ${byteOffset(begin)}`);
    if (open && endName !== "" && endName !== open.tag) {
      fail(
        `Unmatched end tag at byte offset ${byteOffset(begin)}, expected "</${open.tag}>", found "</${endName}>"`,
      );
    }
    i++;
    if (open) closeEntity(open, text, entities);
  }
  const unclosed = stack.at(-1);
  if (unclosed) fail(`Can't find end tag corresponding to start tag "${unclosed.tag}"`);

  const result = entities.map(({ codeLanguage: _drop, ...entity }) => entity);
  result.sort(
    (a, b) =>
      a.offset - b.offset ||
      b.length - a.length ||
      (TYPE_PRIORITY[a.type] ?? 50) - (TYPE_PRIORITY[b.type] ?? 50),
  );
  return { text, entities: result };
}

function closeEntity(open: OpenTag, text: string, entities: Collected[]): void {
  const offset = open.offset;
  const length = text.length - offset;
  if (length <= 0) return;
  const last = entities.at(-1);
  const sameRange = last !== undefined && last.offset === offset && last.length === length;
  const simple = SIMPLE_ENTITY_TYPES[open.tag];
  if (simple) {
    entities.push({ type: simple, offset, length });
  } else if (open.tag === "a") {
    const url = open.argument ? normaliseUrl(open.argument, false) : normaliseUrl(text.slice(offset), true);
    if (url) entities.push({ type: "text_link", offset, length, url });
  } else if (open.tag === "tg-emoji") {
    if (open.argument)
      entities.push({ type: "custom_emoji", offset, length, custom_emoji_id: open.argument });
  } else if (open.tag === "blockquote") {
    entities.push({ type: open.expandable ? "expandable_blockquote" : "blockquote", offset, length });
  } else if (open.tag === "code") {
    // `<pre><code class="language-x">` (either nesting) becomes one `pre` with a language.
    if (open.argument && sameRange && last.type === "pre" && !last.language) last.language = open.argument;
    else
      entities.push({
        type: "code",
        offset,
        length,
        ...(open.argument ? { codeLanguage: open.argument } : {}),
      });
  } else if (open.tag === "pre") {
    if (sameRange && last.type === "code" && last.codeLanguage) {
      entities[entities.length - 1] = { type: "pre", offset, length, language: last.codeLanguage };
    } else {
      entities.push({ type: "pre", offset, length });
    }
  }
}
