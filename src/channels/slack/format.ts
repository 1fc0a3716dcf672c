/**
 * Model Markdown → Slack `mrkdwn` for `chat.postMessage` `text`. mrkdwn cannot escape its marks; only `&`,
 * `<`, `>` are entities (escaped everywhere, code included). Rendering is per line (Slack marks never span
 * lines); what is not translated is escaped, and only marks paired here are emitted. Choices: emphasis
 * opens only at the start or after a non-alphanumeric and closes only before the end or a non-alphanumeric
 * (not before `.ext`), for `*` as for `_` (`2*3*4`, `snake_case`, `__init__.py` stay literal); a mark
 * nested in itself is dropped (bold in a heading). Lists: four spaces per level, • ◦ ▪ by level, numbers
 * kept, ☐ / ☑ tasks. `|` in a link label → `∣`, in a URL → `%7C`. Rules → `──────────`; `<br>` → a line
 * break (a space in marks, links, cells). Tables → a ``` block of padded ` | ` columns. Runs of 3+
 * backticks in code or left unpaired get U+200B inside so they never open or close a block; empty fenced
 * blocks are dropped; a backslash-escaped mark is emitted bare; indented code is only escaped.
 */
import { chunkText } from "../chunking.js";

const [B, I, S, LINK] = [1, 2, 4, 8]; // the marks (and link) open around inline text
const ENTITY: Record<string, string> = { "&": "&amp;", ">": "&gt;" };
const escapeText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const unescapeText = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
const unfence = (s: string) => (s.includes("```") ? s.replace(/`{3,}/g, (r) => [...r].join("\u200B")) : s);
const codeText = (s: string): string => unfence(escapeText(s));
const inline = (s: string, ctx = 0): string => unfence(renderInline(s, ctx)); // pieces may join into ```
const slackUrl = (url: string): string => url.replace(/&/g, "&amp;").replace(/\|/g, "%7C");
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const QUOTE = /^(?: {0,3}>[ \t]?)+/;
const HEADING = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const BULLET = /^[-*+][ \t]+(?:\[([ xX])\][ \t]+)?(.*)$/;
const ORDERED = /^(\d{1,9}[.)])[ \t]+(.*)$/;
const TABLE_RULE = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const BULLETS = ["•", "◦", "▪"];

/** Markdown → Slack mrkdwn. Anything it does not understand is shown literally (escaped). */
export function markdownToMrkdwn(markdown: string): string {
  const lines = (markdown.includes("\r") ? markdown.replace(/\r\n?/g, "\n") : markdown).split("\n");
  const out: string[] = [];
  const list: number[] = []; // the indentation of each open list level
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = FENCE.exec(line);
    if (fence && !(fence[2]?.startsWith("`") && fence[3]?.includes("`"))) {
      const indent = new RegExp(`^ {0,${fence[1]?.length}}`);
      const body: string[] = [];
      while (++i < lines.length && !isFenceClose(lines[i] ?? "", fence[2] ?? "")) {
        body.push(codeText((lines[i] ?? "").replace(indent, "")));
      }
      if (body.length > 0) out.push("```", ...body, "```");
      continue;
    }
    const next = lines[i + 1] ?? "";
    if (line.includes("|") && TABLE_RULE.test(next) && cells(line).length === cells(next).length) {
      const rows = [cells(line)];
      i++;
      while (lines[i + 1]?.includes("|") && lines[i + 1]?.trim()) rows.push(cells(lines[++i] ?? ""));
      out.push(...renderTable(rows, cells(next)));
      list.length = 0;
      continue;
    }
    out.push(renderLine(line, list));
  }
  const text = out.join("\n").trimEnd();
  return (/[ \t]\n/.test(text) ? text.replace(/[ \t]+\n/g, "\n") : text).replace(/^\n+/, "");
}

const isFenceClose = (line: string, marker: string): boolean =>
  FENCE_CLOSE.exec(line)?.[1]?.startsWith(marker) === true;

function renderLine(line: string, list: number[]): string {
  const body = line.trimStart();
  if (body === "") return "";
  const lead = line.slice(0, line.length - body.length).replace(/\t/g, "    ").length;
  const quote = body[0] === ">" ? QUOTE.exec(line) : null;
  if (quote) {
    list.length = 0;
    const inner = renderLine(line.slice(quote[0].length), []);
    return inner ? `> ${inner.replace(/\n/g, "\n> ")}` : ">";
  }
  if (lead >= 4 && list.length === 0) return codeText(line); // indented code, shown as is
  const block = /^[-#*+_\d]/.test(body); // the fast path: most lines are paragraphs
  const heading = block ? HEADING.exec(line)?.[1] : undefined;
  const bullet = block ? BULLET.exec(body) : null;
  const ordered = block ? ORDERED.exec(body) : null;
  if (heading || (block && lead < 4 && RULE.test(line))) {
    list.length = 0;
    const text = heading ? inline(heading, B).trim() : "";
    return heading ? text && `*${text}*` : "──────────";
  }
  if (bullet || ordered) {
    while (list.length > 0 && (list.at(-1) as number) > lead) list.pop();
    if (list.length === 0 || (list.at(-1) as number) < lead) list.push(lead);
    const box = bullet?.[1];
    const mark = ordered?.[1] ?? (box ? (box === " " ? "☐" : "☑") : BULLETS[(list.length - 1) % 3]);
    return `${"    ".repeat(list.length - 1)}${mark} ${inline((bullet ?? ordered)?.[2] ?? "")}`;
  }
  if (lead === 0) list.length = 0;
  return (list.length > 0 ? " ".repeat(lead) : "") + inline(body);
}

function cells(row: string): string[] {
  const inner = row.trim().replace(/^\||(?<!\\)\|$/g, "");
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

function renderTable(rows: string[][], rule: string[]): string[] {
  const cols = rows[0]?.length ?? 1; // extra cells join the last column
  const fit = rows.map((r) =>
    r.length > cols ? [...r.slice(0, cols - 1), r.slice(cols - 1).join(" | ")] : r,
  );
  const text = fit.map((r) => r.map((c) => mrkdwnToText(renderInline(c, 0)).replace(/\s+/g, " ").trim()));
  const widths: number[] = [];
  for (const r of text) for (const [k, c] of r.entries()) widths[k] = Math.max(widths[k] ?? 1, c.length);
  const pad = (c: string, k: number): string => {
    const gap = (widths[k] as number) - c.length;
    const left = /^:-+:$/.test(rule[k] ?? "") ? gap >> 1 : rule[k]?.endsWith(":") ? gap : 0;
    return " ".repeat(left) + c + " ".repeat(gap - left);
  };
  const row = (r: string[]): string => codeText(widths.map((_w, k) => pad(r[k] ?? "", k)).join(" | "));
  const sep = widths.map((w) => "-".repeat(w)).join("-+-");
  return ["```", row(text[0] ?? []), sep, ...text.slice(1).map(row), "```"];
}

const SPECIAL = new Uint8Array(128);
for (const ch of "\\`![<>&*_~h") SPECIAL[ch.charCodeAt(0)] = 1;
const PUNCT = /^[!-/:-@[-`{-~]$/;
const WORD = /[\p{L}\p{N}]/u;
const isWord = (ch = " "): boolean => (ch < "\x80" ? /[\dA-Za-z]/.test(ch) : WORD.test(ch));
const isSpace = (ch = ""): boolean => ch === " " || ch === "\t" || (ch > "\x7f" && /\s/.test(ch));
const LINK_RE = /!?\[([^\]\n]*)\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))+)>?(?:\s+"[^"\n]*")?\s*\)/y;
const SAFE_URL = /^(?:https?:\/\/|mailto:)[^\s]/i;
const MENTION = /<(?:@[UWB][A-Z0-9]{2,}|#[CG][A-Z0-9]{2,})(?:\|[^<>&|\n]*)?>/y;
const AUTOLINK = /<((?:https?:\/\/|mailto:)[^\s<>]+)>/iy;
const EMAIL = /<([\w.+-]+@[\w-]+(?:\.[\w-]+)+)>/y;
const BR = /<br[ \t]*\/?>/iy;
const BARE_URL = /https?:\/\/[^\s<>]+/y;

function at(re: RegExp, text: string, i: number): RegExpExecArray | null {
  re.lastIndex = i;
  return re.exec(text);
}

/** One line of inline Markdown → mrkdwn; `ctx` holds the marks (and link) already open around it. */
function renderInline(text: string, ctx: number): string {
  let out = "";
  let from = 0; // the start of the plain text not yet copied
  for (let i = 0; i < text.length; ) {
    if (SPECIAL[text.charCodeAt(i)] === 1 && (text[i] !== "h" || text.startsWith("http", i))) {
      const [piece, end] = token(text, i, ctx);
      out += text.slice(from, i) + piece;
      i = from = end;
    } else i++;
  }
  return out + text.slice(from);
}

function token(text: string, i: number, ctx: number): [string, number] {
  const ch = text[i] as string;
  const next = text[i + 1] ?? "";
  if (ch === "\\") return PUNCT.test(next) ? [escapeText(next), i + 2] : ["\\", i + 1];
  if (ch === "`") return codeSpan(text, i);
  if (ch === "!" || ch === "[") return link(text, i, ctx) ?? [ch, i + 1];
  if (ch === "<") return (/[\w.+@#-]/.test(next) ? angle(text, i, ctx) : undefined) ?? ["&lt;", i + 1];
  if (ch === "*" || ch === "_" || ch === "~") return emphasis(text, i, ctx);
  const url = ch === "h" && !isWord(text[i - 1]) ? at(BARE_URL, text, i) : null;
  return url ? [escapeText(url[0]), i + url[0].length] : [ENTITY[ch] ?? ch, i + 1];
}

function codeSpan(text: string, i: number): [string, number] {
  let n = 1;
  while (text[i + n] === "`") n++;
  for (let j = text.indexOf("`", i + n); j >= 0; ) {
    let k = j;
    while (text[k] === "`") k++;
    if (k - j === n) {
      let content = text.slice(i + n, j);
      if (/^ .*[^ ].* $/.test(content)) content = content.slice(1, -1);
      const body = codeText(content);
      return [content.includes("`") || !content.trim() ? body : `\`${body}\``, k];
    }
    j = text.indexOf("`", k);
  }
  return ["`".repeat(n), i + n];
}

function link(text: string, i: number, ctx: number): [string, number] | undefined {
  const m = ctx & LINK ? null : at(LINK_RE, text, i);
  if (!m || !SAFE_URL.test(m[2] as string)) return undefined;
  const label = renderInline((m[1] as string).trim(), ctx | LINK).replace(/\|/g, "∣");
  const url = slackUrl(m[2] as string);
  return [label ? `<${url}|${label}>` : `<${url}>`, i + m[0].length];
}

function angle(text: string, i: number, ctx: number): [string, number] | undefined {
  const br = at(BR, text, i);
  if (br) return [ctx === 0 ? "\n" : " ", i + br[0].length];
  if (ctx & LINK) return undefined;
  const mention = at(MENTION, text, i);
  if (mention) return [mention[0], i + mention[0].length];
  const auto = at(AUTOLINK, text, i);
  if (auto) return [`<${slackUrl(auto[1] as string)}>`, i + auto[0].length];
  const email = at(EMAIL, text, i);
  if (email) return [`<mailto:${email[1]}|${email[1]}>`, i + email[0].length];
  return undefined;
}

function emphasis(text: string, i: number, ctx: number): [string, number] {
  const c = text[i] as string;
  let n = 1;
  while (text[i + n] === c) n++;
  const literal: [string, number] = [c.repeat(n), i + n];
  if (n > (c === "~" ? 2 : 3) || isSpace(text[i + n] ?? " ") || isWord(text[i - 1])) return literal;
  let [exact, longer, depth] = [-1, -1, 0]; // longer: a longer closing run, whose last n characters close
  for (let j = text.indexOf(c, i + n + 1); j >= 0 && exact < 0; ) {
    let k = j;
    while (text[k] === c) k++;
    const [before, after] = [text[j - 1] ?? " ", text[k] ?? " "]; // no closing before a word or `.py`:
    const closes =
      !isSpace(before) && before !== "\\" && !isWord(after) && !(after === "." && isWord(text[k + 1]));
    if (closes && k - j === n && depth > 0) depth--;
    else if (closes && k - j === n) exact = j;
    else if (closes && k - j > n && longer < 0) longer = k - n;
    else if (k - j === n && !isWord(before) && before !== "\\" && !isSpace(after)) depth++; // nested opening
    j = text.indexOf(c, k);
  }
  const end = exact >= 0 ? exact : longer;
  if (end < 0) return literal;
  const marks = c === "~" ? S : n === 1 ? I : n === 2 ? B : B | I;
  const body = renderInline(text.slice(i + n, end), ctx | marks);
  const add = marks & ~ctx;
  const open = (add & B ? "*" : "") + (add & I ? "_" : "") + (add & S ? "~" : "");
  if (!open || body === "" || isSpace(body[0]) || isSpace(body.at(-1))) return [body, end + n];
  return [open + body + (open.length > 1 ? [...open].reverse().join("") : open), end + n];
}

const OUT_TOKEN = /`([^`\n]+)`|<([^<>|\s]+)(?:\|([^<>\n]*))?>/g;
const MARK = /(?<![\p{L}\p{N}*_~])([*_~])(?!\s|\1)(.*?\S)\1(?![\p{L}\p{N}]|\1)/gu;
const stripMarks = (s: string): string => s.replace(MARK, (_m, _c, inner: string) => stripMarks(inner));

function linkText(url: string, label = ""): string {
  const text = stripMarks(label);
  return !text || text === url ? url : `mailto:${text}` === url ? text : `${text} (${url})`;
}

/**
 * mrkdwn → the plain visible text: entities unescaped, `<url|label>` → `label (url)`, formatting
 * marks, code fences and quote markers dropped; `<@U…>` / `<#C…>` mentions are kept as they are.
 */
export function mrkdwnToText(mrkdwn: string): string {
  const lines: string[] = [];
  let code = false;
  for (const raw of mrkdwn.split("\n")) {
    if (/^```[ \t]*$/.test(raw)) code = !code;
    else if (code) lines.push(unescapeText(raw.replace(/\u200B/g, "")));
    else {
      const saved: string[] = [];
      const line = raw.replace(/\u200B/g, "").replace(/^>[ \t]?/, "");
      const hidden = line.replace(OUT_TOKEN, (m, span?: string, url = "", label?: string) => {
        saved.push(span ?? (/^[@#]/.test(url) ? m : linkText(url, label)));
        return `\uE000${saved.length - 1}\uE001`;
      });
      const shown = stripMarks(hidden).replace(/\uE000(\d+)\uE001/g, (m, k) => saved[Number(k)] ?? m);
      lines.push(unescapeText(shown));
    }
  }
  return lines.join("\n");
}

/**
 * Splits a Markdown reply into chunks whose rendered mrkdwn is at most `maxChars` characters each, rendered.
 * Empty/blank → []. A chunk that rendering lengthens past the limit is re-cut smaller (at worst: plain text).
 */
export function renderSlackChunks(markdown: string, maxChars: number): string[] {
  if (!(maxChars >= 5)) throw new RangeError(`renderSlackChunks: maxChars must be ≥ 5, got ${maxChars}`);
  const out: string[] = [];
  fitChunks(markdown.replace(/\r\n?/g, "\n"), maxChars, maxChars, 0, out);
  return out.filter((chunk) => chunk.length > 0);
}

function fitChunks(markdown: string, maxChars: number, size: number, depth: number, out: string[]): void {
  for (const piece of chunkText(markdown, size)) {
    const rendered = markdownToMrkdwn(piece);
    const smaller = Math.min(piece.length - 1, Math.floor((piece.length * maxChars) / rendered.length));
    if (rendered.length <= maxChars) out.push(rendered);
    else if (smaller >= 1 && depth < 16) fitChunks(piece, maxChars, smaller, depth + 1, out);
    else hardCut(piece, maxChars, out);
  }
}

/** Plain escaped text in pieces of at most `maxChars`, never splitting an entity or a surrogate pair. */
function hardCut(markdown: string, maxChars: number, out: string[]): void {
  for (let rest = codeText(markdown.trim()); rest.length > 0; ) {
    let cut = rest.length <= maxChars ? rest.length : rest.lastIndexOf(" ", maxChars);
    if (cut < maxChars / 2) cut = maxChars; // no space late enough: a hard cut (past the end is fine)
    const amp = rest.lastIndexOf("&", cut - 1);
    if (amp > 0 && amp > cut - 5 && !rest.slice(amp, cut).includes(";")) cut = amp;
    if (cut > 1 && /[\uD800-\uDBFF]/.test(rest[cut - 1] ?? "")) cut--;
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
}
