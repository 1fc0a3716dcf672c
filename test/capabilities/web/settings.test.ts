/**
 * `tools.web` in the configuration: its defaults, and the values refused at load with a message
 * naming the key (a search URL that is not http(s) or carries credentials, a malformed
 * allowHosts entry).
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/load.js";
import { ConfigError } from "../../../src/util/config-error.js";

function problem(raw: Record<string, unknown>): string {
  try {
    parseConfig(raw, undefined);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a config error");
}

describe("tools.web", () => {
  it("fetches by default, with no exempt hosts, no search, 15 s and 20,000 characters", () => {
    expect(parseConfig({}, undefined).tools.web).toEqual({
      fetch: true,
      allowHosts: [],
      timeoutMs: 15_000,
      maxChars: 20_000,
    });
  });

  it("takes a SearXNG URL and host names, IPv4 and IPv6 addresses as exempt hosts", () => {
    const web = parseConfig(
      {
        tools: {
          web: {
            searchUrl: "http://127.0.0.1:8888/searx",
            allowHosts: ["127.0.0.1", "::1", "[fd00::1]", "searx.lan", "localhost"],
          },
        },
      },
      undefined,
    ).tools.web;
    expect(web.searchUrl).toBe("http://127.0.0.1:8888/searx");
    expect(web.allowHosts).toHaveLength(5);
  });

  it("treats an empty searchUrl (YAML null) as unset", () => {
    expect(
      parseConfig({ tools: { web: { searchUrl: null } } }, undefined).tools.web.searchUrl,
    ).toBeUndefined();
  });

  it.each([
    ["ftp://search.example/", "tools.web.searchUrl: is a ftp: URL; expected http: or https:"],
    ["searx.lan:8888", "tools.web.searchUrl: is a searx.lan: URL"],
    ["not a url", "tools.web.searchUrl: is not a URL"],
  ])("refuses searchUrl %s", (searchUrl, message) => {
    expect(problem({ tools: { web: { searchUrl } } })).toContain(message);
  });

  it("refuses a searchUrl with credentials without echoing them", () => {
    const message = problem({ tools: { web: { searchUrl: "https://me:hunter2@search.example/" } } });
    expect(message).toContain("tools.web.searchUrl: has credentials in it (user:password@host)");
    expect(message).not.toContain("hunter2");
  });

  it.each(["http://127.0.0.1", "127.0.0.1:8080", "*.example.com", "host/path", "", "bad_host!"])(
    "refuses the allowHosts entry %j, naming its index",
    (entry) => {
      expect(problem({ tools: { web: { allowHosts: ["localhost", entry] } } })).toContain(
        `tools.web.allowHosts.1: ${JSON.stringify(entry)} is not a host name or an IP address`,
      );
    },
  );

  it("refuses a maxChars out of range and an unknown key", () => {
    expect(problem({ tools: { web: { maxChars: 10 } } })).toContain(
      "tools.web.maxChars: found 10, expected at least 1000 characters",
    );
    expect(problem({ tools: { web: { allowedHosts: [] } } })).toContain(
      "tools.web.allowedHosts: unknown key",
    );
  });
});
