/**
 * `switchyard doctor` against local fakes only: every configured provider is probed (the model
 * simulator, a server that rejects keys, a closed port) and every Telegram bot token is tried
 * with getMe on the fake Bot API; HTTP and console say where they listen. No token is printed.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { TOKEN_REQUIRED } from "../../src/cli/gateway-client.js";
import { spawnGateway } from "../helpers/gateway-process.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";

const GOOD_TOKEN = "123456789:AAHk3jD9fLq2mN7pR4sT8vW1xY5zA0bC3dE";
const REVOKED_TOKEN = "987654321:AAZz9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gFe";
const OTHER_TOKEN = "555555555:AAQq1wE2rT3yU4iO5pA6sD7fG8hJ9kL0zXc";

/** Answers every request 401, as an API does for a revoked key. */
async function rejectingServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(401, { "content-type": "application/json" });
    res.end('{"error":{"type":"authentication_error","message":"invalid x-api-key"}}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe("switchyard doctor", () => {
  const sim = new ModelSimulator();
  const telegram = new FakeTelegramBotApi();
  let rejecting: Awaited<ReturnType<typeof rejectingServer>>;
  let deadPort: number;
  afterAll(async () => {
    await sim.close();
    await telegram.close();
    await rejecting.close();
    removeTempDirs();
  });
  beforeAll(async () => {
    await sim.start();
    await telegram.start();
    telegram.addBot({ token: GOOD_TOKEN, id: 123456789, username: "switchyard_test_bot" });
    rejecting = await rejectingServer();
    deadPort = await closedPort();
  });

  function doctor(yaml: string, env: NodeJS.ProcessEnv = {}) {
    const dir = tempDir();
    writeFileSync(join(dir, "switchyard.yaml"), yaml);
    mkdirSync(join(dir, "home"));
    return runCli(["doctor", "--home", join(dir, "home")], { cwd: dir, env });
  }

  it("only looks: a missing home is a failure, and nothing is created", async () => {
    const dir = tempDir();
    const home = join(dir, "home");
    const r = await runCli(["doctor", "--home", home, "--port", String(deadPort)], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `FAIL  home       ${home} does not exist (the gateway creates it on its first start`,
    );
    expect(r.out).not.toMatch(/database/);
    expect(existsSync(home)).toBe(false);
    mkdirSync(home);
    const empty = await runCli(["doctor", "--home", home, "--port", String(deadPort)], { cwd: dir });
    expect(empty.code).toBe(0);
    expect(empty.out).toContain(`warn  database   no database at ${join(home, "switchyard.db")} yet`);
    expect(readdirSync(home)).toEqual([]);
  });

  it("refuses a --url that is not http or https, in one line", async () => {
    const r = await runCli(["doctor", "--url", "ftp://x"]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err.split("\n")[0]).toBe(
      'switchyard: --url: found "ftp://x", expected an http:// or https:// URL of the gateway',
    );
  });

  it("probes every configured provider and says which one agent.model uses", async () => {
    const seen = sim.requests.length;
    const r = await doctor(
      [
        "gateway:",
        `  port: ${deadPort}`,
        "agent:",
        "  model: openai/gpt-test",
        "providers:",
        "  openai:",
        `    baseUrl: ${sim.url}/v1`,
        "  anthropic:",
        "    apiKey: sk-ant-api03-doctor-test-key-0123456789",
        `    baseUrl: ${sim.url}`,
        "",
      ].join("\n"),
      { OPENAI_API_KEY: "sk-proj-doctor-env-key-0123456789abcdef" },
    );
    expect(r.out).toMatch(
      /provider\s+openai:default \(used by openai\/gpt-test; key from OPENAI_API_KEY\): .*\/v1 answers/,
    );
    expect(r.out).toMatch(
      /provider\s+anthropic:default \(configured, not in the model chain; key from providers\.anthropic\.apiKey\): /,
    );
    expect(r.out).not.toContain("SIMULATED");
    // Both listings reached the simulator with the configured credentials.
    const probes = sim.requests.slice(seen).filter((q) => q.method === "GET");
    expect(probes.map((q) => q.path).sort()).toEqual(["/v1/models", "/v1/models"]);
    expect(
      probes.some((q) => q.headers.authorization === "Bearer sk-proj-doctor-env-key-0123456789abcdef"),
    ).toBe(true);
    expect(probes.some((q) => q.headers["x-api-key"] === "sk-ant-api03-doctor-test-key-0123456789")).toBe(
      true,
    );
    expect(r.out + r.err).not.toContain("doctor-env-key-0123456789abcdef");
    expect(r.out + r.err).not.toContain("doctor-test-key-0123456789");
  });

  it("fails on a rejected key and on an unreachable provider, in plain words", async () => {
    const r = await doctor(
      [
        "agent:",
        "  model: anthropic/claude-test",
        "providers:",
        "  anthropic:",
        "    apiKey: sk-ant-api03-revoked-key-0123456789",
        `    baseUrl: ${rejecting.url}`,
        "  openai:",
        "    apiKey: sk-proj-unreachable-0123456789abcdef",
        `    baseUrl: http://127.0.0.1:${deadPort}/v1`,
        "",
      ].join("\n"),
    );
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /FAIL\s+provider\s+anthropic:default \(used by anthropic\/claude-test; .*\): .* rejected the API key \(HTTP 401\)/,
    );
    expect(r.out).toMatch(
      /warn\s+provider\s+openai:default \(configured, not in the model chain.*\): cannot reach .*ECONNREFUSED/,
    );
    expect(r.out).not.toContain("revoked-key-0123456789");
  });

  it("warns that replies are simulated when agent.model's provider has no key", async () => {
    const r = await doctor(`gateway:\n  port: ${deadPort}\n`);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /warn\s+provider\s+no API key for anthropic: replies will be SIMULATED \(agent\.model is anthropic\/claude-sonnet-5-5; set ANTHROPIC_API_KEY/,
    );
    expect(r.out).toMatch(/ok\s+channels\s+http, console\n/);
    expect(r.out).toContain(`ok    http       listens at http://127.0.0.1:${deadPort}/v1/chat`);
    expect(r.out).toContain(`ok    console    listens at http://127.0.0.1:${deadPort}/v1/console`);
  });

  it("says whether exec is on and which sandbox its commands run in, and why", async () => {
    const off = await doctor(`gateway:\n  port: ${deadPort}\n`);
    expect(off.out).toContain("ok    exec       off (tools.exec.enabled: false)");
    const on = await doctor(`gateway:\n  port: ${deadPort}\ntools:\n  exec:\n    enabled: true\n`);
    expect(on.out).toMatch(
      /ok {4}exec {7}on; sandbox: bwrap \(\/\S+\/bwrap works \(tools\.exec\.sandbox is auto\): system read-only, workspace writable, own \/tmp\), no network\n/,
    );
    const none = await doctor(`tools:\n  exec:\n    enabled: true\n    sandbox: none\n    network: true\n`);
    expect(none.out).toContain(
      "ok    exec       on; sandbox: none (tools.exec.sandbox is none: commands run unsandboxed)",
    );
  });

  it("warns when auto finds no bwrap and fails when bwrap is required but missing", async () => {
    const noBwrap = { PATH: tempDir() };
    const auto = await doctor(`tools:\n  exec:\n    enabled: true\n`, noBwrap);
    expect(auto.out).toContain(
      "warn  exec       on; sandbox: none (bwrap is not installed (install the bubblewrap package); commands run unsandboxed)",
    );
    const strict = await doctor(`tools:\n  exec:\n    enabled: true\n    sandbox: bwrap\n`, noBwrap);
    expect(strict.code).toBe(1);
    expect(strict.out).toContain(
      "FAIL  exec       on; refuses every command: tools.exec.sandbox is bwrap, but bwrap is not installed (install the bubblewrap package)",
    );
  });

  it("tries every Telegram bot token with getMe: accepted, rejected, unreachable", async () => {
    const calls = telegram.calls.length;
    const r = await doctor(
      [
        "gateway:",
        `  port: ${deadPort}`,
        "channels:",
        "  http:",
        "    enabled: false",
        "  telegram:",
        "    token: ${TELEGRAM_BOT_TOKEN}",
        `    apiRoot: ${telegram.apiRoot}`,
        "    accounts:",
        "      revoked:",
        `        token: ${REVOKED_TOKEN}`,
        "      offline:",
        `        token: ${OTHER_TOKEN}`,
        `        apiRoot: http://127.0.0.1:${deadPort}`,
        "",
      ].join("\n"),
      { TELEGRAM_BOT_TOKEN: GOOD_TOKEN },
    );
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/ok\s+channels\s+console, telegram\n/);
    expect(r.out).toMatch(
      new RegExp(
        `ok\\s+telegram:default token accepted: bot @switchyard_test_bot \\(id 123456789\\) at ${telegram.apiRoot}, receiving by long polling`,
      ),
    );
    expect(r.out).toMatch(
      /FAIL\s+telegram:revoked token rejected by Telegram at .* \(HTTP 401 Unauthorized\): check channels\.telegram\.accounts\.revoked\.token/,
    );
    expect(r.out).toMatch(
      new RegExp(
        `FAIL\\s+telegram:offline cannot reach Telegram at http://127.0.0.1:${deadPort}: ECONNREFUSED`,
      ),
    );
    expect(r.out).not.toMatch(/^ok\s+http\s/m);
    for (const token of [GOOD_TOKEN, REVOKED_TOKEN, OTHER_TOKEN]) {
      expect(r.out + r.err).not.toContain(token);
      expect(r.out + r.err).not.toContain(token.split(":")[1]);
    }
    const getMes = telegram.calls.slice(calls).filter((c) => c.method === "getMe");
    expect(getMes.map((c) => c.token).sort()).toEqual([GOOD_TOKEN, REVOKED_TOKEN].sort());
  });

  it("fails a non-loopback host unless gateway.allowRemote is set", async () => {
    const refused = await doctor(`gateway:\n  host: 0.0.0.0\n  port: ${deadPort}\n`);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(
      /FAIL\s+exposure\s+gateway\.host is "0\.0\.0\.0", which is not loopback: .*no authentication.*file tools.*gateway\.allowRemote: true/,
    );
    const allowed = await doctor(
      `gateway:\n  host: 0.0.0.0\n  allowRemote: true\n  port: ${deadPort}\n  auth:\n    token: doctor-remote-token-0123456789\n`,
    );
    expect(allowed.code).toBe(0);
    expect(allowed.out).toMatch(/warn\s+exposure\s+gateway\.host is "0\.0\.0\.0", which is not loopback/);
    expect(allowed.out).not.toContain("doctor-remote-token-0123456789");
    // Allowed, but without a token (and without auth.mode: none) the gateway refuses to start.
    const tokenless = await doctor(`gateway:\n  host: 0.0.0.0\n  allowRemote: true\n  port: ${deadPort}\n`);
    expect(tokenless.code).toBe(1);
    expect(tokenless.out).toMatch(
      /FAIL\s+auth\s+gateway\.auth\.token is not set, but gateway\.host is "0\.0\.0\.0"/,
    );
    const none = await doctor(
      `gateway:\n  host: 0.0.0.0\n  allowRemote: true\n  port: ${deadPort}\n  auth:\n    mode: none\n`,
    );
    expect(none.code).toBe(0);
  });
});

describe("switchyard doctor and the running gateway", () => {
  afterAll(removeTempDirs);

  it("finds it through the runtime file, checks the config it runs with, and its token", async () => {
    const token = "doctor-gateway-token-0123456789abcdef";
    const dir = tempDir();
    const home = join(dir, "home");
    const config = join(dir, "gateway.yaml");
    writeFileSync(config, `gateway:\n  auth:\n    token: ${token}\n`);
    const gw = await spawnGateway(["--config", config, "--home", home, "--port", "0"]);
    const runtimeFile = join(home, "gateway.json");
    try {
      const r = await runCli(["doctor", "--home", home]);
      expect(r.code).toBe(0);
      expect(r.out).toContain(
        `ok    config     ${config} is valid (the running gateway's, from its runtime file)`,
      );
      expect(r.out).toContain(
        `ok    gateway    running at ${gw.url} (ready; token accepted), found in ${runtimeFile}, pid ${gw.child.pid}`,
      );
      expect(r.out).toContain(`listens at ${gw.url}/v1/chat`);
      expect(r.out + r.err).not.toContain(token);

      const other = join(dir, "other.yaml");
      writeFileSync(other, "agent:\n  id: main\n");
      const refused = await runCli(["doctor", "--home", home, "--config", other]);
      expect(refused.code).toBe(1);
      expect(refused.out).toContain(
        `FAIL  gateway    running at ${gw.url} (found in ${runtimeFile}, pid ${gw.child.pid}), but ${TOKEN_REQUIRED}`,
      );
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
  });
});
