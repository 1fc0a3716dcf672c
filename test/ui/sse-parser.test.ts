/** The page's SSE parser: frames split anywhere, comments skipped, CRLF, multi-line data. */
import { describe, expect, it } from "vitest";
import { SseParser, readSse } from "../../ui/src/lib/sse-parser.js";

describe("SseParser", () => {
  it("parses event, id and data, and skips comments and frames without data", () => {
    const p = new SseParser();
    const frames = p.push(
      ': ping\n\nevent: overview\ndata: {"a":1}\n\nid: 7\nevent: log\ndata: {"seq":7}\n\nevent: empty\n\n',
    );
    expect(frames).toEqual([
      { event: "overview", data: '{"a":1}' },
      { event: "log", id: "7", data: '{"seq":7}' },
    ]);
  });

  it("keeps a frame cut anywhere until its blank line arrives", () => {
    const text = 'event: session\ndata: {"sessionKey":"k","state":"idle"}\n\n';
    for (let cut = 0; cut <= text.length; cut++) {
      const p = new SseParser();
      const frames = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
      expect(frames, `cut at ${cut}`).toEqual([
        { event: "session", data: '{"sessionKey":"k","state":"idle"}' },
      ]);
    }
  });

  it("takes CRLF and CR line ends, also split between pieces, and joins several data lines", () => {
    const p = new SseParser();
    expect(p.push("data: one\r")).toEqual([]);
    expect(p.push("\ndata: two\r\n\r")).toEqual([]);
    expect(p.push("\nevent:x\rdata:3\r\r\n")).toEqual([
      { event: "message", data: "one\ntwo" },
      { event: "x", data: "3" },
    ]);
  });

  it("keeps a value's own colons and strips only one leading space", () => {
    expect(new SseParser().push("data:  a: b\n\n")).toEqual([{ event: "message", data: " a: b" }]);
  });
});

describe("readSse", () => {
  it("reads a byte stream whose chunks split characters and frames", async () => {
    const bytes = new TextEncoder().encode('event: log\ndata: {"msg":"héllo ✓"}\n\n');
    const chunks = [bytes.slice(0, 5), bytes.slice(5, 27), bytes.slice(27)];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(c);
        controller.close();
      },
    });
    const seen: unknown[] = [];
    await readSse(stream, (f) => seen.push(JSON.parse(f.data)));
    expect(seen).toEqual([{ msg: "héllo ✓" }]);
  });
});
