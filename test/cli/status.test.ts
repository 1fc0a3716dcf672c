/**
 * `switchyard status`, online (a spawned gateway in simulator mode) and offline (the database):
 * both say whether replies are simulated and list undelivered (dead) replies. A gateway started
 * with --port and --home is found through its runtime file; a stale one is ignored, and offline
 * status reads the config it names; --json is JSON in every case; the configured token is sent.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TOKEN_REQUIRED } from "../../src/cli/gateway-client.js";
import { writeRuntimeFile } from "../../src/cli/runtime-file.js";
import { packageVersion } from "../../src/cli/version.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import { readProcStat } from "../../src/util/process-identity.js";
import { FakeDiscord } from "../fakes/discord-api.js";
import { spawnGateway } from "../helpers/gateway-process.js";
import { until } from "../helpers/until.js";
import { closedPort, exitedPid, removeTempDirs, runCli, seedDeadReply, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

const TOKEN = "status-test-token-0123456789abcdef";

function yamlFile(yaml: string): string {
  const file = join(tempDir(), "switchyard.yaml");
  writeFileSync(file, yaml);
  return file;
}

describe("switchyard status", () => {
  it("shows a running simulated gateway: the SIMULATED notice and the dead replies", async () => {
    const home = tempDir();
    await seedDeadReply(home, "Your report is ready", "permanent: bot was blocked by the user");
    const gw = await spawnGateway(["--home", home, "--port", "0"]);
    try {
      const r = await runCli(["status", "--url", gw.url]);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`gateway   ${gw.url} — ready`);
      expect(r.out).toMatch(
        /model\s+anthropic\/claude-sonnet-5-5\s+\*\* SIMULATED replies: no API key configured \*\*/,
      );
      expect(r.out).toMatch(/outbox\s+.*dead 1/);
      expect(r.out).toContain("undelivered replies (dead):");
      expect(r.out).toMatch(
        /#\d+ telegram:42 after \d+ attempts — permanent: bot was blocked by the user — "Your report is ready"/,
      );
      const json = await runCli(["status", "--url", gw.url, "--json"]);
      const body = JSON.parse(json.out) as { simulated: boolean; deadReplies: Array<{ text: string }> };
      expect(body.simulated).toBe(true);
      expect(body.deadReplies.map((d) => d.text)).toEqual(["Your report is ready"]);
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
  });

  it("lists the channels, and warns about one that stopped with what to fix (Discord without Message Content)", async () => {
    const fake = new FakeDiscord({ token: "status-discord-token-0123456789", messageContentIntent: false });
    await fake.start();
    const config = yamlFile(
      `channels:\n  discord:\n    token: status-discord-token-0123456789\n    apiUrl: ${fake.apiUrl}\n`,
    );
    const gw = await spawnGateway(["--config", config, "--home", tempDir(), "--port", "0"]);
    try {
      let out = "";
      await until(async () => {
        out = (await runCli(["status", "--url", gw.url])).out;
        return out.includes("WARNING: discord:default stopped");
      }, "the stopped channel in status");
      expect(out).toMatch(/^channels {2}.*discord:default stopped/m);
      expect(out).toMatch(
        /WARNING: discord:default stopped: the Message Content intent is not enabled: turn on .*MESSAGE CONTENT INTENT/,
      );
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
      await fake.close();
    }
  });

  it("offline, says replies would be simulated without a key, and lists dead replies", async () => {
    const home = tempDir();
    await seedDeadReply(home, "Late answer", "permanent: chat not found");
    const r = await runCli(["status", "--home", home, "--port", "1"]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("no gateway answers at http://127.0.0.1:1");
    expect(r.out).toMatch(/model\s+anthropic\/claude-sonnet-5-5\s+\*\* replies would be SIMULATED/);
    expect(r.out).toContain("undelivered replies (dead):");
    expect(r.out).toMatch(/#\d+ telegram:42 after \d+ attempts — permanent: chat not found — "Late answer"/);
  });

  it("offline, does not claim simulation when a provider key is configured", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "switchyard.yaml"), "agent:\n  model: openai/gpt-test\n");
    const home = join(dir, "home");
    await openSqliteStore({ path: join(home, "switchyard.db") }).close(); // creates the database
    const r = await runCli(["status", "--home", home, "--port", "1"], {
      cwd: dir,
      env: { OPENAI_API_KEY: "sk-test-key-for-status" },
    });
    expect(r.out).toMatch(/model\s+openai\/gpt-test\n/);
    expect(r.out).not.toContain("SIMULATED");
  });
});

describe("switchyard status finds the gateway", () => {
  it("started with --port and --home, through its runtime file, which goes on SIGTERM", async () => {
    const home = tempDir();
    const gw = await spawnGateway(["--home", home, "--port", "0"]);
    const file = join(home, "gateway.json");
    try {
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
        pid: gw.child.pid,
        port: Number(new URL(gw.url).port),
        host: "127.0.0.1",
        url: gw.url,
        configFile: null,
        home,
        version: packageVersion(),
        startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        owner: expect.stringMatching(/^gw_/),
        // Who the process is beyond its pid: a zombie or a reused pid is not taken for it.
        hostname: hostname(),
        bootId: expect.any(String),
        pidNamespace: expect.stringMatching(/^pid:\[\d+\]$/),
        startTicks: readProcStat(gw.child.pid as number)?.startTicks,
      });
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // No --port, and a working directory without a config: only the runtime file knows the port.
      const r = await runCli(["status", "--home", home]);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`gateway   ${gw.url} — ready`);
      expect(r.out).toContain(`found in ${file}, pid ${gw.child.pid}`);
      const byEnv = await runCli(["status"], { env: { SWITCHYARD_HOME: home } });
      expect(byEnv.out).toContain(`gateway   ${gw.url} — ready`);
      const json = JSON.parse((await runCli(["status", "--home", home, "--json"])).out) as Record<
        string,
        unknown
      >;
      expect(json).toMatchObject({ running: true, url: gw.url, source: "runtime-file", ready: true });
      const doctor = await runCli(["doctor", "--home", home]);
      expect(doctor.out).toContain(
        `ok    gateway    running at ${gw.url} (ready; no token sent), found in ${file}, pid ${gw.child.pid}`,
      );
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
    expect(existsSync(file)).toBe(false);
  });

  it("a second gateway on the same home warns and leaves the first one's runtime file", async () => {
    const home = tempDir();
    const first = await spawnGateway(["--home", home, "--port", "0"]);
    try {
      const second = await spawnGateway(["--home", home, "--port", "0"]);
      try {
        expect(second.output()).toContain(
          `WARNING: another gateway (pid ${first.child.pid}) is running with this home folder (${home}) at ${first.url}`,
        );
        // The log line is written asynchronously: it may follow the banner.
        await until(() => /"level":40,.*another gateway/.test(second.output()), "the warning in the log");
      } finally {
        expect(await second.kill("SIGTERM")).toBe(0);
      }
      // The second one's exit did not remove the file: it names the first.
      expect(JSON.parse(readFileSync(join(home, "gateway.json"), "utf8"))).toMatchObject({
        pid: first.child.pid,
        url: first.url,
      });
    } finally {
      expect(await first.kill("SIGTERM")).toBe(0);
    }
  });

  it("ignores a stale runtime file, says so, and reads the config it names", async () => {
    const home = tempDir();
    await seedDeadReply(home, "Late answer", "permanent: chat not found");
    const port = await closedPort();
    const config = yamlFile(`gateway:\n  port: ${port}\nagent:\n  model: openai/gpt-x\n`);
    const pid = await exitedPid();
    writeRuntimeFile({
      pid,
      port: 1,
      host: "127.0.0.1",
      url: "http://127.0.0.1:1",
      configFile: config,
      home,
      version: "0.1.0",
      startedAt: "2024-01-15T12:00:00.000Z",
    });
    const r = await runCli(["status", "--home", home]);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`no gateway answers at http://127.0.0.1:${port}`);
    expect(r.out).toContain(
      `a gateway (pid ${pid}, started 2024-01-15T12:00:00.000Z) stopped without cleaning up ${join(home, "gateway.json")}`,
    );
    expect(r.out).toMatch(
      /model\s+openai\/gpt-x\s+\*\* replies would be SIMULATED: no API key configured \*\*/,
    );
    const json = await runCli(["status", "--home", home, "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toMatchObject({
      running: false,
      url: `http://127.0.0.1:${port}`,
      reason: expect.stringContaining("ECONNREFUSED"),
      staleRuntimeFile: { pid, path: join(home, "gateway.json") },
      config,
      model: "openai/gpt-x",
      simulated: true,
      database: join(home, "switchyard.db"),
      inbox: { answered: 1, commands: 0, groupContext: 0, refused: 0 },
      outbox: { dead: 1 },
      deadReplies: [expect.objectContaining({ chatId: "42", text: "Late answer" })],
    });
  });
});

describe("switchyard status offline", () => {
  it("prints JSON with --json when no gateway answers, also without a database", async () => {
    const port = await closedPort();
    const home = tempDir();
    const r = await runCli(["status", "--home", home, "--port", String(port), "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toEqual({
      running: false,
      url: `http://127.0.0.1:${port}`,
      source: "port-flag",
      reason: expect.stringMatching(
        new RegExp(`^no gateway answers at http://127.0.0.1:${port}: ECONNREFUSED`),
      ),
      staleRuntimeFile: null,
      config: null,
      configProblem: null,
      database: null,
      databaseProblem: null,
      model: "anthropic/claude-sonnet-5-5",
      simulated: true,
      inbox: null,
      outbox: null,
      deadReplies: [],
      heartbeat: {
        state: "skipped",
        reason: "there is no HEARTBEAT.md in the workspace: nothing to check",
        everyMs: 1_800_000,
      },
    });
  });

  it("names the model of --config and says replies would be simulated without its key", async () => {
    const home = tempDir();
    await seedDeadReply(home, "Late answer", "permanent: chat not found");
    const config = yamlFile("agent:\n  model: openai/gpt-x\n");
    const port = String(await closedPort());
    const r = await runCli(["status", "--home", home, "--config", config, "--port", port]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/model\s+openai\/gpt-x\s+\*\* replies would be SIMULATED/);
    const json = JSON.parse(
      (await runCli(["status", "--home", home, "--config", config, "--port", port, "--json"])).out,
    );
    expect(json).toMatchObject({ config, model: "openai/gpt-x", simulated: true });
  });
});

describe("switchyard status with a token", () => {
  it("sends the configured token, counts chat commands apart, and names each lane figure", async () => {
    const home = tempDir();
    const config = yamlFile(`gateway:\n  auth:\n    token: ${TOKEN}\n`);
    const gw = await spawnGateway(["--config", config, "--home", home, "--port", "0"]);
    try {
      const help = await fetch(`${gw.url}/v1/chat`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ sender: "ann", text: "/help" }),
      });
      expect(help.status).toBe(200);
      // The runtime file names the config, so the token is found without --config.
      const r = await runCli(["status", "--home", home]);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      expect(r.out).toMatch(
        /^inbox {5}answered 0, commands 1, group context 0, refused 0, queued 0, running 0, received 0, failed 0$/m,
      );
      expect(r.out).not.toContain("rejected");
      expect(r.out).toMatch(
        /^turns {5}0 in progress \(at most one per session\); waiting to start: 0 human \/ 0 normal \/ 0 background$/m,
      );
      expect(r.out).toMatch(/^calls {5}0 model calls in flight, of 4 slots \(lanes\.maxConcurrent\)$/m);
      const json = JSON.parse((await runCli(["status", "--home", home, "--json"])).out);
      expect(json.inbox).toEqual({
        received: 0,
        queued: 0,
        running: 0,
        answered: 0,
        failed: 0,
        commands: 1,
        groupContext: 0,
        refused: 0,
      });

      // A config without the token: one plain line, exit 1; --json still prints JSON.
      const other = yamlFile("agent:\n  id: main\n");
      const refused = await runCli(["status", "--home", home, "--config", other]);
      expect(refused.code).toBe(1);
      expect(refused.err).toBe(`switchyard status: ${TOKEN_REQUIRED}\n`);
      expect(refused.out).toBe("");
      const refusedJson = await runCli(["status", "--home", home, "--config", other, "--json"]);
      expect(refusedJson.code).toBe(1);
      expect(JSON.parse(refusedJson.out)).toEqual({
        running: true,
        url: gw.url,
        source: "runtime-file",
        reason: TOKEN_REQUIRED,
      });
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
  });
});
