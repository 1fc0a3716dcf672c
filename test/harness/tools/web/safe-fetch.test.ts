/**
 * The guarded fetch's URL rules, SSRF guard and redirects, against real node:http(s) servers
 * on 127.0.0.1 (listed in allowHosts where a test needs to reach them) and an injected
 * `lookup` standing in for DNS answers, public or private. Size, type and time:
 * safe-fetch-content.test.ts.
 */
import type { LookupAddress } from "node:dns";
import zlib from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { safeFetch } from "../../../../src/harness/tools/web/safe-fetch.js";
import { TEST_HOST, TEST_TLS } from "../../../fakes/test-tls.js";
import { type Handler, LOCAL, closeServers, fakeDns, page, refusal, startServer } from "./web-test-server.js";

afterEach(closeServers);

describe("safeFetch: pages", () => {
  it("fetches a plain page from an allowed host", async () => {
    const server = await startServer(page("<h1>Hello</h1>"));
    const got = await safeFetch(`${server.origin}/a?b=1`, { ...LOCAL, userAgent: "test-agent" });
    expect(got).toEqual({
      url: `${server.origin}/a?b=1`,
      status: 200,
      contentType: "text/html; charset=utf-8",
      text: "<h1>Hello</h1>",
      bytes: 14,
      truncated: false,
      redirects: [],
    });
    expect(server.seen).toEqual([
      { path: "/a?b=1", host: `127.0.0.1:${server.port}`, userAgent: "test-agent" },
    ]);
  });

  it("returns a 404 with its status and body rather than throwing", async () => {
    const server = await startServer(page("no such page", "text/plain", 404));
    const got = await safeFetch(`${server.origin}/missing`, LOCAL);
    expect([got.status, got.text]).toEqual([404, "no such page"]);
  });

  it("decodes latin1 from the Content-Type charset, and a gzip body", async () => {
    const latin = await startServer(
      page(Buffer.from("café à Zürich", "latin1"), "text/plain; charset=ISO-8859-1"),
    );
    expect((await safeFetch(latin.origin, LOCAL)).text).toBe("café à Zürich");
    const gzip = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(zlib.gzipSync(JSON.stringify({ ok: "ü" })));
    });
    expect(await safeFetch(gzip.origin, LOCAL)).toMatchObject({ text: '{"ok":"ü"}', bytes: 11 });
  });

  it("connects to the address it checked, once resolved: a rebinding DNS answer is never used", async () => {
    const server = await startServer(page("pinned"));
    let answers = 0;
    const lookup = async (_host: string): Promise<LookupAddress[]> => {
      answers++;
      // The first answer passes the check; any later one would point at a private address.
      return [{ address: answers === 1 ? "127.0.0.1" : "10.0.0.1", family: 4 }];
    };
    const got = await safeFetch(`http://pinned.example:${server.port}/`, {
      allowHosts: ["127.0.0.1"],
      lookup,
    });
    expect(got.text).toBe("pinned");
    expect(answers).toBe(1);
    expect(server.seen[0]?.host).toBe(`pinned.example:${server.port}`);
  });

  it("keeps the original name for TLS (SNI and certificate) while connecting to the checked address", async () => {
    const server = await startServer(page("secure"), true);
    const dns = fakeDns({ [TEST_HOST]: "127.0.0.1" });
    const url = `https://${TEST_HOST}:${server.port}/`;
    const got = await safeFetch(url, { allowHosts: [TEST_HOST], lookup: dns.lookup, ca: TEST_TLS.cert });
    expect(got.text).toBe("secure");
    expect(server.seen[0]?.host).toBe(`${TEST_HOST}:${server.port}`);
    const untrusted = await refusal(safeFetch(url, { allowHosts: [TEST_HOST], lookup: dns.lookup }));
    expect(untrusted.code).toBe("tls");
  });
});

describe("safeFetch: URL rules", () => {
  it.each([
    ["file:///etc/passwd", "scheme", "only http: and https: URLs are fetched, not file:"],
    ["ftp://example.com/x", "scheme", "not ftp:"],
    ["data:text/plain,hello", "scheme", "not data:"],
    ["not a url", "bad_url", 'not a valid URL: "not a url"'],
  ])("refuses %s (%s)", async (url, code, reason) => {
    const err = await refusal(safeFetch(url, LOCAL));
    expect(err.code).toBe(code);
    expect(err.message).toContain(reason);
  });

  it("refuses credentials in the URL without echoing them, and without connecting", async () => {
    const server = await startServer(page("secret"));
    const err = await refusal(safeFetch(`http://user:hunter2@127.0.0.1:${server.port}/`, LOCAL));
    expect(err.code).toBe("credentials_in_url");
    expect(err.message).toBe(
      `refused http://127.0.0.1:${server.port}/: a URL with credentials (user:password@host) is not fetched`,
    );
    expect(err.message).not.toContain("hunter2");
    expect(server.connections).toBe(0);
  });
});

describe("safeFetch: SSRF guard", () => {
  it("refuses 127.0.0.1 unless allowed, before connecting", async () => {
    const server = await startServer(page("local"));
    const err = await refusal(safeFetch(`${server.origin}/`));
    expect([err.code, err.message]).toEqual([
      "private_address",
      `refused ${server.origin}/: 127.0.0.1 is a loopback address`,
    ]);
    expect(server.connections).toBe(0);
  });

  it("refuses a host resolving to 10.0.0.1, or to 127.0.0.1, with no connection attempted", async () => {
    const server = await startServer(page("local"));
    const dns = fakeDns({ "intranet.example": "10.0.0.1", "sneaky.example": "127.0.0.1" });
    const err = await refusal(safeFetch(`http://intranet.example:${server.port}/`, { lookup: dns.lookup }));
    expect(err.code).toBe("private_address");
    expect(err.message).toContain("intranet.example resolves to 10.0.0.1, a private address");
    const sneaky = await refusal(safeFetch(`http://sneaky.example:${server.port}/`, { lookup: dns.lookup }));
    expect(sneaky.message).toContain("sneaky.example resolves to 127.0.0.1, a loopback address");
    expect(dns.asked).toEqual(["intranet.example", "sneaky.example"]);
    expect(server.connections).toBe(0);
  });

  it("refuses a host when any of its addresses is private", async () => {
    const dns = fakeDns({ "mixed.example": ["93.184.216.34", "10.0.0.1"] });
    const err = await refusal(safeFetch("http://mixed.example/", { lookup: dns.lookup }));
    expect(err.message).toBe(
      "refused http://mixed.example/: mixed.example resolves to 10.0.0.1, a private address",
    );
  });

  it("refuses ::ffff:127.0.0.1 as a literal and as a DNS answer, unless allowed", async () => {
    const server = await startServer(page("mapped"));
    const literal = await refusal(safeFetch(`http://[::ffff:127.0.0.1]:${server.port}/`, LOCAL));
    expect(literal.message).toContain("::ffff:7f00:1 is a loopback address");
    const dns = fakeDns({ "mapped.example": "::ffff:127.0.0.1" });
    const answered = await refusal(
      safeFetch(`http://mapped.example:${server.port}/`, { lookup: dns.lookup }),
    );
    expect(answered.message).toContain("resolves to ::ffff:127.0.0.1, a loopback address");
    expect(server.connections).toBe(0);
    // A name in allowHosts exempts whatever it resolves to.
    const allowed = await safeFetch(`http://mapped.example:${server.port}/`, {
      lookup: dns.lookup,
      allowHosts: ["Mapped.Example."],
    });
    expect(allowed.text).toBe("mapped");
  });

  it("refuses metadata host names without asking DNS", async () => {
    const dns = fakeDns({});
    const err = await refusal(
      safeFetch("http://metadata.google.internal/computeMetadata/v1/", { lookup: dns.lookup }),
    );
    expect(err.message).toContain("metadata.google.internal is a cloud metadata host");
    expect(dns.asked).toEqual([]);
  });

  it("says a name does not resolve", async () => {
    const err = await refusal(safeFetch("http://nowhere.example/", { lookup: fakeDns({}).lookup }));
    expect(err.code).toBe("dns");
  });
});

describe("safeFetch: redirects", () => {
  /** `/hop/N` redirects (relatively) to `/hop/N-1`; `/hop/0` is the page. */
  const chain: Handler = (req, res) => {
    const n = Number(req.url?.split("/")[2]);
    if (n === 0) return page("end of chain")(req, res);
    res.writeHead(302, { location: `/hop/${n - 1}` });
    res.end();
  };

  it("follows 5 redirects and lists them", async () => {
    const server = await startServer(chain);
    const got = await safeFetch(`${server.origin}/hop/5`, LOCAL);
    expect(got.text).toBe("end of chain");
    expect(got.url).toBe(`${server.origin}/hop/0`);
    expect(got.redirects).toEqual([4, 3, 2, 1, 0].map((n) => `${server.origin}/hop/${n}`));
  });

  it("refuses a 6th redirect", async () => {
    const server = await startServer(chain);
    const err = await refusal(safeFetch(`${server.origin}/hop/6`, LOCAL));
    expect(err.code).toBe("too_many_redirects");
    expect(err.message).toBe(`refused ${server.origin}/hop/1: more than 5 redirects (the next to /hop/0)`);
    expect(server.seen).toHaveLength(6);
  });

  it.each([
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is the cloud metadata address"],
    ["http://10.0.0.1/", "10.0.0.1 is a private address"],
    ["http://[::1]/", "::1 is a loopback address"],
    ["file:///etc/passwd", "only http: and https: URLs are fetched, not file:"],
    ["http://admin:pw@example.com/", "a URL with credentials"],
  ])("refuses a redirect to %s even from an allowed host, naming the hop", async (target, reason) => {
    const server = await startServer((req, res) => {
      res.writeHead(req.url === "/start" ? 302 : 301, { location: req.url === "/start" ? "/next" : target });
      res.end();
    });
    const err = await refusal(safeFetch(`${server.origin}/start`, LOCAL));
    const shown = new URL(target);
    shown.username = shown.password = "";
    expect(err.message).toContain(
      `refused redirect 2 to ${shown.href} (from ${server.origin}/next): ${reason}`,
    );
  });

  it("says when a redirect has no Location", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(302);
      res.end();
    });
    const err = await refusal(safeFetch(server.origin, LOCAL));
    expect([err.code, err.message]).toEqual([
      "http_status",
      `${server.origin}/ answered 302 with no Location header`,
    ]);
  });
});
