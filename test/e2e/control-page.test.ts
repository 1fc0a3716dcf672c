/**
 * The control page in a real browser (Debian's Chromium through playwright-core) against a real
 * gateway behind a token, on the model simulator and the fake Telegram Bot API: the 401 path and
 * the login form, the fragment token, a session appearing live, its transcript, a pairing
 * approved and the sender answered, a cron job run now and its ledger row, an assignment's
 * question answered and the run it resumes, a cooling profile reset. Each view is photographed
 * at 1280 and 360 px wide into SCREENSHOT_DIR (default .switchyard-test/screenshots; the
 * README's come from `SCREENSHOT_DIR=docs/screenshots`).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildIfStale } from "../../bin/build-if-stale.js";
import { buildJob } from "../../src/cron/jobs.js";
import { ProviderError } from "../../src/harness/providers/provider-error.js";
import { askingAssignment } from "../helpers/assignment-fixture.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { launchBrowser } from "../helpers/browser.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

const TOKEN = "page-test-token-0123456789";
const BOT_TOKEN = "123456:AAtest-token-for-the-fake-bot-api-000";
const BOT = { token: BOT_TOKEN, id: 123456, username: "switchyard_bot", firstName: "Switchyard" };
const SHOTS = process.env.SCREENSHOT_DIR ?? join(".switchyard-test", "screenshots");
const ROOT = join(import.meta.dirname, "..", "..");

let sim: ModelSimulator;
let tg: FakeTelegramBotApi;
let gw: TestGateway;
let browser: Browser;

beforeAll(async () => {
  // The page is what `npm run build` writes to dist/ui.
  if (!buildIfStale()) throw new Error("npm run build failed: the control page cannot be tested");
  mkdirSync(SHOTS, { recursive: true });
  sim = new ModelSimulator();
  await sim.start();
  tg = new FakeTelegramBotApi();
  await tg.start();
  tg.addBot(BOT);
  gw = await startTestGateway(
    {
      ...simulatorConfig(sim, "openai"),
      gateway: { auth: { token: TOKEN } },
      channels: { telegram: { token: BOT_TOKEN, apiRoot: tg.apiRoot } },
      heartbeat: { everyMs: 0 },
    },
    { uiDir: join(ROOT, "dist", "ui") },
  );
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await tg?.close();
  await sim?.close();
});

/** A page signed in through the fragment, at `width` px. */
async function signedIn(width = 1280, route = "#/overview"): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  await page.goto(`${gw.url}/ui/#token=${TOKEN}`);
  await page.locator('[data-view="overview"]').waitFor();
  if (route !== "#/overview") await page.evaluate(`location.hash = ${JSON.stringify(route)}`);
  return page;
}

/** Both widths of one view. */
async function photograph(route: string, name: string, ready: string): Promise<void> {
  for (const width of [1280, 360]) {
    const page = await signedIn(width, route);
    await page.locator(ready).first().waitFor();
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
    await page.close();
  }
}

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
}

// A browser on a machine running the rest of the suite: generous limits, the waits are all for events.
describe("the control page", { timeout: 120_000 }, () => {
  it("without a token shows only the login form; a wrong token is refused; the right one signs in", async () => {
    const page = await browser.newPage();
    await page.goto(`${gw.url}/ui/`);
    const token = page.getByLabel("Token");
    await token.waitFor();
    expect(await page.locator('[data-view]:not([data-view="login"])').count()).toBe(0);
    await token.fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("That token was refused").waitFor();
    expect(await page.locator('[data-view="overview"]').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, "login-1280.png") });
    await token.fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator('[data-view="overview"]').waitFor();
    await page.close();
  });

  it("takes the token from the fragment and removes it from the address bar", async () => {
    const page = await signedIn();
    expect(page.url()).not.toContain(TOKEN);
    expect(await page.evaluate('sessionStorage.getItem("switchyard.token")')).toBe(TOKEN);
    await page.getByText("openai/gpt-test").first().waitFor();
    await page.close();
    await photograph("#/overview", "overview", '[data-view="overview"]');
  });

  it("shows a session live when a message arrives over /v1/chat, and its transcript", async () => {
    const page = await signedIn(1280, "#/sessions");
    await page.locator('[data-view="sessions"]').waitFor();
    sim.script(
      { toolCalls: [{ name: "list_files", args: { path: "." } }] },
      { text: "Your workspace has notes." },
    );
    const res = await post("/v1/chat", { sender: "ann", text: "what is in my workspace?" });
    const { sessionKey } = (await res.json()) as { sessionKey: string };
    const row = page.locator(`[data-row="${sessionKey}"]`);
    await row.waitFor(); // pushed by the stream: no reload
    await row.getByRole("link").first().click();
    await page.getByText("what is in my workspace?").waitFor();
    await page.getByText("Your workspace has notes.").waitFor();
    await page.getByText("list_files").first().waitFor();
    await page.close();
    await photograph("#/sessions", "sessions", `[data-row="${sessionKey}"]`);
    await photograph(
      `#/sessions/${encodeURIComponent(sessionKey)}`,
      "transcript",
      "text=Your workspace has notes.",
    );
  });

  it("approves a pairing request, and the sender is answered", async () => {
    tg.pushMessage(BOT_TOKEN, {
      chat: { id: 77, type: "private" },
      from: { id: 77, first_name: "Bob" },
      text: "hello",
    });
    await until(() => tg.sentMessages({ chatId: 77 }).length === 1, "the pairing code");
    const page = await signedIn(1280, "#/access");
    const row = page.locator('[data-view="access"] [data-row]', { hasText: "Bob" });
    await row.waitFor();
    await photograph("#/access", "access", '[data-view="access"] [data-row]');
    await row.getByRole("button", { name: "Approve" }).click();
    await until(async () => gw.running.store.pairing.isApproved("telegram", "77"), "Bob approved");
    await page.getByText("Bob").first().waitFor();
    sim.script({ text: "Hello Bob, nice to meet you." });
    tg.pushMessage(BOT_TOKEN, {
      chat: { id: 77, type: "private" },
      from: { id: 77, first_name: "Bob" },
      text: "hello again",
    });
    await until(() => tg.sentMessages({ chatId: 77 }).length === 2, "Bob's answer");
    expect(tg.sentMessages({ chatId: 77 })[1]?.text).toBe("Hello Bob, nice to meet you.");
    await page.close();
  });

  it("runs a cron job now and shows its ledger row", async () => {
    const now = Date.now();
    const { spec, nextRunAt } = buildJob(
      { name: "digest", every: "6h", message: "Write the digest", deliver: "none" },
      { agentId: "main", source: "cli", now, defaultTz: "UTC", channels: new Set() },
    );
    const job = await gw.running.store.cron.add(spec, nextRunAt, now);
    sim.script({ text: "Digest written." });
    const page = await signedIn(1280, "#/scheduled");
    const row = page.locator(`[data-view="scheduled"] [data-row="${job.id}"]`);
    await row.waitFor();
    await row.getByRole("button", { name: "Run now" }).click();
    await until(async () => (await gw.running.store.cron.history(job.id, 1))[0]?.state === "ok", "the run");
    await row.getByRole("button", { name: "Runs" }).click();
    await page.locator(`[data-ledger="${job.id}"] [data-row]`, { hasText: "ok" }).first().waitFor();
    await page.close();
    await photograph("#/scheduled", "scheduled", `[data-row="${job.id}"]`);
  });

  it("answers an assignment's question and shows it resume", async () => {
    const store = gw.running.store;
    const now = Date.now();
    const a = askingAssignment("Which colour?", ["red", "blue"], now);
    await store.assignments.create(a);
    sim.setDefault(() => ({ text: "Painted it blue." }));
    const page = await signedIn(1280, `#/assignments/${a.id}`);
    await page.getByText("Which colour?").first().waitFor();
    await photograph(`#/assignments/${a.id}`, "assignment", "text=Which colour?");
    await page.getByLabel("Your answer").fill("blue");
    await page.getByRole("button", { name: "Answer" }).click();
    await page.getByText("Answered; the assignment resumes.").waitFor();
    await until(async () => (await store.assignments.runs(a.id, 1)).length === 1, "the resumed run");
    // Resumed: the box is gone, and the run it started is listed.
    await page.getByLabel("Your answer").waitFor({ state: "detached" });
    await page.locator('[data-view="assignment"] [data-row]', { hasText: "1" }).first().waitFor();
    await page.close();
  });

  it("resets a cooling auth profile", async () => {
    gw.running.models.authProfiles.failed(
      "openai",
      "default",
      new ProviderError("rate_limit", "429 Too Many Requests", { retryAfterMs: 600_000 }),
    );
    const page = await signedIn(1280, "#/models");
    const row = page.locator('[data-view="models"] [data-row="openai/default"]');
    await row.getByText("cooling").waitFor();
    await photograph("#/models", "models", '[data-row="openai/default"]');
    await row.getByRole("button", { name: "Reset" }).click();
    await row.getByText("cooling").waitFor({ state: "detached" });
    expect(gw.running.models.authProfiles.coolingUntil("openai", "default")).toBe(0);
    await page.close();
  });

  it("shows its own not-found view, the logs and the chat", async () => {
    const page = await signedIn(1280, "#/no-such-view");
    await page.locator('[data-view="not-found"]').waitFor();
    await page.close();
    await photograph("#/logs", "logs", '[data-view="logs"]');
    await photograph("#/chat", "chat", '[data-view="chat"]');
  });
});
