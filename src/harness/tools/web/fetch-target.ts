/**
 * The checks every hop of a guarded fetch passes before a socket opens: a valid http(s) URL
 * without credentials, a host that is no known metadata name, and every address the host
 * resolves to allowed by the address guard (unless the host or address is in allowHosts).
 * The addresses checked are the ones the request then connects to (`pinnedLookup`), so a DNS
 * answer that changes between the check and the connection (rebinding) cannot move it.
 */
import type { LookupAddress, LookupOptions } from "node:dns";
import net from "node:net";
import { classifyAddress } from "./address-guard.js";
import type { LookupAll } from "./types.js";
import { WebFetchError, toWebFetchError } from "./web-fetch-error.js";

/** Host names of cloud metadata services, refused by name whatever they resolve to. */
const METADATA_HOSTS = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
]);

/** A URL that passed every check, with the addresses its connection must use. */
export interface CheckedTarget {
  readonly url: URL;
  /** The host without brackets (an IPv6 literal as `::1`), as the request's `hostname`. */
  readonly host: string;
  readonly addresses: readonly LookupAddress[];
}

/** What the checks need: the exemptions (normalized by {@link normalizeHost}), DNS, the fetch's signal. */
export interface TargetRules {
  readonly allowHosts: ReadonlySet<string>;
  readonly lookup: LookupAll;
  readonly signal: AbortSignal;
}

/** A URL for messages: credentials removed, cut at 200 characters. */
export function shownUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  return copy.href.length > 200 ? `${copy.href.slice(0, 199)}…` : copy.href;
}

/** Lower case, no IPv6 brackets, no trailing dot; IPv6 addresses in their canonical form. */
export function normalizeHost(host: string): string {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
  return net.isIPv6(bare) ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare;
}

/**
 * Checks `url` for one hop; `where` names the hop in messages ("http://x/", or "redirect 2 to
 * http://x/ (from http://y/)"). Resolves the host (all its addresses) unless it is an IP
 * literal. Throws a WebFetchError: `scheme`, `credentials_in_url`, `bad_url`,
 * `private_address`, `dns`, or the signal's reason when it aborts.
 */
export async function checkTarget(url: URL, where: string, rules: TargetRules): Promise<CheckedTarget> {
  const refuse = (code: WebFetchError["code"], reason: string) =>
    new WebFetchError(code, `refused ${where}: ${reason}`, { url: shownUrl(url) });
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw refuse("scheme", `only http: and https: URLs are fetched, not ${url.protocol}`);
  if (url.username !== "" || url.password !== "")
    throw refuse("credentials_in_url", "a URL with credentials (user:password@host) is not fetched");
  const host = normalizeHost(url.hostname);
  if (host === "") throw refuse("bad_url", "the URL has no host");
  const hostAllowed = rules.allowHosts.has(host);
  if (!hostAllowed && METADATA_HOSTS.has(host))
    throw refuse("private_address", `${host} is a cloud metadata host`);
  const family = net.isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await resolve(host, url, rules);
  for (const { address } of addresses) {
    if (hostAllowed || rules.allowHosts.has(normalizeHost(address))) continue;
    const blocked = classifyAddress(address);
    if (!blocked) continue;
    const what = family !== 0 ? `${host} is` : `${host} resolves to ${address},`;
    throw refuse("private_address", `${what} ${blocked.reason}`);
  }
  return { url, host, addresses };
}

/**
 * A `lookup` for node's request options that answers with the checked addresses only (all of
 * them when asked for all, for happy eyeballs; else the first of the family asked for).
 */
export function pinnedLookup(addresses: readonly LookupAddress[]) {
  return (
    _hostname: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
    const matching = addresses.filter((a) => wanted === 0 || a.family === wanted);
    const list = matching.length > 0 ? matching : [...addresses];
    const first = list[0]!;
    if (options.all) callback(null, list);
    else callback(null, first.address, first.family);
  };
}

async function resolve(host: string, url: URL, rules: TargetRules): Promise<LookupAddress[]> {
  const { signal } = rules;
  if (signal.aborted) throw signal.reason;
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const addresses = await Promise.race([rules.lookup(host), aborted]);
    if (addresses.length === 0)
      throw new WebFetchError("dns", `cannot resolve ${host}: no address`, { url: shownUrl(url) });
    return addresses;
  } catch (err) {
    throw signal.aborted ? signal.reason : toWebFetchError(err, shownUrl(url));
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
