/**
 * The one place a refused or failed fetch becomes what the model is told: a table from the
 * guarded fetch's error codes to tool error codes. The message is the fetch's own one line
 * ("refused redirect 1 to http://169.254.169.254/ (from …): 169.254.169.254 is the cloud
 * metadata address").
 */
import { ToolError } from "../../harness/tools/tool-error.js";
import type { ToolErrorCode } from "../../harness/tools/types.js";
import type { WebFetchErrorCode } from "../../harness/tools/web/types.js";
import { WebFetchError } from "../../harness/tools/web/web-fetch-error.js";

/** What each fetch error is for the model: a URL it should fix, a refusal, or a failure. */
const TOOL_CODES: Readonly<Record<WebFetchErrorCode, ToolErrorCode>> = {
  bad_url: "invalid_arguments",
  scheme: "invalid_arguments",
  credentials_in_url: "invalid_arguments",
  private_address: "denied",
  too_many_redirects: "failed",
  http_status: "failed",
  unsupported_type: "failed",
  timeout: "failed",
  aborted: "failed",
  dns: "failed",
  tls: "failed",
  network: "failed",
};

/** A WebFetchError as a ToolError with the same message; anything else is returned as is. */
export function toToolError(err: unknown): unknown {
  if (!(err instanceof WebFetchError)) return err;
  return new ToolError(TOOL_CODES[err.code], err.message, { cause: err });
}
