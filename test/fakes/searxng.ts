/**
 * A fake SearXNG instance on 127.0.0.1:0 speaking its search API: `GET /search?q=…&format=json`
 * answers SearXNG's JSON shape (`query`, `number_of_results`, `results[]` with `url`, `title`,
 * `content`, `engine`, `engines`, `parsed_url`, `positions`, `score`, `category`, and the
 * `answers`, `corrections`, `infoboxes`, `suggestions`, `unresponsive_engines` lists). Like a
 * real instance whose settings.yml does not list `json` in `search.formats`, it answers 403
 * when `jsonEnabled` is false. Any other format gets an HTML page.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** A result the fake lists: the fields a test sets. */
export interface FakeSearchResult {
  title: string;
  url: string;
  content?: string;
}

/** Options of the fake. */
export interface FakeSearxngOptions {
  /** Results by query; default no results for any query. */
  results?: (query: string) => FakeSearchResult[];
  /** Whether the JSON format is enabled (false: 403 Forbidden, as SearXNG does). Default true. */
  jsonEnabled?: boolean;
}

/** A fake SearXNG: start, point `tools.web.searchUrl` at `url`, read `queries`, close. */
export class FakeSearxng {
  readonly #options: FakeSearxngOptions;
  readonly #server = http.createServer((req, res) => this.#handle(req, res));
  /** Every `q` asked, in order, with the `format` asked for. */
  readonly queries: Array<{ q: string; format: string | null; path: string }> = [];
  #url = "";

  constructor(options: FakeSearxngOptions = {}) {
    this.#options = options;
  }

  /** Listens on 127.0.0.1 on a free port. */
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Its base URL, e.g. `http://127.0.0.1:41234`. */
  get url(): string {
    return this.#url;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? "/", this.#url);
    if (url.pathname !== "/search") {
      res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not Found</h1>");
      return;
    }
    const q = url.searchParams.get("q") ?? "";
    const format = url.searchParams.get("format");
    this.queries.push({ q, format, path: url.pathname });
    if (format !== "json") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(`<title>${q} - SearXNG</title>`);
      return;
    }
    if (this.#options.jsonEnabled === false) {
      res.writeHead(403, { "content-type": "text/html; charset=utf-8" }).end("<title>403 Forbidden</title>");
      return;
    }
    const results = (this.#options.results?.(q) ?? []).map((r, i) => {
      const parsed = new URL(r.url);
      return {
        url: r.url,
        title: r.title,
        content: r.content ?? "",
        engine: "duckduckgo",
        parsed_url: [
          parsed.protocol.slice(0, -1),
          parsed.host,
          parsed.pathname,
          "",
          parsed.search.slice(1),
          "",
        ],
        template: "default.html",
        engines: ["duckduckgo", "brave"],
        positions: [i + 1],
        publishedDate: null,
        score: 2 / (i + 1),
        category: "general",
      };
    });
    const body = {
      query: q,
      number_of_results: results.length,
      results,
      answers: [],
      corrections: [],
      infoboxes: [],
      suggestions: [`${q} tutorial`],
      unresponsive_engines: [["google", "timeout"]],
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  }
}
