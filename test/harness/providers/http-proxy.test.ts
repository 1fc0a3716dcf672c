/**
 * Proxy settings from the environment and NO_PROXY matching, as curl defines them (plus the
 * documented extensions: ports, `*.` prefixes, bracketed IPv6, loopback always direct).
 */
import { describe, expect, it } from "vitest";
import { NoProxy, proxyFor, proxySettingsFromEnv } from "../../../src/harness/providers/http-proxy.js";

describe("NoProxy", () => {
  // [NO_PROXY, host as in URL.hostname, port, goes direct?]
  const cases: Array<[string, string, number, boolean]> = [
    // Empty list: everything is proxied (but loopback).
    ["", "api.openai.com", 443, false],
    // `*` alone matches everything.
    ["*", "api.openai.com", 443, true],
    ["example.com, *", "api.openai.com", 443, true],
    // A name matches itself and its subdomains, at a dot boundary only.
    ["example.com", "example.com", 443, true],
    ["example.com", "api.example.com", 443, true],
    ["example.com", "a.b.example.com", 443, true],
    ["example.com", "notexample.com", 443, false],
    ["example.com", "example.com.evil.net", 443, false],
    // A leading dot (or `*.`) is ignored: the domain itself matches too, as in curl.
    [".example.com", "example.com", 443, true],
    [".example.com", "api.example.com", 443, true],
    ["*.example.com", "api.example.com", 443, true],
    ["*.example.com", "example.com", 443, true],
    // Case-insensitive; trailing dots ignored on both sides.
    ["Example.COM", "API.example.com", 443, true],
    ["example.com.", "api.example.com", 443, true],
    ["example.com", "api.example.com.", 443, true],
    // Commas and blanks separate entries; empty entries are skipped.
    [" foo.org ,, example.com ", "api.example.com", 443, true],
    ["foo.org example.com", "example.com", 443, true],
    ["foo.org", "example.com", 443, false],
    // host:port matches that port only; a bare name matches every port.
    ["example.com:8443", "example.com", 8443, true],
    ["example.com:8443", "example.com", 443, false],
    ["example.com", "example.com", 8443, true],
    // IPv4 literals: exact, or CIDR.
    ["10.1.2.3", "10.1.2.3", 443, true],
    ["10.1.2.3", "10.1.2.4", 443, false],
    ["10.0.0.0/8", "10.200.3.4", 443, true],
    ["10.0.0.0/8", "11.0.0.1", 443, false],
    ["192.168.1.0/24", "192.168.1.77", 80, true],
    ["10.1.2.3:8080", "10.1.2.3", 8080, true],
    ["10.1.2.3:8080", "10.1.2.3", 443, false],
    // An impossible prefix matches nothing.
    ["10.0.0.0/33", "10.0.0.1", 443, false],
    // IPv6 literals (the URL hostname keeps its brackets), bare or bracketed, with CIDR.
    ["2001:db8::1", "[2001:db8::1]", 443, true],
    ["[2001:db8::1]", "[2001:db8::1]", 443, true],
    ["[2001:db8::1]:8443", "[2001:db8::1]", 443, false],
    ["2001:db8::/32", "[2001:db8:abcd::5]", 443, true],
    ["2001:db8::/32", "[2001:db9::5]", 443, false],
    // Names never match IPs and IPs never match names.
    ["example.com", "10.0.0.1", 443, false],
    ["10.0.0.1", "ten.example.com", 443, false],
    // Loopback is always direct (the simulator and local model servers live there).
    ["", "localhost", 8080, true],
    ["", "LOCALHOST.", 8080, true],
    ["", "sim.localhost", 8080, true],
    ["", "127.0.0.1", 8080, true],
    ["", "127.8.9.10", 8080, true],
    ["", "[::1]", 8080, true],
    ["", "localhost.example.com", 443, false],
  ];

  it.each(cases)("NO_PROXY=%j, %s:%d → direct %s", (list, host, port, direct) => {
    expect(new NoProxy(list).matches(host, port)).toBe(direct);
  });
});

describe("proxySettingsFromEnv", () => {
  it("is undefined when no proxy variable is set (empty values count as unset)", () => {
    expect(proxySettingsFromEnv({})).toBeUndefined();
    expect(proxySettingsFromEnv({ https_proxy: "", HTTP_PROXY: "  ", no_proxy: "x" })).toBeUndefined();
  });

  it("prefers the lower-case variable, falls back to the upper-case one", () => {
    const both = proxySettingsFromEnv({ https_proxy: "http://lower:1", HTTPS_PROXY: "http://upper:2" });
    expect(both?.["https:"]).toMatchObject({ host: "lower", port: 1 });
    const upper = proxySettingsFromEnv({ https_proxy: "", HTTPS_PROXY: "http://upper:2" });
    expect(upper?.["https:"]).toMatchObject({ host: "upper", port: 2 });
    expect(upper?.["http:"]).toBeUndefined();
  });

  it("reads HTTP_PROXY, except under CGI (REQUEST_METHOD set), where a request header can set it", () => {
    expect(proxySettingsFromEnv({ HTTP_PROXY: "http://p:3128" })?.["http:"]).toMatchObject({ host: "p" });
    expect(proxySettingsFromEnv({ HTTP_PROXY: "http://p:3128", REQUEST_METHOD: "GET" })).toBeUndefined();
    const cgi = proxySettingsFromEnv({ http_proxy: "http://q:3128", REQUEST_METHOD: "GET" });
    expect(cgi?.["http:"]).toMatchObject({ host: "q" });
  });

  it("takes scheme-less values as http://, with default ports, IPv6 hosts and Basic credentials", () => {
    const env = {
      https_proxy: "proxy.corp:3128",
      http_proxy: "https://u%40corp:p%3Ass@[fd00::1]",
      NO_PROXY: ".internal",
    };
    const settings = proxySettingsFromEnv(env);
    expect(settings?.["https:"]).toEqual({
      tls: false,
      host: "proxy.corp",
      port: 3128,
      authorization: undefined,
      shown: "http://proxy.corp:3128",
    });
    expect(settings?.["http:"]).toEqual({
      tls: true,
      host: "fd00::1",
      port: 443,
      authorization: `Basic ${Buffer.from("u@corp:p:ss").toString("base64")}`,
      shown: "https://***@[fd00::1]:443",
    });
    expect(proxySettingsFromEnv({ http_proxy: "http://p" })?.["http:"]?.port).toBe(80);
  });

  it("routes by scheme and NO_PROXY (lower-case first)", () => {
    const settings = proxySettingsFromEnv({
      https_proxy: "http://p:1",
      no_proxy: "skip.example",
      NO_PROXY: "api.vendor.test",
    });
    if (!settings) throw new Error("expected settings");
    expect(proxyFor(settings, new URL("https://api.vendor.test/v1"))?.host).toBe("p");
    expect(proxyFor(settings, new URL("https://a.skip.example/"))).toBeUndefined();
    expect(proxyFor(settings, new URL("http://api.vendor.test/"))).toBeUndefined(); // no http_proxy
  });

  it.each([
    [
      "https_proxy",
      "socks5://127.0.0.1:1080",
      /https_proxy: got "socks5:\/\/127\.0\.0\.1:1080", expected an http:\/\/ or https:\/\/ proxy URL \(SOCKS/,
    ],
    ["HTTP_PROXY", "http://us:secret@[bad", /HTTP_PROXY: got "http:\/\/\*\*\*@\[bad", expected a proxy URL/],
  ])("refuses a malformed %s, naming it with credentials hidden", (name, value, message) => {
    expect(() => proxySettingsFromEnv({ [name]: value })).toThrow(message);
    expect(() => proxySettingsFromEnv({ [name]: value })).not.toThrow(/secret/);
  });
});
