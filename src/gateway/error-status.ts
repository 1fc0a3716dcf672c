/**
 * How the gateway's own refusals look over HTTP: a message it could not take now (shutting
 * down, the store failing) is a 503 with Retry-After — nothing was committed, so the client may
 * send the same request (with the same id) again and it is processed exactly once.
 */
import { SinkUnavailableError } from "../channels/errors.js";
import type { ErrorStatus } from "../http/server.js";
import { StoreError } from "../store/store-error.js";

/** The HTTP answer for an error of the gateway's layers, or undefined (a bug: 500). */
export function gatewayErrorStatus(err: unknown): ErrorStatus | undefined {
  if (err instanceof SinkUnavailableError)
    return { status: 503, code: "unavailable", retryAfterS: Math.ceil(err.retryAfterMs / 1000) };
  if (err instanceof StoreError) return { status: 503, code: `store_${err.code}`, retryAfterS: 1 };
  return undefined;
}
