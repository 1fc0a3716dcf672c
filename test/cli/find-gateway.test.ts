/**
 * One discovery order for status, doctor and chat: --url, --port (host from the config), a live
 * runtime file, then gateway.port; a stale runtime file is ignored. The token and the config
 * come from --config, else the runtime file's config, else the usual lookup.
 */
import { ConfigError } from "../../src/util/config-error.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeSource, findGateway, hostForUrl } from "../../src/cli/find-gateway.js";
import { type RuntimeInfo, writeRuntimeFile } from "../../src/cli/runtime-file.js";

import { removeTempDirs, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

const TOKEN = "runtime-config-token-0123456789";
const LIVE_PID = 1111;
const DEAD_PID = 2222;
const isAlive = (info: { pid: number }) => info.pid === LIVE_PID;

/** A home with a runtime file (pid LIVE_PID or DEAD_PID), and a cwd with or without a switchyard.yaml. */
function setup(runtime?: Partial<RuntimeInfo>, cwdYaml?: string) {
  const dir = tempDir();
  const home = join(dir, "home");
  const cwd = join(dir, "cwd");
  mkdirSync(home);
  mkdirSync(cwd);
  if (cwdYaml !== undefined) writeFileSync(join(cwd, "switchyard.yaml"), cwdYaml);
  if (runtime) {
    writeRuntimeFile({
      pid: LIVE_PID,
      port: 43210,
      host: "127.0.0.1",
      url: "http://127.0.0.1:43210",
      configFile: null,
      home,
      version: "0.1.0",
      startedAt: "2024-01-15T12:00:00.000Z",
      ...runtime,
    });
  }
  const deps = { env: {}, cwd, isAlive };
  return { dir, home, cwd, deps };
}

function yamlFile(dir: string, name: string, yaml: string): string {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return file;
}

describe("findGateway", () => {
  it("takes --url first, then --port on the config's host, then the live runtime file, then gateway.port", () => {
    const { home, deps } = setup({}, "gateway:\n  host: 127.0.0.2\n  port: 7000\n");
    const url = findGateway({ home, json: false, url: "http://example.test:1/", port: 9 }, deps);
    expect([url.url, url.source]).toEqual(["http://example.test:1", "url-flag"]);
    const port = findGateway({ home, json: false, port: 9 }, deps);
    // The cwd's config does not apply: the runtime file names the config the gateway runs with (none).
    expect([port.url, port.source]).toEqual(["http://127.0.0.1:9", "port-flag"]);
    const runtime = findGateway({ home, json: false }, deps);
    expect([runtime.url, runtime.source]).toEqual(["http://127.0.0.1:43210", "runtime-file"]);
    expect(describeSource(runtime)).toBe(`found in ${join(home, "gateway.json")}, pid ${LIVE_PID}`);
  });

  it("ignores a stale runtime file and falls back to gateway.port of the config it names", () => {
    const dir = tempDir();
    const config = yamlFile(dir, "gw.yaml", "gateway:\n  port: 7001\n");
    const { home, deps } = setup({ pid: DEAD_PID, configFile: config }, "gateway:\n  port: 7000\n");
    const found = findGateway({ home, json: false }, deps);
    expect(found.runtime.type).toBe("stale");
    expect([found.url, found.source]).toEqual(["http://127.0.0.1:7001", "config"]);
    expect(found.clientConfig).toMatchObject({ file: config, origin: "runtime-file" });
  });

  it("uses the usual lookup without a runtime file, and --port takes the config's host", () => {
    const { home, deps } = setup(undefined, "gateway:\n  host: 0.0.0.0\n  port: 7000\n");
    const found = findGateway({ home, json: false }, deps);
    expect([found.url, found.source]).toEqual(["http://127.0.0.1:7000", "config"]);
    expect(found.clientConfig.origin).toBe("lookup");
    const v6 = setup(undefined, "gateway:\n  host: '::1'\n");
    expect(findGateway({ home: v6.home, json: false, port: 9 }, v6.deps).url).toBe("http://[::1]:9");
  });

  it("sends the token of the config the running gateway was started with", () => {
    const dir = tempDir();
    const config = yamlFile(dir, "gw.yaml", `gateway:\n  auth:\n    token: ${TOKEN}\n`);
    const { home, deps } = setup({ configFile: config });
    expect(findGateway({ home, json: false }, deps).token).toBe(TOKEN);
    // Also when the address is given: the token still comes from that config.
    expect(findGateway({ home, json: false, url: "http://127.0.0.1:1" }, deps).token).toBe(TOKEN);
    // --config wins.
    const other = yamlFile(
      dir,
      "other.yaml",
      "gateway:\n  auth:\n    token: other-config-token-0123456789\n",
    );
    expect(findGateway({ home, json: false, config: other }, deps).token).toBe(
      "other-config-token-0123456789",
    );
    const none = yamlFile(dir, "none.yaml", "agent:\n  id: main\n");
    expect(findGateway({ home, json: false, config: none }, deps).token).toBeUndefined();
  });

  it("reports a config it cannot load, and throws only when the address depends on it", () => {
    const { home, deps } = setup(undefined, "gateway:\n  port: nope\n");
    const given = findGateway({ home, json: false, port: 9 }, deps);
    expect(given.url).toBe("http://127.0.0.1:9");
    expect(given.token).toBeUndefined();
    expect(given.clientConfig.problem).toBeInstanceOf(ConfigError);
    expect(() => findGateway({ home, json: false }, deps)).toThrow(ConfigError);
  });
});

describe("hostForUrl", () => {
  it("reaches wildcard binds through loopback and brackets IPv6 literals", () => {
    expect(hostForUrl("0.0.0.0")).toBe("127.0.0.1");
    expect(hostForUrl("::")).toBe("[::1]");
    expect(hostForUrl("::1")).toBe("[::1]");
    expect(hostForUrl("[::1]")).toBe("[::1]");
    expect(hostForUrl("localhost")).toBe("localhost");
  });
});
