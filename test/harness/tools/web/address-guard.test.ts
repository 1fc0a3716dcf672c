/** The SSRF guard's address table over v4 and v6 addresses, embedded forms included. */
import { describe, expect, it } from "vitest";
import { type BlockedCategory, classifyAddress } from "../../../../src/harness/tools/web/address-guard.js";

const REFUSED: ReadonlyArray<[string, BlockedCategory]> = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["169.254.169.254", "metadata"],
  ["169.254.0.1", "link_local"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["100.64.0.1", "shared"],
  ["100.127.255.255", "shared"],
  ["100.100.100.200", "shared"], // Alibaba Cloud's metadata address
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["255.255.255.255", "broadcast"],
  ["240.0.0.1", "reserved"],
  ["192.0.2.10", "reserved"],
  ["198.18.0.1", "reserved"],
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:169.254.169.254", "metadata"],
  ["0:0:0:0:0:ffff:c0a8:101", "private"],
  ["::10.0.0.1", "reserved"], // IPv4-compatible, deprecated
  ["64:ff9b::127.0.0.1", "loopback"], // NAT64 of a loopback address
  ["64:ff9b::a00:1", "private"],
  ["64:ff9b::a9fe:a9fe", "metadata"],
  ["64:ff9b:1::1", "reserved"], // local-use NAT64
  ["2002:a00:1::1", "private"], // 6to4 of 10.0.0.1
  ["2002:7f00:1::", "loopback"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"], // Teredo
  ["2001:db8::1", "reserved"],
  ["fc00::1", "private"],
  ["fd12:3456:789a::1", "private"],
  ["fd00:ec2::254", "metadata"],
  ["fe80::1", "link_local"],
  ["fe80::1%eth0", "link_local"],
  ["febf:ffff::1", "link_local"],
  ["fec0::1", "private"],
  ["ff02::1", "multicast"],
  ["not-an-ip", "invalid"],
  ["", "invalid"],
  ["1.2.3", "invalid"],
];

const ALLOWED: readonly string[] = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.216.34",
  "172.15.255.255", // just below 172.16/12
  "172.32.0.0", // just above
  "100.63.255.255", // just below 100.64/10
  "100.128.0.0",
  "169.253.255.255",
  "192.169.0.1",
  "223.255.255.255",
  "::ffff:8.8.8.8",
  "64:ff9b::808:808", // NAT64 of a public address
  "2002:808:808::1", // 6to4 of a public address
  "2606:4700:4700::1111",
  "2a00:1450:4001:82b::200e",
];

describe("classifyAddress", () => {
  it.each(REFUSED)("refuses %s as %s", (address, category) => {
    const blocked = classifyAddress(address);
    expect(blocked?.category).toBe(category);
    expect(blocked?.address).toBe(address);
    expect(blocked?.reason).toMatch(/^(a|an|the|NAT64|6to4|not) /);
  });

  it.each(ALLOWED)("allows the public address %s", (address) => {
    expect(classifyAddress(address)).toBeUndefined();
  });

  it("names the IPv4 address an embedding carries", () => {
    expect(classifyAddress("64:ff9b::a00:1")?.reason).toBe("NAT64 for 10.0.0.1, a private address");
    expect(classifyAddress("2002:a9fe:a9fe::")?.reason).toBe(
      "6to4 for 169.254.169.254, the cloud metadata address",
    );
  });
});
