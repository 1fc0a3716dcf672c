/**
 * The runtime file `<home>/gateway.json`: written atomically with mode 0600, read as live, stale
 * (its process is gone, a zombie, or its pid reused) or invalid, removed only by the process it names; a second gateway keeps a
 * live first gateway's file, and replaces one whose pid is alive but answers nothing.
 */
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import {
  type RuntimeInfo,
  isGatewayAlive,
  publishRuntimeFile,
  readRuntimeFile,
  removeRuntimeFile,
  runtimeFilePath,
  writeRuntimeFile,
} from "../../src/cli/runtime-file.js";
import { packageVersion } from "../../src/cli/version.js";
import { createLogger } from "../../src/util/logger.js";
import { selfIdentity } from "../../src/util/process-identity.js";
import { exitedPid, removeTempDirs, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

function info(home: string, over: Partial<RuntimeInfo> = {}): RuntimeInfo {
  return {
    pid: 4242,
    port: 7421,
    host: "127.0.0.1",
    url: "http://127.0.0.1:7421",
    configFile: null,
    home,
    version: "0.1.0",
    startedAt: "2024-01-15T12:00:00.000Z",
    ...over,
  };
}

/** A logger whose JSON lines are collected. */
function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: () => string } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { logger: createLogger({ destination: sink, format: "json" }), lines: () => chunks.join("") };
}

describe("runtime file", () => {
  it("is written with mode 0600, whole, with no temp file left", () => {
    const home = tempDir();
    writeRuntimeFile(info(home));
    expect(statSync(runtimeFilePath(home)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(runtimeFilePath(home), "utf8"))).toEqual(info(home));
    expect(readdirSync(home)).toEqual(["gateway.json"]);
    // Rewritten over an existing file, still 0600.
    writeRuntimeFile(info(home, { port: 9000 }));
    expect(readRuntimeFile(home, () => true)).toMatchObject({ type: "live", info: { port: 9000 } });
    expect(statSync(runtimeFilePath(home)).mode & 0o777).toBe(0o600);
  });

  it("reads as absent, live, stale or invalid", async () => {
    const home = tempDir();
    expect(readRuntimeFile(home)).toEqual({ type: "absent", path: runtimeFilePath(home) });
    writeRuntimeFile(info(home, { pid: process.pid }));
    expect(readRuntimeFile(home)).toMatchObject({ type: "live", info: { pid: process.pid } });
    const gone = await exitedPid();
    writeRuntimeFile(info(home, { pid: gone }));
    expect(readRuntimeFile(home)).toMatchObject({ type: "stale", info: { pid: gone } });
    writeFileSync(runtimeFilePath(home), "{not json");
    expect(readRuntimeFile(home)).toMatchObject({ type: "invalid", reason: "it is not JSON" });
    writeFileSync(runtimeFilePath(home), JSON.stringify({ ...info(home), port: "7420" }));
    expect(readRuntimeFile(home)).toMatchObject({ type: "invalid", reason: '"port" is "7420"' });
  });

  it("knows a live gateway from one that exited, or whose pid another process got", async () => {
    const self = selfIdentity();
    const mine = info("/h", {
      pid: process.pid,
      hostname: self.host,
      ...(self.bootId ? { bootId: self.bootId } : {}),
      ...(self.pidNamespace ? { pidNamespace: self.pidNamespace } : {}),
      ...(self.startTicks !== null ? { startTicks: self.startTicks } : {}),
    });
    expect(isGatewayAlive(mine)).toBe(true);
    expect(isGatewayAlive({ ...mine, pid: await exitedPid() })).toBe(false);
    // The pid is alive, but it is another process than the one that wrote the file.
    expect(isGatewayAlive({ ...mine, startTicks: (self.startTicks ?? 0) + 1 })).toBe(false);
    // An older file without the identity: the pid alone.
    expect(isGatewayAlive(info("/h", { pid: process.pid }))).toBe(true);
    // Another machine's gateway cannot be judged from here: taken as alive.
    expect(isGatewayAlive({ ...mine, pid: await exitedPid(), hostname: `${self.host}-elsewhere` })).toBe(
      true,
    );
  });

  it("records the identity of the process that publishes it", async () => {
    const home = tempDir();
    const { logger } = capturingLogger();
    await publishRuntimeFile({
      home,
      url: "http://127.0.0.1:43211",
      host: "127.0.0.1",
      configFile: undefined,
      logger,
    });
    const self = selfIdentity();
    expect(readRuntimeFile(home)).toMatchObject({
      type: "live",
      info: {
        pid: process.pid,
        hostname: self.host,
        ...(self.startTicks !== null ? { startTicks: self.startTicks } : {}),
      },
    });
  });

  it("is removed only by the process it names", () => {
    const home = tempDir();
    writeRuntimeFile(info(home, { pid: 4242 }));
    expect(removeRuntimeFile(home, 4243)).toBe(false);
    expect(existsSync(runtimeFilePath(home))).toBe(true);
    expect(removeRuntimeFile(home, 4242)).toBe(true);
    expect(existsSync(runtimeFilePath(home))).toBe(false);
    expect(removeRuntimeFile(home, 4242)).toBe(false);
  });
});

describe("publishRuntimeFile", () => {
  let server: Server | undefined;
  afterAll(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

  it("writes the real port, the config file and the version", async () => {
    const home = tempDir();
    const { logger } = capturingLogger();
    const outcome = await publishRuntimeFile({
      home,
      url: "http://127.0.0.1:43210",
      host: "127.0.0.1",
      configFile: "/etc/switchyard.yaml",
      logger,
      pid: 4242,
      startedAt: new Date(Date.UTC(2024, 0, 15, 12)),
      isAlive: () => false,
    });
    expect(outcome.type).toBe("written");
    expect(readRuntimeFile(home, () => true)).toMatchObject({
      type: "live",
      info: {
        pid: 4242,
        port: 43210,
        url: "http://127.0.0.1:43210",
        configFile: "/etc/switchyard.yaml",
        home,
        version: packageVersion(),
        startedAt: "2024-01-15T12:00:00.000Z",
      },
    });
  });

  it("keeps the file of another live gateway that answers, and warns", async () => {
    server = createServer((_req, res) => res.end("ok"));
    await new Promise<void>((done) => server?.listen(0, "127.0.0.1", done));
    const otherUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const home = tempDir();
    writeRuntimeFile(info(home, { pid: 1111, url: otherUrl }));
    const { logger, lines } = capturingLogger();
    const printed: string[] = [];
    const outcome = await publishRuntimeFile({
      home,
      url: "http://127.0.0.1:43210",
      host: "127.0.0.1",
      configFile: undefined,
      logger,
      pid: 2222,
      isAlive: () => true,
      printWarning: (line) => printed.push(line),
    });
    expect(outcome).toMatchObject({ type: "kept", other: { pid: 1111 } });
    expect(printed).toEqual([expect.stringMatching(/^WARNING: another gateway \(pid 1111\) is running/)]);
    expect(readRuntimeFile(home, () => true)).toMatchObject({ info: { pid: 1111, url: otherUrl } });
    logger.flush();
    await new Promise((r) => setImmediate(r));
    expect(lines()).toMatch(/"level":40,.*another gateway \(pid 1111\) is running with this home folder/);
  });

  it("replaces a file whose pid is alive but whose URL answers nothing (a reused pid)", async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, "127.0.0.1", done));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((done) => closed.close(done));
    const home = tempDir();
    writeRuntimeFile(info(home, { pid: 1111, url: deadUrl }));
    const outcome = await publishRuntimeFile({
      home,
      url: "http://127.0.0.1:43210",
      host: "127.0.0.1",
      configFile: undefined,
      logger: capturingLogger().logger,
      pid: 2222,
      isAlive: () => true,
    });
    expect(outcome.type).toBe("written");
    expect(readRuntimeFile(home, () => true)).toMatchObject({ info: { pid: 2222, port: 43210 } });
  });
});
