/**
 * What the guarded fetch reads: text pages only. Content-Type decides (PDFs, images, audio,
 * video, archives and other binaries are refused before their body is read); with no
 * Content-Type the first bytes decide. Bodies are decoded with the declared charset.
 */

/** The verdict on a Content-Type: read it as text, sniff its first bytes, or refuse with a reason. */
export type ContentVerdict =
  | { readonly type: "text"; readonly charset: string | undefined }
  | { readonly type: "sniff" }
  | { readonly type: "refuse"; readonly reason: string };

/** Media types read as text besides text/*: JSON, XML, XHTML, feeds, scripts. */
const TEXT_TYPES = new Set([
  "application/json",
  "application/xml",
  "application/xhtml+xml",
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/x-www-form-urlencoded",
]);

/** Refused media types, with the phrase a message uses; first match wins. */
const REFUSED: ReadonlyArray<{ match: RegExp; what: string }> = [
  { match: /^application\/(pdf|x-pdf)$/, what: "a PDF" },
  { match: /^image\//, what: "an image" },
  { match: /^audio\//, what: "audio" },
  { match: /^video\//, what: "a video" },
  { match: /^font\//, what: "a font" },
  {
    match:
      /^application\/(zip|gzip|x-gzip|x-tar|x-7z-compressed|x-rar-compressed|vnd\.rar|x-bzip2|x-xz|zstd|java-archive)$/,
    what: "an archive",
  },
  {
    match: /^application\/(msword|vnd\.ms-|vnd\.openxmlformats-|vnd\.oasis\.opendocument)/,
    what: "an office document",
  },
  { match: /^application\/(wasm|x-executable|x-msdownload|x-sharedlib)$/, what: "a program" },
];

/** Judges a Content-Type header (undefined or empty: sniff the body). */
export function judgeContentType(header: string | undefined): ContentVerdict {
  const [rawType = "", ...params] = (header ?? "").split(";");
  const type = rawType.trim().toLowerCase();
  if (type === "") return { type: "sniff" };
  const refused = REFUSED.find((r) => r.match.test(type));
  if (refused) return { type: "refuse", reason: `${refused.what} (${type}): web_fetch reads text pages` };
  if (type.startsWith("text/") || TEXT_TYPES.has(type) || /^application\/[\w.+-]+\+(json|xml)$/.test(type))
    return { type: "text", charset: charsetOf(params) };
  return { type: "refuse", reason: `binary data (${type}): web_fetch reads text pages` };
}

/** Why a body with no Content-Type is refused, judged by its first bytes; undefined when it looks like text. */
export function sniffRefusal(head: Uint8Array): string | undefined {
  if (startsWith(head, "%PDF-"))
    return "a PDF (no Content-Type, %PDF- signature): web_fetch reads text pages";
  if (head.subarray(0, 1024).includes(0))
    return "binary data (no Content-Type, NUL bytes in its first bytes): web_fetch reads text pages";
  return undefined;
}

/**
 * Decodes a body with `charset` (a WHATWG label: utf-8, iso-8859-1, windows-1251, …; UTF-8
 * when undefined or unknown). Invalid bytes become U+FFFD. A `truncated` body may end inside
 * a character: that partial character is dropped rather than shown as U+FFFD.
 */
export function decodeBody(body: Uint8Array, charset: string | undefined, truncated: boolean): string {
  return decoderFor(charset).decode(body, { stream: truncated });
}

function decoderFor(charset: string | undefined): InstanceType<typeof TextDecoder> {
  if (charset) {
    try {
      return new TextDecoder(charset);
    } catch {
      // An unknown label: UTF-8 is the web's default and the likeliest truth.
    }
  }
  return new TextDecoder("utf-8");
}

function charsetOf(params: readonly string[]): string | undefined {
  for (const param of params) {
    const [name, value] = param.split("=", 2);
    if (name?.trim().toLowerCase() === "charset" && value)
      return value.trim().replace(/^"(.*)"$/, "$1") || undefined;
  }
  return undefined;
}

function startsWith(bytes: Uint8Array, ascii: string): boolean {
  if (bytes.length < ascii.length) return false;
  for (let i = 0; i < ascii.length; i++) if (bytes[i] !== ascii.charCodeAt(i)) return false;
  return true;
}
