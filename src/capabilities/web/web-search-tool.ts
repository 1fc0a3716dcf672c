/**
 * The `web_search` tool: one query to a SearXNG instance's JSON API (`GET <searchUrl>/search?
 * q=…&format=json`, read through the guarded fetch, so a local instance must be in
 * `tools.web.allowHosts`), answered as a numbered list of title — URL — snippet inside an
 * untrusted block. Exists only when `tools.web.searchUrl` is set.
 */
import { z } from "zod";
import { ToolError } from "../../harness/tools/tool-error.js";
import type { Tool } from "../../harness/tools/types.js";
import { untrustedBlock } from "../../harness/tools/untrusted.js";
import { safeFetch } from "../../harness/tools/web/safe-fetch.js";
import type { FetchedPage, LookupAll } from "../../harness/tools/web/types.js";
import type { Clock } from "../../util/clock.js";
import { DEFAULT_WEB_TIMEOUT_MS } from "./settings.js";
import { toToolError } from "./web-fetch-error.js";

/** Results listed when the call names no count. */
export const DEFAULT_SEARCH_COUNT = 5;
/** The most results one call may list. */
export const MAX_SEARCH_COUNT = 20;
/** Bytes of a SearXNG answer read at most. */
const MAX_ANSWER_BYTES = 1024 * 1024;
const MAX_TITLE_CHARS = 200;
const MAX_SNIPPET_CHARS = 400;

/** What `web_search` searches with; the web capability fills it from `tools.web`. */
export interface WebSearchToolOptions {
  /** Base URL of the SearXNG instance, e.g. `http://127.0.0.1:8888` (a path prefix is kept). */
  searchUrl: string;
  /** Hosts and addresses exempt from the SSRF guard (a local SearXNG must be one). Default none. */
  allowHosts?: readonly string[];
  /** Time for one search. Default 15_000. */
  timeoutMs?: number;
  /** Times the deadline. Default the system clock. */
  clock?: Clock;
  /** DNS seam. Default the system resolver. */
  lookup?: LookupAll;
}

const searchParameters = z.strictObject({
  query: z.string().trim().min(1).max(500).describe("What to search the web for"),
  count: z
    .number()
    .int()
    .min(1)
    .max(MAX_SEARCH_COUNT)
    .optional()
    .describe(`How many results to list (default ${DEFAULT_SEARCH_COUNT}, at most ${MAX_SEARCH_COUNT})`),
});

/** The part of SearXNG's JSON answer read: `results[]` with `title`, `url` and `content`. */
const searxAnswer = z.object({
  results: z.array(
    z.object({
      url: z.string(),
      title: z.string().nullish(),
      content: z.string().nullish(),
    }),
  ),
});

/** One search result as listed. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** The `web_search` tool. A search that fails (refused, unreachable, not JSON) throws a ToolError with one line. */
export function webSearchTool(options: WebSearchToolOptions): Tool<typeof searchParameters> {
  return {
    name: "web_search",
    groups: ["web"],
    description:
      "Search the web and get a numbered list of results: title, URL and a snippet each. Read a " +
      "result with web_fetch.",
    parameters: searchParameters,
    async run(args, ctx) {
      const url = searchEndpoint(options.searchUrl, args.query);
      let page: FetchedPage;
      try {
        page = await safeFetch(url, {
          allowHosts: options.allowHosts ?? [],
          timeoutMs: options.timeoutMs ?? DEFAULT_WEB_TIMEOUT_MS,
          maxBytes: MAX_ANSWER_BYTES,
          signal: ctx.signal,
          ...(options.clock ? { clock: options.clock } : {}),
          ...(options.lookup ? { lookup: options.lookup } : {}),
        });
      } catch (err) {
        throw toToolError(err);
      }
      const results = parseAnswer(page).slice(0, args.count ?? DEFAULT_SEARCH_COUNT);
      const head = `web_search "${args.query}": ${results.length === 0 ? "no results" : `${results.length} result${results.length === 1 ? "" : "s"}`}`;
      if (results.length === 0) return { content: head };
      const list = results.map(
        (r, i) => `${i + 1}. ${r.title} — ${r.url}${r.snippet ? ` — ${r.snippet}` : ""}`,
      );
      return { content: `${head}\n${untrustedBlock(`web_search ${args.query}`, list.join("\n")).text}` };
    },
  };
}

/** `<base>/search?q=<query>&format=json`, keeping a path prefix of the base (`http://h/searx/`). */
export function searchEndpoint(base: string, query: string): string {
  const url = new URL("search", base.endsWith("/") ? base : `${base}/`);
  url.searchParams.set("q", query);
  url.searchParams.set("format", "json");
  return url.href;
}

/** The results of a SearXNG answer; a ToolError saying what is wrong with one that is not. */
export function parseAnswer(page: FetchedPage): SearchResult[] {
  const host = new URL(page.url).host;
  if (page.status === 403)
    throw new ToolError(
      "failed",
      `the search service at ${host} refused the JSON format (403): enable it in SearXNG's settings.yml (search.formats: [html, json])`,
    );
  if (page.status !== 200)
    throw new ToolError("failed", `the search service at ${host} answered ${page.status}`);
  let json: unknown;
  try {
    json = JSON.parse(page.text);
  } catch {
    throw new ToolError(
      "failed",
      `the search service at ${host} did not answer JSON (is searchUrl a SearXNG instance?)`,
    );
  }
  const parsed = searxAnswer.safeParse(json);
  if (!parsed.success)
    throw new ToolError("failed", `the search service at ${host} answered JSON without a results list`);
  return parsed.data.results.map((r) => ({
    title: oneLine(r.title ?? "", MAX_TITLE_CHARS) || r.url,
    url: r.url,
    snippet: oneLine(r.content ?? "", MAX_SNIPPET_CHARS),
  }));
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
