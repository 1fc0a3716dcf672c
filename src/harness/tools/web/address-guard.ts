/**
 * The SSRF guard's address rule: which IP addresses a fetch may not connect to. One ordered
 * table of ranges, checked with node's `net.BlockList` (which also matches IPv4-mapped IPv6,
 * `::ffff:127.0.0.1`, against the IPv4 rows). IPv6 forms that carry an IPv4 address — NAT64
 * `64:ff9b::/96` (RFC 6052) and 6to4 `2002::/16` — are judged by the address they carry, so a
 * NAT64 gateway cannot be used to reach 10.0.0.1; the local-use NAT64 prefix, Teredo and the
 * deprecated IPv4-compatible `::/96` are refused outright.
 */
import net from "node:net";

/** Why an address is refused. */
export type BlockedCategory =
  | "metadata"
  | "loopback"
  | "private"
  | "link_local"
  | "unspecified"
  | "shared"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "invalid";

/** A refused address: its category and a phrase for messages ("a private address"). */
export interface BlockedAddress {
  readonly address: string;
  readonly category: BlockedCategory;
  /** A noun phrase naming what the address is, e.g. "a loopback address". */
  readonly reason: string;
}

interface Range {
  readonly category: BlockedCategory;
  readonly reason: string;
  /** CIDR, e.g. "10.0.0.0/8" or "fc00::/7". */
  readonly cidr: string;
}

/** First match wins: specific rows (the metadata address, broadcast) come before their ranges. */
const RANGES: readonly Range[] = [
  { category: "metadata", reason: "the cloud metadata address", cidr: "169.254.169.254/32" },
  { category: "metadata", reason: "the cloud metadata address (AWS IPv6)", cidr: "fd00:ec2::254/128" },
  { category: "broadcast", reason: "the broadcast address", cidr: "255.255.255.255/32" },
  { category: "unspecified", reason: "an unspecified address", cidr: "0.0.0.0/8" },
  { category: "private", reason: "a private address", cidr: "10.0.0.0/8" },
  { category: "shared", reason: "a carrier-grade NAT address", cidr: "100.64.0.0/10" },
  { category: "loopback", reason: "a loopback address", cidr: "127.0.0.0/8" },
  { category: "link_local", reason: "a link-local address", cidr: "169.254.0.0/16" },
  { category: "private", reason: "a private address", cidr: "172.16.0.0/12" },
  { category: "reserved", reason: "a reserved address", cidr: "192.0.0.0/24" },
  { category: "reserved", reason: "a documentation address", cidr: "192.0.2.0/24" },
  { category: "reserved", reason: "a 6to4 relay address", cidr: "192.88.99.0/24" },
  { category: "private", reason: "a private address", cidr: "192.168.0.0/16" },
  { category: "reserved", reason: "a benchmarking address", cidr: "198.18.0.0/15" },
  { category: "reserved", reason: "a documentation address", cidr: "198.51.100.0/24" },
  { category: "reserved", reason: "a documentation address", cidr: "203.0.113.0/24" },
  { category: "multicast", reason: "a multicast address", cidr: "224.0.0.0/4" },
  { category: "reserved", reason: "a reserved address", cidr: "240.0.0.0/4" },
  { category: "unspecified", reason: "an unspecified address", cidr: "::/128" },
  { category: "loopback", reason: "a loopback address", cidr: "::1/128" },
  { category: "reserved", reason: "an IPv4-compatible address (deprecated)", cidr: "::/96" },
  { category: "reserved", reason: "a local-use NAT64 address", cidr: "64:ff9b:1::/48" },
  { category: "reserved", reason: "a discard-only address", cidr: "100::/64" },
  { category: "reserved", reason: "a Teredo tunnel address", cidr: "2001::/32" },
  { category: "reserved", reason: "a documentation address", cidr: "2001:db8::/32" },
  { category: "private", reason: "a unique local (private) address", cidr: "fc00::/7" },
  { category: "link_local", reason: "a link-local address", cidr: "fe80::/10" },
  { category: "private", reason: "a site-local (private) address", cidr: "fec0::/10" },
  { category: "multicast", reason: "a multicast address", cidr: "ff00::/8" },
];

const LISTS: ReadonlyArray<{ range: Range; list: net.BlockList }> = RANGES.map((range) => {
  const [base, bits] = range.cidr.split("/") as [string, string];
  const list = new net.BlockList();
  list.addSubnet(base, Number(bits), net.isIPv6(base) ? "ipv6" : "ipv4");
  return { range, list };
});

/** IPv6 prefixes whose addresses carry an IPv4 address, and the byte where it starts. */
const EMBEDDING: ReadonlyArray<{ name: string; list: net.BlockList; at: number }> = [
  { name: "NAT64", cidr: "64:ff9b::/96", at: 12 },
  { name: "6to4", cidr: "2002::/16", at: 2 },
].map(({ name, cidr, at }) => {
  const [base, bits] = cidr.split("/") as [string, string];
  const list = new net.BlockList();
  list.addSubnet(base, Number(bits), "ipv6");
  return { name, list, at };
});

/**
 * Classifies an IP address (v4 or v6, an IPv6 zone suffix ignored): undefined when a fetch may
 * connect to it (a public address), else why not. Fails closed: a string that is not an IP
 * address is refused as `invalid`.
 */
export function classifyAddress(address: string): BlockedAddress | undefined {
  const bare = address.replace(/%.*$/, "");
  const family = net.isIP(bare);
  if (family === 0) return { address, category: "invalid", reason: "not an IP address" };
  const type = family === 4 ? "ipv4" : "ipv6";
  for (const { range, list } of LISTS) {
    if (list.check(bare, type)) return { address, category: range.category, reason: range.reason };
  }
  if (family === 6) {
    for (const { name, list, at } of EMBEDDING) {
      if (!list.check(bare, "ipv6")) continue;
      const inner = embeddedIpv4(bare, at);
      const blocked = inner === undefined ? undefined : classifyAddress(inner);
      if (blocked)
        return { address, category: blocked.category, reason: `${name} for ${inner}, ${blocked.reason}` };
    }
  }
  return undefined;
}

/** The IPv4 address in bytes `at..at+3` of an IPv6 address. */
function embeddedIpv4(address: string, at: number): string | undefined {
  const bytes = ipv6Bytes(address);
  return bytes ? Array.from(bytes.subarray(at, at + 4)).join(".") : undefined;
}

/** The 16 bytes of a valid IPv6 address (`::` and a trailing dotted quad included). */
function ipv6Bytes(address: string): Uint8Array | undefined {
  let text = address;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const words = (part: string | undefined) =>
    part ? part.split(":").map((w) => Number.parseInt(w, 16)) : [];
  const first = words(head);
  const last = words(tail);
  const all =
    tail === undefined ? first : [...first, ...Array(8 - first.length - last.length).fill(0), ...last];
  if (all.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  all.forEach((word, i) => {
    bytes[2 * i] = word >> 8;
    bytes[2 * i + 1] = word & 0xff;
  });
  return bytes;
}
