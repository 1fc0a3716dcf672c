/**
 * `tools.web` in the configuration: the web capability's settings fragment (config/schema.ts
 * places it under `tools`). A bad value is a ConfigError naming the key; a search URL with
 * credentials is refused without echoing them.
 */
import net from "node:net";
import { z } from "zod";
import { nullAsUnset, section } from "../../util/zod-sections.js";

/** Default `tools.web.timeoutMs`: one fetch, redirects included. */
export const DEFAULT_WEB_TIMEOUT_MS = 15_000;
/** Default `tools.web.maxChars`: Markdown characters one web_fetch returns. */
export const DEFAULT_WEB_MAX_CHARS = 20_000;

/** A DNS name: labels of letters, digits and inner hyphens, 1–63 characters each. */
const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** Whether `entry` is a host name or an IP address (IPv6 with or without brackets). */
function isHostEntry(entry: string): boolean {
  const bare = entry.replace(/^\[(.*)\]$/, "$1");
  return net.isIP(bare) !== 0 || HOST_NAME.test(entry);
}

const hostEntry = z.string().superRefine((entry, ctx) => {
  if (isHostEntry(entry)) return;
  ctx.addIssue({
    code: "custom",
    message: `${JSON.stringify(entry.slice(0, 100))} is not a host name or an IP address (write e.g. 127.0.0.1 or searx.lan: no scheme, port, path or wildcard)`,
    params: { namesValues: true },
  });
});

/** The URL, or the reason it is no SearXNG base URL; never echoes credentials. */
const searchUrl = z.string().superRefine((value, ctx) => {
  const fail = (message: string) => ctx.addIssue({ code: "custom", message, params: { namesValues: true } });
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail("is not a URL (expected the base URL of a SearXNG instance, e.g. http://127.0.0.1:8888)");
    return;
  }
  if (url.username !== "" || url.password !== "") {
    fail(
      "has credentials in it (user:password@host); they would be sent to the search host and shown in logs",
    );
    return;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    fail(`is a ${url.protocol} URL; expected http: or https: (the base URL of a SearXNG instance)`);
});

/**
 * `tools.web`: `web_fetch` (a page as Markdown, through the SSRF guard) and, with a SearXNG
 * instance, `web_search`. The tool policy's group `web` still decides per chat.
 */
export const webSettings = section({
  /** Offer `web_fetch`. Default true (the policy's profile and rules still apply). */
  fetch: z.boolean().default(true),
  /**
   * Host names and IP addresses exempt from the SSRF guard (which refuses loopback, private,
   * link-local and metadata addresses). A local SearXNG must be listed here. Default none.
   */
  allowHosts: z.array(hostEntry).default([]),
  /** Base URL of a SearXNG instance with its JSON format enabled; `web_search` exists only when set. */
  searchUrl: nullAsUnset(searchUrl),
  /** Time for one fetch or search, redirects included (and never past agent.toolTimeoutMs). Default 15000. */
  timeoutMs: z.number().int().positive().default(DEFAULT_WEB_TIMEOUT_MS),
  /** Characters of Markdown one web_fetch returns unless the call asks for fewer or more. Default 20000. */
  maxChars: z.number().int().min(1_000).max(100_000).default(DEFAULT_WEB_MAX_CHARS),
});

/** The parsed `tools.web` section. */
export type WebSettings = z.output<typeof webSettings>;
