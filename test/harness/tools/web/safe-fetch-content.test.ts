/**
 * What the guarded fetch reads, and for how long: the size cap (a 10 MB and a "10 GB" answer
 * cut at maxBytes with the server's socket closed), text-only content types, charsets, and
 * the one deadline, driven by a ManualClock (nothing waits on the wall clock).
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_MAX_BYTES, safeFetch } from "../../../../src/harness/tools/web/safe-fetch.js";
import { ManualClock } from "../../../../src/util/clock.js";
import { type Handler, LOCAL, closeServers, page, refusal, startServer } from "./web-test-server.js";

afterEach(closeServers);

/** A text answer of `totalBytes` (Infinity: endless) written with backpressure; records when its socket closed. */
function bigAnswer(totalBytes: number, contentLength: number) {
  const state = { written: 0, finished: false, closed: Promise.resolve() };
  let onClosed = () => {};
  state.closed = new Promise<void>((resolve) => {
    onClosed = resolve;
  });
  const handler: Handler = (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain", "content-length": String(contentLength) });
    const chunk = Buffer.alloc(64 * 1024, "a");
    const pump = () => {
      while (!res.destroyed && state.written < totalBytes) {
        state.written += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      if (!res.destroyed) res.end();
    };
    res.on("close", () => {
      state.finished = res.writableFinished;
      onClosed();
    });
    pump();
  };
  return { state, handler };
}

/** Lets pending I/O callbacks and promise continuations run (no wall-clock wait). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("safeFetch: size cap", () => {
  it("cuts a 10 MB answer at 2 MB by default", async () => {
    const big = bigAnswer(10 * 1024 * 1024, 10 * 1024 * 1024);
    const server = await startServer(big.handler);
    const got = await safeFetch(server.origin, LOCAL);
    expect([got.bytes, got.text.length, got.truncated]).toEqual([DEFAULT_MAX_BYTES, DEFAULT_MAX_BYTES, true]);
  });

  it("stops reading an endless answer (Content-Length 10 GB) at maxBytes and closes the socket", async () => {
    const big = bigAnswer(Number.POSITIVE_INFINITY, 10 * 1024 ** 3);
    const server = await startServer(big.handler);
    const got = await safeFetch(server.origin, { ...LOCAL, maxBytes: 100_000 });
    expect([got.bytes, got.text.length, got.truncated]).toEqual([100_000, 100_000, true]);
    // The server only stops writing because the client closed the connection.
    await big.state.closed;
    expect(big.state.finished).toBe(false);
  });

  it("drops a character the cut splits, and does not mark a body of exactly maxBytes", async () => {
    const server = await startServer(page("aaaa€uro", "text/plain"));
    const cut = await safeFetch(server.origin, { ...LOCAL, maxBytes: 5 });
    expect([cut.text, cut.bytes, cut.truncated]).toEqual(["aaaa", 5, true]);
    const whole = await safeFetch(server.origin, { ...LOCAL, maxBytes: 10 });
    expect([whole.text, whole.bytes, whole.truncated]).toEqual(["aaaa€uro", 10, false]);
  });
});

describe("safeFetch: content types", () => {
  it.each([
    ["application/pdf", "a PDF (application/pdf): web_fetch reads text pages"],
    ["image/png", "an image (image/png): web_fetch reads text pages"],
    ["audio/mpeg", "audio (audio/mpeg)"],
    ["video/mp4; codecs=avc1", "a video (video/mp4)"],
    ["application/zip", "an archive (application/zip)"],
    ["application/octet-stream", "binary data (application/octet-stream): web_fetch reads text pages"],
  ])("refuses %s", async (type, reason) => {
    const server = await startServer(page("%PDF-1.7 ...", type));
    const err = await refusal(safeFetch(`${server.origin}/doc`, LOCAL));
    expect(err.code).toBe("unsupported_type");
    expect(err.message).toContain(`refused ${server.origin}/doc: ${reason}`);
  });

  it.each([
    "text/plain",
    "text/markdown",
    "application/json",
    "application/xml",
    "application/xhtml+xml",
    "application/rss+xml",
  ])("reads %s", async (type) => {
    const server = await startServer(page("<x>text</x>", type));
    expect((await safeFetch(server.origin, LOCAL)).text).toBe("<x>text</x>");
  });

  it("sniffs a body without Content-Type: text is read, NUL bytes or a PDF signature refused", async () => {
    const text = await startServer(page("just text", null));
    expect(await safeFetch(text.origin, LOCAL)).toMatchObject({ text: "just text", contentType: undefined });
    const binary = await startServer(page(Buffer.from([0x89, 0x50, 0x00, 0x01]), null));
    expect((await refusal(safeFetch(binary.origin, LOCAL))).message).toContain(
      "NUL bytes in its first bytes",
    );
    const pdf = await startServer(page("%PDF-1.7\n1 0 obj", null));
    expect((await refusal(safeFetch(pdf.origin, LOCAL))).message).toContain("a PDF (no Content-Type");
  });

  it("decodes the declared charset, and UTF-8 when the label is unknown", async () => {
    const cyrillic = await startServer(
      page(Buffer.from([0xcf, 0xf0, 0xe8]), "text/plain; charset=windows-1251"),
    );
    expect((await safeFetch(cyrillic.origin, LOCAL)).text).toBe("При");
    const unknown = await startServer(page("ünï", 'text/plain; charset="no-such-charset"'));
    expect((await safeFetch(unknown.origin, LOCAL)).text).toBe("ünï");
  });

  it("refuses a Content-Encoding it cannot decode", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-encoding": "zstd" });
      res.end("x");
    });
    expect((await refusal(safeFetch(server.origin, LOCAL))).message).toContain(
      "Content-Encoding zstd cannot be decoded",
    );
  });
});

describe("safeFetch: deadline and abort", () => {
  /** A server that takes requests and never answers; `reached` resolves on the first. */
  async function silentServer(answerHeaders: boolean) {
    let arrived = () => {};
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = await startServer((_req, res) => {
      if (answerHeaders) {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("the start of a body that never ends");
      }
      arrived();
    });
    return { server, reached };
  }

  it.each([
    ["no answer", false],
    ["a body that never ends", true],
  ])("gives up after timeoutMs (default 15 s) on %s", async (_name, answerHeaders) => {
    const clock = new ManualClock();
    const { server, reached } = await silentServer(answerHeaders);
    let settled = false;
    const pending = refusal(safeFetch(`${server.origin}/slow`, { ...LOCAL, clock })).finally(() => {
      settled = true;
    });
    await reached;
    await clock.advanceAsync(14_999);
    await turn();
    expect(settled).toBe(false);
    await clock.advanceAsync(1);
    const err = await pending;
    expect([err.code, err.message]).toEqual([
      "timeout",
      `no complete answer from ${server.origin}/slow within 15 s`,
    ]);
  });

  it("counts the time of every hop against one deadline, and names the hop that was slow", async () => {
    const clock = new ManualClock();
    const { server, reached } = await silentServer(false);
    const redirect = await startServer((_req, res) => {
      res.writeHead(302, { location: `${server.origin}/slow` });
      res.end();
    });
    const pending = refusal(safeFetch(redirect.origin, { ...LOCAL, clock, timeoutMs: 1_000 }));
    await reached;
    await clock.advanceAsync(1_000);
    expect((await pending).message).toBe(`no complete answer from ${server.origin}/slow within 1 s`);
  });

  it("stops when the caller's signal aborts, and leaves no timer behind", async () => {
    const clock = new ManualClock();
    const { server, reached } = await silentServer(false);
    const controller = new AbortController();
    const pending = refusal(safeFetch(server.origin, { ...LOCAL, clock, signal: controller.signal }));
    await reached;
    controller.abort();
    expect((await pending).code).toBe("aborted");
    expect(clock.pendingTimers).toBe(0);
    const ok = await startServer(page("fine"));
    await safeFetch(ok.origin, { ...LOCAL, clock });
    expect(clock.pendingTimers).toBe(0);
  });

  it("rejects bad options naming the field", async () => {
    await expect(safeFetch("http://x.example/", { maxBytes: 0 })).rejects.toThrow(
      "safeFetch: maxBytes is 0, expected a positive whole number of bytes",
    );
    await expect(safeFetch("http://x.example/", { maxRedirects: -1 })).rejects.toThrow(/maxRedirects is -1/);
  });
});
