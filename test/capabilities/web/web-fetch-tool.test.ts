/**
 * The `web_fetch` tool against local servers: the result's first line and untrusted block,
 * HTML as Markdown and other text as it came, and every bad input refused with its reason — a
 * URL with credentials, a file: URL, a redirect to the metadata address, more than 5
 * redirects, a PDF — and an endless answer cut at 2 MB while streaming.
 */
import { afterEach, describe, expect, it } from "vitest";
import { webFetchTool } from "../../../src/capabilities/web/web-fetch-tool.js";
import { ToolError } from "../../../src/harness/tools/tool-error.js";
import type { ToolContext } from "../../../src/harness/tools/types.js";
import { closeServers, page, startServer } from "../../harness/tools/web/web-test-server.js";

afterEach(closeServers);

const ctx: ToolContext = {
  workspaceDir: "/tmp",
  sessionKey: "s",
  runId: "r",
  signal: new AbortController().signal,
};

const ARTICLE = `<html><head><title>Field notes</title></head><body>
<nav><a href="/">NAV-HOME</a></nav>
<article><h2>Observations</h2>${"<p>The heron waited by the reeds for an hour before it struck, and the water closed again as if nothing had happened there at all.</p>".repeat(6)}</article>
<footer>FOOTER-TEXT</footer></body></html>`;

const tool = (options: Parameters<typeof webFetchTool>[0] = {}) =>
  webFetchTool({ allowHosts: ["127.0.0.1"], ...options });

/** The ToolError a call rejects with. */
async function refused(promise: Promise<unknown>): Promise<ToolError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

describe("web_fetch", () => {
  it("returns the main text as Markdown inside an untrusted block, after a line about the page", async () => {
    const server = await startServer(page(ARTICLE));
    const out = await tool().run({ url: `${server.origin}/notes` }, ctx);
    const [first, ...rest] = out.content.split("\n");
    expect(first).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/notes · status 200 · text\/html · \d+ B · not cut$/);
    expect(rest[0]).toBe(`<<<untrusted source="web_fetch ${server.origin}/notes">>>`);
    expect(rest.at(-1)).toBe("<<<end untrusted>>>");
    const body = rest.join("\n");
    expect(body).toContain("# Field notes\n\n## Observations\n\nThe heron waited");
    expect(body).not.toContain("NAV-HOME");
    expect(body).not.toContain("FOOTER-TEXT");
    expect(out.isError).toBe(false);
  });

  it("passes JSON and plain text through, cut at maxChars and saying so", async () => {
    const json = await startServer(page('{"ok":true}', "application/json"));
    expect((await tool().run({ url: json.origin }, ctx)).content).toContain(
      '>>>\n{"ok":true}\n<<<end untrusted>>>',
    );
    const text = await startServer(page("x".repeat(5_000), "text/plain"));
    const out = await tool().run({ url: text.origin, maxChars: 1_000 }, ctx);
    expect(out.content.split("\n")[0]).toContain(
      "cut: text cut at 1000 characters (ask for more with maxChars, up to 100000)",
    );
    expect(out.content).toContain(`>>>\n${"x".repeat(1_000)}\n<<<end`);
  });

  it("shows a 404 page with its status, as an error", async () => {
    const server = await startServer(page("<p>No such page</p>", "text/html", 404));
    const out = await tool().run({ url: `${server.origin}/gone` }, ctx);
    expect(out.content.split("\n")[0]).toContain("status 404");
    expect(out.content).toContain("No such page");
    expect(out.isError).toBe(true);
  });

  it("refuses a URL with credentials, without connecting or echoing them", async () => {
    const server = await startServer(page(ARTICLE));
    const err = await refused(tool().run({ url: `http://ann:hunter2@127.0.0.1:${server.port}/` }, ctx));
    expect([err.code, err.message]).toEqual([
      "invalid_arguments",
      `refused http://127.0.0.1:${server.port}/: a URL with credentials (user:password@host) is not fetched`,
    ]);
    expect(server.connections).toBe(0);
  });

  it("refuses a file: URL", async () => {
    const err = await refused(tool().run({ url: "file:///etc/passwd" }, ctx));
    expect(err.message).toBe("refused file:///etc/passwd: only http: and https: URLs are fetched, not file:");
  });

  it("refuses a loopback page whose host is not in allowHosts", async () => {
    const server = await startServer(page(ARTICLE));
    const err = await refused(webFetchTool().run({ url: server.origin }, ctx));
    expect([err.code, err.message]).toEqual([
      "denied",
      `refused ${server.origin}/: 127.0.0.1 is a loopback address`,
    ]);
  });

  it("refuses a redirect to 169.254.169.254 from an allowed host, naming the hop", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
      res.end();
    });
    const err = await refused(tool().run({ url: `${server.origin}/start` }, ctx));
    expect(err.message).toBe(
      `refused redirect 1 to http://169.254.169.254/latest/meta-data/ (from ${server.origin}/start): 169.254.169.254 is the cloud metadata address`,
    );
  });

  it("follows 5 redirects and refuses a 6th", async () => {
    const server = await startServer((req, res) => {
      const n = Number(req.url?.split("/")[2]);
      if (n === 0) return page(ARTICLE)(req, res);
      res.writeHead(301, { location: `/hop/${n - 1}` });
      res.end();
    });
    const five = await tool().run({ url: `${server.origin}/hop/5` }, ctx);
    expect(five.content.split("\n")[0]).toContain(
      `${server.origin}/hop/0 · status 200 · text/html · 975 B · after 5 redirects · not cut`,
    );
    const err = await refused(tool().run({ url: `${server.origin}/hop/6` }, ctx));
    expect(err.message).toBe(`refused ${server.origin}/hop/1: more than 5 redirects (the next to /hop/0)`);
  });

  it("refuses a PDF before reading it", async () => {
    const server = await startServer(page("%PDF-1.7 ...", "application/pdf"));
    const err = await refused(tool().run({ url: `${server.origin}/report.pdf` }, ctx));
    expect(err.message).toBe(
      `refused ${server.origin}/report.pdf: a PDF (application/pdf): web_fetch reads text pages`,
    );
  });

  it("reads an endless answer (Content-Length 10 GB) to 2 MB, closes it and says it was cut", async () => {
    let written = 0;
    let closedEarly = false;
    let onClosed = () => {};
    const closed = new Promise<void>((resolve) => {
      onClosed = resolve;
    });
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-length": String(10 * 1024 ** 3) });
      const chunk = Buffer.alloc(64 * 1024, "a");
      const pump = () => {
        while (!res.destroyed && written < 10 * 1024 ** 3) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
      };
      res.on("close", () => {
        closedEarly = !res.writableFinished;
        onClosed();
      });
      pump();
    });
    const out = await tool().run({ url: server.origin, maxChars: 1_000 }, ctx);
    expect(out.content.split("\n")[0]).toBe(
      `${server.origin}/ · status 200 · text/plain · 2 MB · cut: the page is over 2 MB, only its start was read; text cut at 1000 characters (ask for more with maxChars, up to 100000)`,
    );
    // The server stopped because the client closed the connection, well short of 10 GB.
    expect(written).toBeLessThan(64 * 1024 * 1024);
    await closed;
    expect(closedEarly).toBe(true);
  });
});
