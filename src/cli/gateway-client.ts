/**
 * Requests from the client commands to a found gateway: the bearer token goes along when the
 * configuration has one, and the two failures a person can act on (nothing answers; the token
 * is missing or wrong) become one GatewayRequestError each, with a one-line message.
 */
import { networkReason } from "../util/network-reason.js";
import type { FoundGateway } from "./find-gateway.js";

/** Nothing answers at the URL, or the gateway refused the request's token (HTTP 401). */
export type GatewayRequestErrorKind = "unreachable" | "unauthorized";

/** A request to the gateway that a person has to act on; `message` is one plain line. */
export class GatewayRequestError extends Error {
  readonly kind: GatewayRequestErrorKind;
  /** The gateway's base URL. */
  readonly url: string;
  /** The HTTP status, for `unauthorized`. */
  readonly status: number | undefined;

  constructor(
    kind: GatewayRequestErrorKind,
    message: string,
    context: { url: string; status?: number; cause?: unknown },
  ) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = "GatewayRequestError";
    this.kind = kind;
    this.url = context.url;
    this.status = context.status;
  }
}

/** What a 401 means when no token was sent. */
export const TOKEN_REQUIRED =
  "the gateway requires a token: set gateway.auth.token in the config it was started with, or pass --config";

/** One request. */
export interface GatewayRequest {
  /** Default "GET". */
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Limit for the whole request; default none (the caller's `signal` bounds it). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
}

/** The headers every /v1 request carries: `Authorization: Bearer <token>` when there is a token. */
export function authHeaders(found: Pick<FoundGateway, "token">): Record<string, string> {
  return found.token ? { authorization: `Bearer ${found.token}` } : {};
}

/**
 * Sends `path` to the gateway with the token. Throws GatewayRequestError `unreachable` when no
 * HTTP answer comes (refused, unknown host, timeout) and `unauthorized` on a 401; every other
 * answer is returned as it is.
 */
export async function requestGateway(
  found: Pick<FoundGateway, "url" | "token" | "clientConfig">,
  path: string,
  request: GatewayRequest = {},
): Promise<Response> {
  const signals = [
    ...(request.signal ? [request.signal] : []),
    ...(request.timeoutMs !== undefined ? [AbortSignal.timeout(request.timeoutMs)] : []),
  ];
  let res: Response;
  try {
    res = await (request.fetch ?? fetch)(`${found.url}${path}`, {
      method: request.method ?? "GET",
      headers: { ...request.headers, ...authHeaders(found) },
      ...(request.body !== undefined ? { body: request.body } : {}),
      ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
    });
  } catch (err) {
    throw new GatewayRequestError(
      "unreachable",
      `no gateway answers at ${found.url}: ${networkReason(err, request.timeoutMs)}`,
      { url: found.url, cause: err },
    );
  }
  if (res.status === 401) {
    await res.body?.cancel();
    throw new GatewayRequestError("unauthorized", unauthorizedMessage(found), {
      url: found.url,
      status: 401,
    });
  }
  return res;
}

/** Why a 401 happened, and what to do, in one line. */
function unauthorizedMessage(found: Pick<FoundGateway, "token" | "clientConfig">): string {
  const { file, problem } = found.clientConfig;
  if (found.token) {
    return `the gateway refused the token (gateway.auth.token in ${file ?? "the configuration"}): pass --config with the config it was started with`;
  }
  return problem ? `${TOKEN_REQUIRED} (the config could not be read: ${problem.message})` : TOKEN_REQUIRED;
}
