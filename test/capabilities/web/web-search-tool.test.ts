/**
 * The `web_search` tool against the fake SearXNG: the query goes to `/search?q=…&format=json`,
 * results come back numbered (title — URL — snippet) inside an untrusted block; a local instance
 * not in allowHosts is refused by the SSRF guard; a 403 (JSON not enabled), an answer that is
 * not JSON and an unreachable instance each fail with one line.
 */
import { afterEach, describe, expect, it } from "vitest";
import { searchEndpoint, webSearchTool } from "../../../src/capabilities/web/web-search-tool.js";
import { ToolError } from "../../../src/harness/tools/tool-error.js";
import type { ToolContext } from "../../../src/harness/tools/types.js";
import { FakeSearxng } from "../../fakes/searxng.js";
import { closeServers, page, startServer } from "../../harness/tools/web/web-test-server.js";

const ctx: ToolContext = {
  workspaceDir: "/tmp",
  sessionKey: "s",
  runId: "r",
  signal: new AbortController().signal,
};

const fakes: FakeSearxng[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
  await closeServers();
});

async function searx(options: ConstructorParameters<typeof FakeSearxng>[0] = {}): Promise<FakeSearxng> {
  const fake = new FakeSearxng(options);
  await fake.start();
  fakes.push(fake);
  return fake;
}

const RESULTS = (q: string) =>
  Array.from({ length: 8 }, (_, i) => ({
    title: `Result ${i + 1} for ${q}`,
    url: `https://example.org/${i + 1}`,
    content: i === 1 ? "" : `Snippet ${i + 1},\n  on two lines.`,
  }));

async function refused(promise: Promise<unknown>): Promise<ToolError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

describe("web_search", () => {
  it("asks SearXNG's JSON API and lists title — url — snippet, numbered, inside an untrusted block", async () => {
    const fake = await searx({ results: RESULTS });
    const tool = webSearchTool({ searchUrl: fake.url, allowHosts: ["127.0.0.1"] });
    const out = await tool.run({ query: "heron habits", count: 3 }, ctx);
    expect(fake.queries).toEqual([{ q: "heron habits", format: "json", path: "/search" }]);
    expect(out.content).toBe(
      [
        'web_search "heron habits": 3 results',
        '<<<untrusted source="web_search heron habits">>>',
        "1. Result 1 for heron habits — https://example.org/1 — Snippet 1, on two lines.",
        "2. Result 2 for heron habits — https://example.org/2",
        "3. Result 3 for heron habits — https://example.org/3 — Snippet 3, on two lines.",
        "<<<end untrusted>>>",
      ].join("\n"),
    );
  });

  it("lists 5 results by default, and says when there are none", async () => {
    const fake = await searx({ results: (q) => (q === "nothing" ? [] : RESULTS(q)) });
    const tool = webSearchTool({ searchUrl: fake.url, allowHosts: ["127.0.0.1"] });
    expect((await tool.run({ query: "x" }, ctx)).content).toContain("\n5. Result 5 for x");
    expect((await tool.run({ query: "x" }, ctx)).content).not.toContain("\n6. ");
    expect((await tool.run({ query: "nothing" }, ctx)).content).toBe('web_search "nothing": no results');
  });

  it("is refused by the SSRF guard when the local instance is not in allowHosts", async () => {
    const fake = await searx({ results: RESULTS });
    const err = await refused(webSearchTool({ searchUrl: fake.url }).run({ query: "x" }, ctx));
    expect(err.code).toBe("denied");
    expect(err.message).toContain("127.0.0.1 is a loopback address");
    expect(fake.queries).toEqual([]);
  });

  it("says how to enable the JSON format when SearXNG answers 403", async () => {
    const fake = await searx({ jsonEnabled: false });
    const err = await refused(
      webSearchTool({ searchUrl: fake.url, allowHosts: ["127.0.0.1"] }).run({ query: "x" }, ctx),
    );
    expect(err.message).toBe(
      `the search service at ${new URL(fake.url).host} refused the JSON format (403): enable it in SearXNG's settings.yml (search.formats: [html, json])`,
    );
  });

  it("fails with one line when the answer is not SearXNG's JSON", async () => {
    const html = await startServer(page("<h1>Welcome</h1>"));
    const tool = webSearchTool({ searchUrl: html.origin, allowHosts: ["127.0.0.1"] });
    expect((await refused(tool.run({ query: "x" }, ctx))).message).toBe(
      `the search service at 127.0.0.1:${html.port} did not answer JSON (is searchUrl a SearXNG instance?)`,
    );
    const other = await startServer(page('{"items":[]}', "application/json"));
    const tool2 = webSearchTool({ searchUrl: other.origin, allowHosts: ["127.0.0.1"] });
    expect((await refused(tool2.run({ query: "x" }, ctx))).message).toContain(
      "answered JSON without a results list",
    );
  });

  it("keeps a path prefix of the base URL", () => {
    expect(searchEndpoint("http://h:8/searx", "a b&c")).toBe("http://h:8/searx/search?q=a+b%26c&format=json");
    expect(searchEndpoint("http://h:8/", "q")).toBe("http://h:8/search?q=q&format=json");
  });
});
