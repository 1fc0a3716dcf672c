/**
 * `switchyard chat` against a fake gateway that records what reaches it: sender names of any
 * script go out as typed (never rewritten), an invalid --sender is refused before any request,
 * an invalid $USER falls back to "console" and says so, the configured token goes along, and a
 * 401 is one plain line.
 */
import { writeFileSync } from "node:fs";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chooseSender } from "../../src/cli/chat.js";
import { TOKEN_REQUIRED } from "../../src/cli/gateway-client.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

const TOKEN = "chat-test-token-0123456789abcdef";

interface Seen {
  method: string;
  path: string;
  authorization: string | undefined;
  body: string;
}

/** Answers like a gateway: readiness, status, and one streamed reply per console message. */
class FakeGateway {
  readonly seen: Seen[] = [];
  /** When set, every /v1 request needs `Authorization: Bearer <token>`. */
  requireToken: string | undefined;
  #server: Server | undefined;

  get url(): string {
    if (!this.#server) throw new Error("FakeGateway: not started");
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((done) => this.#server?.listen(0, "127.0.0.1", done));
  }

  close(): Promise<void> {
    return new Promise((done) => (this.#server ? this.#server.close(() => done()) : done()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = "";
    for await (const chunk of req as AsyncIterable<Buffer>) body += chunk.toString();
    const path = req.url ?? "/";
    this.seen.push({ method: req.method ?? "", path, authorization: req.headers.authorization, body });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (path === "/readyz") return json(200, { ready: true });
    if (this.requireToken && req.headers.authorization !== `Bearer ${this.requireToken}`)
      return json(401, { error: { message: "token required", code: "missing_token" } });
    if (path === "/v1/status") return json(200, { model: "openai/gpt-fake", simulated: false });
    if (path === "/v1/console") {
      const { sender, text } = JSON.parse(body) as { sender: string; text: string };
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`event: done\ndata: ${JSON.stringify({ replies: [{ text: `${sender} said ${text}` }] })}\n\n`);
      return;
    }
    json(404, { error: { message: "no route" } });
  }
}

describe("switchyard chat", () => {
  const gateway = new FakeGateway();
  beforeAll(() => gateway.start());
  afterAll(async () => {
    await gateway.close();
    removeTempDirs();
  });
  beforeEach(() => {
    gateway.seen.length = 0;
    gateway.requireToken = undefined;
  });

  const consoleBodies = () =>
    gateway.seen
      .filter((s) => s.path === "/v1/console")
      .map((s) => {
        // Each message carries a fresh client id (the mailbox names its answer by it).
        const { id, ...body } = JSON.parse(s.body) as { sender: string; id: string };
        expect(id).toMatch(/^[0-9a-f-]{36}$/);
        return body;
      });

  it("sends a sender name of any script as typed", async () => {
    const r = await runCli(["chat", "--url", gateway.url, "--sender", "josé"], { input: "hola\n" });
    expect(r.code).toBe(0);
    expect(r.out).toContain(`Connected to ${gateway.url} as "josé"`);
    expect(r.out).toContain("agent> josé said hola");
    expect(consoleBodies()).toEqual([{ sender: "josé", text: "hola" }]);
  });

  it("refuses an invalid --sender before any request, exit 2", async () => {
    const r = await runCli(["chat", "--url", gateway.url, "--sender", "ann smith"], { input: "hi\n" });
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      'switchyard chat: "--sender" must be 1–128 letters or digits (any script) or . @ + - _ (found "ann smith")\n',
    );
    expect(gateway.seen).toEqual([]);
  });

  it("takes a valid $USER as it is, and falls back to console for an invalid one, saying so", async () => {
    const user = await runCli(["chat", "--url", gateway.url], { input: "hi\n", env: { USER: "Łukasz" } });
    expect(user.out).toContain('as "Łukasz"');
    const odd = await runCli(["chat", "--url", gateway.url], { input: "hi\n", env: { USER: "ann smith" } });
    expect(odd.code).toBe(0);
    expect(odd.err).toContain('note: your user name "ann smith" is not a valid sender name');
    expect(odd.err).toContain('so you chat as "console"; pass --sender NAME');
    expect(consoleBodies().map((b) => b.sender)).toEqual(["Łukasz", "console"]);
  });

  it("sends the token of the config, and says in one line when one is needed", async () => {
    gateway.requireToken = TOKEN;
    const config = join(tempDir(), "switchyard.yaml");
    writeFileSync(config, `gateway:\n  auth:\n    token: ${TOKEN}\n`);
    const ok = await runCli(["chat", "--url", gateway.url, "--config", config, "--sender", "ann"], {
      input: "hi\n",
    });
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("agent> ann said hi");
    for (const s of gateway.seen.filter((s) => s.path.startsWith("/v1/")))
      expect(s.authorization).toBe(`Bearer ${TOKEN}`);
    expect(ok.out + ok.err).not.toContain(TOKEN);

    const refused = await runCli(["chat", "--url", gateway.url, "--sender", "ann"], { input: "hi\n" });
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(`switchyard chat: ${TOKEN_REQUIRED}\n`);
  });
});

describe("chooseSender", () => {
  it("keeps valid names (NFC), refuses an invalid flag, and never rewrites the user name", () => {
    expect(chooseSender("jose\u0301", undefined)).toEqual({ type: "ok", sender: "josé" });
    expect(chooseSender("a/b", "ann")).toMatchObject({ type: "invalid" });
    expect(chooseSender(undefined, "山田")).toEqual({ type: "ok", sender: "山田" });
    expect(chooseSender(undefined, "ann smith")).toMatchObject({ type: "ok", sender: "console" });
    expect(chooseSender(undefined, undefined)).toEqual({ type: "ok", sender: "console" });
  });
});
