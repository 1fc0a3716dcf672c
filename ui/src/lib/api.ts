/**
 * The admin API's client: every call sends the token as a Bearer header (no cookies), turns the
 * gateway's error body (`{ error: { message, code } }`) into an {@link ApiError}, and reports a
 * 401 once to `onUnauthorized` (the page then shows only its login form).
 */
import type { ByteStream } from "./sse-parser.js";

/** What the client needs of a `fetch` response. */
export interface ResponseLike {
  status: number;
  ok: boolean;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  body: ByteStream | null;
}

/** What the client needs of `fetch`. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<ResponseLike>;

/** Options of {@link AdminApi}. */
export interface AdminApiOptions {
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** The current token (undefined: none; a gateway without a token serves loopback clients). */
  token(): string | undefined;
  /** Told of every 401 (the token was refused or is missing). */
  onUnauthorized(): void;
}

/** What went wrong with a call: `status` 0 when the gateway could not be reached. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(status: number, message: string, code?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

/** The message of an error body, else a line naming the status. */
function errorOf(status: number, text: string): ApiError {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } };
    const message = body.error?.message;
    if (typeof message === "string" && message !== "") {
      const code = typeof body.error?.code === "string" ? body.error.code : undefined;
      return new ApiError(status, message, code);
    }
  } catch {
    // Not JSON: a proxy's page, say.
  }
  return new ApiError(status, `the gateway answered ${status}${text ? `: ${text.slice(0, 200)}` : ""}`);
}

/** The page's connection to `/v1/admin/…` (and the console channel, which takes the same token). */
export class AdminApi {
  readonly #o: AdminApiOptions;

  constructor(options: AdminApiOptions) {
    this.#o = options;
  }

  /** The headers every call sends. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    const token = this.#o.token();
    return { ...extra, ...(token ? { authorization: `Bearer ${token}` } : {}) };
  }

  /**
   * Sends a request; resolves with the response when it is 2xx, throws ApiError otherwise (a
   * 401 is also reported to `onUnauthorized`). The caller reads the body.
   */
  async request(
    path: string,
    init: { method?: string; body?: unknown; accept?: string; headers?: Record<string, string> } = {},
    signal?: AbortSignal,
  ): Promise<ResponseLike> {
    // The global fetch is called as a function of its own: a browser refuses it detached from `globalThis`.
    const doFetch: FetchLike =
      this.#o.fetch ?? ((url, init) => globalThis.fetch(url, init) as unknown as Promise<ResponseLike>);
    const method = init.method ?? (init.body === undefined ? "GET" : "POST");
    const headers = this.headers({
      accept: init.accept ?? "application/json",
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      ...init.headers,
    });
    let res: ResponseLike;
    try {
      res = await doFetch(path, {
        method,
        headers,
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new ApiError(0, "the gateway cannot be reached", "unreachable", { cause: err });
    }
    if (res.status === 401) {
      await res.text().catch(() => "");
      this.#o.onUnauthorized();
      throw new ApiError(401, "That token was refused", "unauthorized");
    }
    if (!res.ok) throw errorOf(res.status, await res.text().catch(() => ""));
    return res;
  }

  /** GET `path` as JSON. */
  async get<T>(path: string, signal?: AbortSignal): Promise<T> {
    const res = await this.request(path, {}, signal);
    return JSON.parse(await res.text()) as T;
  }

  /** POST `body` as JSON to `path`; the answer as JSON. */
  async post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.request(path, { body }, signal);
    return JSON.parse(await res.text()) as T;
  }
}
