/**
 * `web_fetch` and `web_search` end to end: the real gateway over the HTTP channel (and Telegram
 * for a group chat), the real provider SDK, the model simulator scripting the calls, local pages
 * on 127.0.0.1 (listed in tools.web.allowHosts) and the fake SearXNG. What the model sees is read
 * from the requests the simulator received.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { FakeSearxng } from "../fakes/searxng.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { closeServers, page, startServer } from "../harness/tools/web/web-test-server.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

const ARTICLE = `<!doctype html><html><head><title>Heron notes</title>
<script>window.SECRET_SCRIPT = 1</script><style>body{color:red}</style></head><body>
<nav><a href="/">NAV-HOME</a> <a href="/about">NAV-ABOUT</a></nav>
<main><article><h2>Waiting</h2>
${"<p>The heron stood in the shallows for an hour, and when it struck the water closed again as if nothing had happened.</p>".repeat(6)}
<p>More in <a href="/herons/feeding">the feeding notes</a>.</p>
</article></main><footer>FOOTER-COPYRIGHT</footer></body></html>`;

/** The last message of the newest request: the tool result the model was shown. */
function lastMessage(sim: ModelSimulator): string {
  const body = sim.requests.at(-1)?.body as { messages?: unknown[] } | undefined;
  return JSON.stringify(body?.messages?.at(-1) ?? null);
}

function toolNames(sim: ModelSimulator, index: number): string[] {
  const body = sim.requests[index]?.body as { tools?: Array<{ name: string }> } | undefined;
  return (body?.tools ?? []).map((t) => t.name);
}

describe("web tools over the HTTP channel", () => {
  let sim: ModelSimulator;
  let searx: FakeSearxng;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = new ModelSimulator();
    await sim.start();
    searx = new FakeSearxng({
      results: (q) => [
        { title: `Herons — ${q}`, url: "https://example.org/herons", content: "How herons hunt." },
        { title: "Grey heron", url: "https://example.org/grey", content: "Ardea cinerea." },
      ],
    });
    await searx.start();
    gw = await startTestGateway({
      ...simulatorConfig(sim, "anthropic"),
      tools: { web: { allowHosts: ["127.0.0.1"], searchUrl: searx.url } },
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await searx?.close();
    await sim?.close();
  });
  afterEach(async () => {
    sim.clearScript();
    await closeServers();
  });

  it("web_fetch of a local page shows the model its main text as Markdown inside the untrusted block", async () => {
    const server = await startServer(page(ARTICLE));
    const url = `${server.origin}/herons`;
    const before = sim.requests.length;
    sim.script({ toolCalls: [{ name: "web_fetch", args: { url } }] }, { text: "read it" });
    const r = await gw.chat("reader", "read the heron page");
    expect(r.body.replies?.[0]?.text).toBe("read it");
    expect(toolNames(sim, before)).toEqual(expect.arrayContaining(["web_fetch", "web_search"]));
    const shown = JSON.parse(lastMessage(sim)) as unknown;
    const text = JSON.stringify(shown);
    expect(text).toContain(`${url} · status 200 · text/html`);
    expect(text).toContain(`<<<untrusted source=\\"web_fetch ${url}\\">>>`);
    expect(text).toContain("# Heron notes\\n\\n## Waiting\\n\\nThe heron stood in the shallows");
    expect(text).toContain(`[the feeding notes](${server.origin}/herons/feeding)`);
    expect(text).toContain("<<<end untrusted>>>");
    for (const unwanted of ["NAV-HOME", "FOOTER-COPYRIGHT", "SECRET_SCRIPT", "color:red"])
      expect(text).not.toContain(unwanted);
  });

  it("refuses a redirect from the allowed local host to a private address, with the reason", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(302, { location: "http://10.0.0.1/admin" });
      res.end();
    });
    sim.script({ toolCalls: [{ name: "web_fetch", args: { url: `${server.origin}/go` } }] }, { text: "no" });
    await gw.chat("reader", "follow the link");
    expect(lastMessage(sim)).toContain(
      `error (denied): refused redirect 1 to http://10.0.0.1/admin (from ${server.origin}/go): 10.0.0.1 is a private address`,
    );
    expect(lastMessage(sim)).toContain('"is_error":true');
  });

  it("web_search asks the SearXNG fake and shows numbered results in an untrusted block", async () => {
    sim.script({ toolCalls: [{ name: "web_search", args: { query: "heron hunting" } }] }, { text: "found" });
    await gw.chat("reader", "search herons");
    expect(searx.queries.at(-1)).toEqual({ q: "heron hunting", format: "json", path: "/search" });
    const shown = lastMessage(sim);
    expect(shown).toContain('web_search \\"heron hunting\\": 2 results');
    expect(shown).toContain('<<<untrusted source=\\"web_search heron hunting\\">>>');
    expect(shown).toContain("1. Herons — heron hunting — https://example.org/herons — How herons hunt.");
    expect(shown).toContain("2. Grey heron — https://example.org/grey — Ardea cinerea.");
  });
});

describe("web tools in a group chat", () => {
  const TOKEN = "123456:AAtest-token-for-the-fake-bot-api-000";
  const BOT = { token: TOKEN, id: 123456, username: "switchyard_bot", firstName: "Switchyard" };
  const ANN = { id: 42, first_name: "Ann" };
  const GROUP = { id: -1001, type: "supergroup" as const, title: "Team" };
  let sim: ModelSimulator | undefined;
  let tg: FakeTelegramBotApi | undefined;
  let gw: TestGateway | undefined;
  afterAll(async () => {
    await gw?.stop();
    await tg?.close();
    await sim?.close();
  });

  it("is not offered web_fetch under tools.groups.deny: [group:web], while a direct chat is", async () => {
    sim = new ModelSimulator();
    await sim.start();
    tg = new FakeTelegramBotApi();
    await tg.start();
    tg.addBot(BOT);
    gw = await startTestGateway({
      ...simulatorConfig(sim, "anthropic"),
      channels: { telegram: { token: TOKEN, apiRoot: tg.apiRoot, allowFrom: [ANN.id], groups: [GROUP.id] } },
      tools: { groups: { deny: ["group:web"] } },
    });
    const fake = tg;
    sim.script({ text: "In the group." });
    fake.pushMessage(TOKEN, { chat: GROUP, from: ANN, text: "@switchyard_bot read example.org" });
    await until(() => fake.sentMessages({ chatId: GROUP.id }).length >= 1, "the group reply");
    expect(toolNames(sim, 0)).not.toContain("web_fetch");
    expect(toolNames(sim, 0)).toContain("read_file");

    sim.script({ text: "In private." });
    fake.pushMessage(TOKEN, { chat: { id: ANN.id, type: "private" }, from: ANN, text: "read example.org" });
    await until(() => fake.sentMessages({ chatId: ANN.id }).length >= 1, "the direct reply");
    expect(toolNames(sim, 1)).toContain("web_fetch");
  });
});
