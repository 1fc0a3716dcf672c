/**
 * The cheap string pass before an HTML page is parsed: most of a real page's bytes are
 * scripts, styles, inline SVG and base64 data that carry no text a reader wants, and every byte
 * the DOM parser and Readability do not see is time saved. One linear scan, no backtracking
 * pattern: an element that is never closed drops the rest of the page (as a browser treats an
 * unclosed `<script>`), so 2 MB of `<script>` without an end tag costs one pass, not a square.
 */

/** Elements dropped with everything inside them. */
const DROPPED = ["script", "style", "svg", "noscript", "template", "iframe", "object", "canvas"] as const;

/** The start of a comment or of a dropped element (its name is captured). */
const OPENING = new RegExp(`<!--|<(${DROPPED.join("|")})(?=[\\s/>])`, "gi");

/** End tags of the dropped elements, compiled once. */
const CLOSING: Readonly<Record<string, RegExp>> = Object.fromEntries(
  DROPPED.map((name) => [name, new RegExp(`</${name}\\s*>`, "gi")]),
);

/** `data:` URIs in base64 (images, fonts inlined into attributes and CSS). */
const BASE64_DATA = /data:[\w.+/-]*(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=\s]*/gi;

/** An attribute whose value is a `data:` URI of any other kind, quoted. */
const DATA_ATTRIBUTE = /(=\s*)(["'])data:[^"']*\2/gi;

/**
 * Removes comments, `<script>`, `<style>`, `<svg>`, `<noscript>`, `<template>`, `<iframe>`,
 * `<object>` and `<canvas>` elements with their content, and `data:` URIs (an attribute holding
 * one keeps an empty value). Linear in the length of `html`.
 */
export function stripHtml(html: string): string {
  const kept: string[] = [];
  let at = 0;
  OPENING.lastIndex = 0;
  for (let open = OPENING.exec(html); open !== null; open = OPENING.exec(html)) {
    kept.push(html.slice(at, open.index));
    const name = open[1]?.toLowerCase();
    let end: number;
    if (name === undefined) {
      const close = html.indexOf("-->", open.index + 4);
      end = close < 0 ? html.length : close + 3;
    } else {
      const closing = CLOSING[name] as RegExp;
      closing.lastIndex = OPENING.lastIndex;
      const close = closing.exec(html);
      end = close === null ? html.length : close.index + close[0].length;
    }
    at = end;
    OPENING.lastIndex = end;
  }
  kept.push(html.slice(at));
  return kept.join("").replace(BASE64_DATA, "").replace(DATA_ATTRIBUTE, "$1$2$2");
}

/** A tag, a comment or a doctype: what is not text (a `<` with no `>` before the next `<` is text). */
const TAG = /<[^<>]*>/g;

/**
 * Cuts HTML once about `maxTextChars` characters of text (what lies between tags, entities
 * counted as written) have gone by, or once `maxTags` tags have, right after the last closing
 * tag before that point, so the parser closes what is left open and no tag is split. Returns
 * `html` unchanged when it is shorter. Linear in the length of the part kept.
 */
export function cutHtmlByText(
  html: string,
  maxTextChars: number,
  maxTags = Number.POSITIVE_INFINITY,
): string {
  let text = 0;
  let tags = 0;
  let at = 0;
  let lastClose = -1;
  TAG.lastIndex = 0;
  for (let tag = TAG.exec(html); tag !== null; tag = TAG.exec(html)) {
    text += tag.index - at;
    if (text > maxTextChars || ++tags > maxTags)
      return lastClose < 0 ? html.slice(0, tag.index) : html.slice(0, lastClose);
    at = TAG.lastIndex;
    if (tag[0].charCodeAt(1) === 0x2f) lastClose = at;
  }
  return html;
}

/** The document's own structure tags, and a doctype: rebuilt by {@link documentShell}. */
const STRUCTURE = /<!doctype[^<>]*>|<\/?(?:html|head|body)(?:\s[^<>]*)?>/gi;
/** The first `<title>` element. */
const TITLE = /<title(?:\s[^<>]*)?>([^<]*)<\/title\s*>/i;

/**
 * Puts HTML into one `<html><head><title>…</title></head><body>…</body></html>` shell: linkedom
 * is no spec parser and leaves the body empty when a page omits `<head>` or `<body>` (which
 * HTML allows), so the page's own structure tags are dropped and the shell written fresh; the
 * first `<title>` moves to the head. Linear.
 */
export function documentShell(html: string): string {
  const title = TITLE.exec(html);
  const body = (
    title ? html.slice(0, title.index) + html.slice(title.index + title[0].length) : html
  ).replace(STRUCTURE, "");
  return `<html><head><title>${title?.[1] ?? ""}</title></head><body>${body}</body></html>`;
}
