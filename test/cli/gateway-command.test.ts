/**
 * `switchyard gateway` as a process: the non-loopback refusal and warning, a second signal that
 * exits at once during a drain, and the configured secrets the logger redacts.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configuredSecrets } from "../../src/cli/gateway-command.js";
import { isLoopbackHost } from "../../src/util/loopback.js";
import { parseConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/util/logger.js";
import { SecretList } from "../../src/util/redact.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { spawnGateway } from "../helpers/gateway-process.js";
import { until } from "../helpers/until.js";
import { removeTempDirs, runCli, tempDir } from "./cli-process.js";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

afterAll(removeTempDirs);

function configFile(yaml: string): string {
  const file = join(tempDir(), "switchyard.yaml");
  writeFileSync(file, yaml);
  return file;
}

describe("gateway.host exposure", () => {
  it("knows the loopback addresses", () => {
    for (const host of ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of [
      "0.0.0.0",
      "::",
      "192.168.1.10",
      "example.com",
      "localhost.example.com",
      "1127.0.0.1",
    ])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it("refuses a non-loopback host without gateway.allowRemote, exit 2", async () => {
    const config = configFile("gateway:\n  host: 0.0.0.0\n");
    const r = await runCli(["gateway", "--config", config, "--home", tempDir(), "--port", "0"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`switchyard: bad configuration in ${config}:`);
    expect(r.err).toContain('gateway.host is "0.0.0.0", which is not loopback');
    expect(r.err).toContain("/v1/chat) has no authentication and the agent has file tools");
    expect(r.err).toContain("gateway.allowRemote: true");
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it("refuses gateway.allowRemote: true without a token unless auth.mode is none, exit 2", async () => {
    const config = configFile("gateway:\n  host: 0.0.0.0\n  allowRemote: true\n");
    const r = await runCli(["gateway", "--config", config, "--home", tempDir(), "--port", "0"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('gateway.auth.token: not set, but gateway.host is "0.0.0.0"');
    expect(r.err).toContain("gateway.auth.mode: none");
  });

  it("starts remote with a token, saying only the token guards it", async () => {
    const config = configFile(
      "gateway:\n  host: 0.0.0.0\n  allowRemote: true\n  auth:\n    token: ${SWITCHYARD_TOKEN}\n",
    );
    const gw = await spawnGateway(["--config", config, "--home", tempDir(), "--port", "0"], {
      SWITCHYARD_TOKEN: "a-long-enough-test-token-0123",
    });
    try {
      expect(gw.output()).toContain("has gateway.auth.token can drive the agent");
      expect(gw.output()).not.toContain("a-long-enough-test-token-0123");
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
  });

  it("starts with gateway.allowRemote: true and auth.mode: none, warning on stderr and in the log", async () => {
    const config = configFile("gateway:\n  host: 0.0.0.0\n  allowRemote: true\n  auth:\n    mode: none\n");
    const gw = await spawnGateway(["--config", config, "--home", tempDir(), "--port", "0"]);
    try {
      expect(gw.output()).toContain('WARNING: gateway.host is "0.0.0.0", which is not loopback');
      expect(gw.output()).toContain("allowed by gateway.allowRemote: true and gateway.auth.mode: none");
      expect(gw.output()).toMatch(/"level":40,.*not loopback/);
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
  });
});

describe("start-up failures exit, after closing what was opened", () => {
  it("a port in use: one line, exit 1, nothing left running", async () => {
    const holder = createServer();
    await new Promise<void>((done) => holder.listen(0, "127.0.0.1", done));
    const port = (holder.address() as AddressInfo).port;
    try {
      // No API key: the model simulator starts before the port is tried, and must close again.
      const r = await runCli(["gateway", "--home", tempDir(), "--port", String(port)], { timeoutMs: 20_000 });
      expect(r.code).toBe(1);
      expect(r.err).toBe(
        `switchyard gateway: port ${port} on 127.0.0.1 is already in use (another gateway? pass --port N or set gateway.port)\n`,
      );
      // The log (stdout) has the same line, and no stack trace.
      expect(r.out).toContain(`gateway failed to start: port ${port} on 127.0.0.1 is already in use`);
      expect(r.out).not.toMatch(/stack|EADDRINUSE|\\n\s+at /);
    } finally {
      holder.close();
    }
  });

  it("a home folder that is a file: one plain line naming it, exit 2", async () => {
    const file = join(tempDir(), "not-a-folder");
    writeFileSync(file, "x");
    const r = await runCli(["gateway", "--home", file, "--port", "0"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `switchyard gateway: home folder ${file} is a file, not a folder: choose another with --home or SWITCHYARD_HOME\n`,
    );
    expect(r.out).toBe("");
  });

  it("a workspace that cannot be created: one plain line naming it, exit 2", async () => {
    const file = join(tempDir(), "a-file");
    writeFileSync(file, "x");
    const config = configFile(`agent:\n  workspace: ${file}/workspace\n`);
    const r = await runCli(["gateway", "--config", config, "--home", tempDir(), "--port", "0"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `switchyard gateway: workspace ${file}/workspace cannot be created (a folder on its path is a file): check agent.workspace in the config`,
    );
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});

describe("a second signal during the drain", () => {
  const sim = new ModelSimulator();
  beforeAll(() => sim.start());
  afterAll(() => sim.close());

  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`${signal} twice exits at once with ${code}`, async () => {
      // A turn that never answers holds the drain for drainTimeoutMs (60 s) after the first signal.
      sim.script({ hang: true });
      const config = configFile(
        `gateway:\n  drainTimeoutMs: 60000\nagent:\n  model: openai/gpt-test\nproviders:\n  openai:\n    apiKey: sk-test-key\n    baseUrl: ${sim.url}/v1\n`,
      );
      const seen = sim.requests.length;
      const gw = await spawnGateway(["--config", config, "--home", tempDir(), "--port", "0"]);
      const chat = fetch(`${gw.url}/v1/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sender: "ann", text: "take your time" }),
      }).catch(() => undefined);
      await sim.waitForRequests(seen + 1, 10_000);
      const exited = new Promise<number | null>((done) => gw.child.once("exit", (c) => done(c)));
      gw.child.kill(signal);
      await until(() => gw.output().includes("shutting down, letting running turns finish"), "the drain log");
      const t0 = Date.now();
      gw.child.kill(signal);
      expect(await exited).toBe(code);
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(gw.output()).toContain(`${signal} again, exiting now`);
      await chat;
    });
  }
});

describe("configured secrets", () => {
  const config = parseConfig(
    {
      providers: { openai: { apiKey: "sk-openai-configured-0001" } },
      channels: {
        telegram: {
          token: "111111111:AAdefault-token-0123456789abcdefghijk",
          webhook: { url: "https://bot.example.com/hook", secret: "shared_webhook_secret" },
          accounts: {
            sales: {
              token: "222222222:AAsales-token-0123456789abcdefghijklm",
              webhook: { url: "https://bot.example.com/sales", secret: "sales-webhook-secret" },
            },
            support: { token: "support-token-of-an-unusual-shape" },
          },
        },
      },
    },
    undefined,
  );

  it("lists every provider key and channel secret", () => {
    expect(configuredSecrets(config, { ANTHROPIC_API_KEY: "env-anthropic-key-0002" }).sort()).toEqual(
      [
        "sk-openai-configured-0001",
        "env-anthropic-key-0002",
        "111111111:AAdefault-token-0123456789abcdefghijk",
        "shared_webhook_secret",
        "222222222:AAsales-token-0123456789abcdefghijklm",
        "sales-webhook-secret",
        "support-token-of-an-unusual-shape",
      ].sort(),
    );
  });

  it("are redacted from log lines whatever their shape", async () => {
    const secrets = new SecretList();
    for (const s of configuredSecrets(config, {})) secrets.add(s);
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const logger = createLogger({ destination: sink, format: "json", secrets });
    logger.info({ header: "sales-webhook-secret" }, "webhook check with shared_webhook_secret");
    logger.warn("support bot support-token-of-an-unusual-shape failed");
    logger.flush();
    await new Promise((r) => setImmediate(r));
    const all = lines.join("");
    expect(lines.length).toBe(2);
    for (const s of ["sales-webhook-secret", "shared_webhook_secret", "support-token-of-an-unusual-shape"])
      expect(all).not.toContain(s);
  });
});
