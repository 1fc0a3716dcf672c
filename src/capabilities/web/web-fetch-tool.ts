/**
 * The `web_fetch` tool: GET one page through the guarded fetch (SSRF guard on every hop, ≤ 5
 * redirects, 2 MB read then cut, one deadline, text only) and give the model its main text as
 * Markdown. The result's first line says where the page ended up, its status, its type, its
 * size and whether anything was cut; the page itself follows inside an untrusted block.
 */
import { z } from "zod";
import type { Tool } from "../../harness/tools/types.js";
import { untrustedBlock } from "../../harness/tools/untrusted.js";
import { DEFAULT_MAX_BYTES, safeFetch } from "../../harness/tools/web/safe-fetch.js";
import type { FetchedPage, LookupAll } from "../../harness/tools/web/types.js";
import type { Clock } from "../../util/clock.js";
import { htmlToMarkdown } from "./html-to-markdown.js";
import { DEFAULT_WEB_MAX_CHARS, DEFAULT_WEB_TIMEOUT_MS } from "./settings.js";
import { toToolError } from "./web-fetch-error.js";

/** The most characters one call may ask for. */
export const MAX_CALL_CHARS = 100_000;

/** What `web_fetch` fetches with; the web capability fills it from `tools.web`. */
export interface WebFetchToolOptions {
  /** Hosts and addresses exempt from the SSRF guard. Default none. */
  allowHosts?: readonly string[];
  /** Time for one fetch, redirects included. Default 15_000. */
  timeoutMs?: number;
  /** Characters of Markdown returned when the call names none. Default 20_000. */
  maxChars?: number;
  /** Times the deadline. Default the system clock. */
  clock?: Clock;
  /** DNS seam. Default the system resolver. */
  lookup?: LookupAll;
}

function parameters(defaultChars: number) {
  return z.strictObject({
    url: z.string().min(1).describe("The http(s) URL of the page"),
    maxChars: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(`Characters of text to return at most (default ${defaultChars}, at most ${MAX_CALL_CHARS})`),
  });
}

/**
 * The `web_fetch` tool. A refused or failed fetch throws a ToolError carrying the fetch's
 * one-line reason (web-fetch-error.ts); a 4xx or 5xx page comes back with its text, marked as an
 * error.
 */
export function webFetchTool(options: WebFetchToolOptions = {}): Tool<ReturnType<typeof parameters>> {
  const defaultChars = options.maxChars ?? DEFAULT_WEB_MAX_CHARS;
  return {
    name: "web_fetch",
    groups: ["web"],
    description:
      "Fetch a web page (http/https) and read its main text as Markdown: headings, lists, code " +
      "and links kept; menus, footers and scripts left out. JSON and plain text come back as they " +
      "are. PDFs, images and other binary files are refused, and so are private and local addresses.",
    parameters: parameters(defaultChars),
    async run(args, ctx) {
      const maxChars = Math.min(args.maxChars ?? defaultChars, MAX_CALL_CHARS);
      let page: FetchedPage;
      try {
        page = await safeFetch(args.url, {
          allowHosts: options.allowHosts ?? [],
          timeoutMs: options.timeoutMs ?? DEFAULT_WEB_TIMEOUT_MS,
          signal: ctx.signal,
          ...(options.clock ? { clock: options.clock } : {}),
          ...(options.lookup ? { lookup: options.lookup } : {}),
        });
      } catch (err) {
        throw toToolError(err);
      }
      const { text, cut } = await readable(page, maxChars);
      const block = untrustedBlock(`web_fetch ${page.url}`, text === "" ? "(no text)" : text);
      return {
        content: `${headline(page, cut, maxChars)}\n${block.text}`,
        isError: page.status >= 400,
      };
    },
  };
}

/** The page's text for the model: HTML as Markdown, anything else as it came; at most `maxChars`. */
async function readable(page: FetchedPage, maxChars: number): Promise<{ text: string; cut: boolean }> {
  if (isHtml(page)) {
    const md = await htmlToMarkdown(page.text, { url: page.url, maxChars });
    return { text: md.markdown, cut: md.cut };
  }
  const text = page.text.trim();
  return text.length <= maxChars ? { text, cut: false } : { text: text.slice(0, maxChars), cut: true };
}

function mediaType(page: FetchedPage): string {
  return (page.contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** HTML by its Content-Type, or, with none, by how the body starts. */
export function isHtml(page: FetchedPage): boolean {
  const type = mediaType(page);
  if (type === "text/html" || type === "application/xhtml+xml") return true;
  return type === "" && /^\s*(<!doctype html|<html[\s>])/i.test(page.text.slice(0, 512));
}

/** "https://x/a · status 200 · text/html · 996 KB · not cut" (after redirects, with what was cut). */
function headline(page: FetchedPage, cut: boolean, maxChars: number): string {
  const parts = [page.url, `status ${page.status}`, mediaType(page) || "no content type", size(page.bytes)];
  if (page.redirects.length > 0)
    parts.push(`after ${page.redirects.length} redirect${page.redirects.length === 1 ? "" : "s"}`);
  const cuts: string[] = [];
  if (page.truncated) cuts.push(`the page is over ${size(DEFAULT_MAX_BYTES)}, only its start was read`);
  if (cut)
    cuts.push(
      maxChars < MAX_CALL_CHARS
        ? `text cut at ${maxChars} characters (ask for more with maxChars, up to ${MAX_CALL_CHARS})`
        : `text cut at ${maxChars} characters`,
    );
  parts.push(cuts.length > 0 ? `cut: ${cuts.join("; ")}` : "not cut");
  return parts.join(" · ");
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
}
