/**
 * The runtime file `<home>/gateway.json`: a running gateway says where it listens (pid, host,
 * port, URL, config file), so `status`, `doctor` and `chat` find it whatever `--port` or
 * `--config` it was started with. Written once the server listens, atomically (temp file +
 * rename) with mode 0600, and removed on exit only while it still names the exiting process.
 * A file whose process is gone is stale: the gateway stopped without cleaning up. "Gone" is
 * judged by the process's state and start time (recorded here), not by the pid alone: a
 * SIGKILLed gateway lingers as a zombie until it is reaped, and its pid may be reused.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../util/logger.js";
import { processLiveness, selfIdentity } from "../util/process-identity.js";
import { packageVersion } from "./version.js";

/** The runtime file's name inside the home folder. */
export const RUNTIME_FILE_NAME = "gateway.json";

/** How long a start-up probe of another gateway's URL may take. */
const PROBE_TIMEOUT_MS = 1_000;

/** What a running gateway records about itself. */
export interface RuntimeInfo {
  /** Process id of the gateway. */
  pid: number;
  /** The port it listens on: the real one, also when started with `--port 0`. */
  port: number;
  /** The address it is bound to (`gateway.host`). */
  host: string;
  /** Its base URL, as it prints it. */
  url: string;
  /** Absolute path of the configuration file it loaded; null when it runs on the defaults. */
  configFile: string | null;
  /** Its home folder. */
  home: string;
  /** switchyard's version (package.json). */
  version: string;
  /** When it started listening, ISO 8601. */
  startedAt: string;
  /** Its instance id, the owner of its leases in the database. */
  owner?: string;
  /** The machine's name (`os.hostname()`), the kernel's boot id and the pid namespace it ran in. */
  hostname?: string;
  bootId?: string;
  pidNamespace?: string;
  /** Its process's start time in clock ticks since boot (with the pid, it names the process). */
  startTicks?: number;
}

/** What a reader finds in a home folder. */
export type RuntimeFileState =
  | { type: "absent"; path: string }
  /** Its process runs (its URL is not probed: a client connects to it anyway). */
  | { type: "live"; path: string; info: RuntimeInfo }
  /** Its process is gone: the gateway stopped without removing the file. Readers ignore it. */
  | { type: "stale"; path: string; info: RuntimeInfo }
  /** Unreadable or not a runtime file: ignored like an absent one, with the reason. */
  | { type: "invalid"; path: string; reason: string };

/** Where the runtime file of `home` is. */
export function runtimeFilePath(home: string): string {
  return join(home, RUNTIME_FILE_NAME);
}

/**
 * Whether the gateway a runtime file names still runs: its process is neither gone, nor a
 * zombie, nor another process that got its pid (start time). A file from another machine, or
 * an older file without the process's identity, is judged as well as it can be.
 */
export function isGatewayAlive(info: RuntimeInfo): boolean {
  const self = selfIdentity();
  const other = {
    pid: info.pid,
    host: info.hostname ?? self.host,
    bootId: info.bootId ?? null,
    pidNamespace: info.pidNamespace ?? self.pidNamespace,
    startTicks: info.startTicks ?? null,
  };
  return processLiveness(other, self) !== "dead";
}

/** Reads and classifies the runtime file of `home`. Never throws. */
export function readRuntimeFile(
  home: string,
  isAlive: (info: RuntimeInfo) => boolean = isGatewayAlive,
): RuntimeFileState {
  const path = runtimeFilePath(home);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { type: "absent", path };
    return { type: "invalid", path, reason: `cannot read it: ${(err as Error).message}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { type: "invalid", path, reason: "it is not JSON" };
  }
  const info = toRuntimeInfo(parsed);
  if (typeof info === "string") return { type: "invalid", path, reason: info };
  return isAlive(info) ? { type: "live", path, info } : { type: "stale", path, info };
}

/**
 * Writes `info` as the runtime file of `info.home`: a temp file with mode 0600 renamed over the
 * old one, so a reader sees the old file or the new one, never half of one. Throws on I/O errors.
 */
export function writeRuntimeFile(info: RuntimeInfo): void {
  const path = runtimeFilePath(info.home);
  const temp = `${path}.${info.pid}.tmp`;
  try {
    // A leftover temp file would keep its old mode: start from none.
    rmSync(temp, { force: true });
    writeFileSync(temp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

/**
 * Removes the runtime file of `home` if it names `pid` (another gateway's file is left alone).
 * Returns whether it removed it. Never throws: an exiting gateway has nothing better to do.
 */
export function removeRuntimeFile(home: string, pid: number): boolean {
  const state = readRuntimeFile(home, () => true);
  if (state.type !== "live" || state.info.pid !== pid) return false;
  try {
    rmSync(state.path);
    return true;
  } catch {
    return false;
  }
}

/** Options of {@link publishRuntimeFile}. */
export interface PublishRuntimeFileOptions {
  home: string;
  /** The listening server's URL (`RunningGateway.url`); the port is taken from it. */
  url: string;
  /** `gateway.host`. */
  host: string;
  /** The configuration file loaded, or undefined on defaults. */
  configFile: string | undefined;
  logger: Logger;
  /** Default `process.pid`. */
  pid?: number;
  /** Default: the current time. */
  startedAt?: Date;
  /** The gateway's instance id (lease owner). */
  owner?: string;
  /** Default {@link isGatewayAlive}. */
  isAlive?: (info: RuntimeInfo) => boolean;
  /** Default: `fetch`, for the probe of another gateway's URL. */
  fetch?: typeof fetch;
  /** Where a warning line goes besides the log; default stderr. */
  printWarning?: (line: string) => void;
}

/** What {@link publishRuntimeFile} did. */
export type PublishOutcome =
  | { type: "written"; path: string }
  /** Another live gateway owns the file: it was left as it is (a warning was logged). */
  | { type: "kept"; path: string; other: RuntimeInfo }
  /** Writing failed (a warning was logged); the gateway runs on, clients fall back to the config. */
  | { type: "failed"; path: string; error: Error };

/**
 * The gateway side, called once the server listens: writes the runtime file, unless another
 * gateway that is alive and answers at its URL already owns it (then it warns on stderr and in
 * the log, and keeps that file). A file whose pid is alive but whose URL does not answer is
 * taken as left by a crash whose pid was reused, and is replaced. Never throws.
 */
export async function publishRuntimeFile(options: PublishRuntimeFileOptions): Promise<PublishOutcome> {
  const pid = options.pid ?? process.pid;
  const isAlive = options.isAlive ?? isGatewayAlive;
  const existing = readRuntimeFile(options.home, isAlive);
  if (
    existing.type === "live" &&
    existing.info.pid !== pid &&
    // This gateway listens at `url` now: whatever answers there is not another one.
    existing.info.url !== options.url &&
    (await answers(existing.info.url, options.fetch ?? fetch))
  ) {
    const other = existing.info;
    const warning = `another gateway (pid ${other.pid}) is running with this home folder (${options.home}) at ${other.url}: ${existing.path} keeps naming it, so status, doctor and chat find that one, not this one`;
    options.logger.warn({ otherPid: other.pid, otherUrl: other.url }, warning);
    (options.printWarning ?? ((line) => process.stderr.write(line)))(`WARNING: ${warning}\n`);
    return { type: "kept", path: existing.path, other };
  }
  const port = Number(/:(\d+)\/?$/.exec(options.url)?.[1] ?? Number.NaN);
  try {
    if (!Number.isInteger(port)) throw new Error(`no port in the gateway URL ${options.url}`);
    writeRuntimeFile({
      pid,
      port,
      host: options.host,
      url: options.url,
      configFile: options.configFile ?? null,
      home: options.home,
      version: packageVersion(),
      startedAt: (options.startedAt ?? new Date()).toISOString(),
      ...(options.owner ? { owner: options.owner } : {}),
      ...(pid === process.pid ? identityFields() : {}),
    });
    return { type: "written", path: runtimeFilePath(options.home) };
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    options.logger.warn(
      { err: error, path: runtimeFilePath(options.home) },
      "cannot write the runtime file: status, doctor and chat will look for this gateway at the configured port only",
    );
    return { type: "failed", path: runtimeFilePath(options.home), error };
  }
}

/** This process's identity, as the runtime file records it. */
function identityFields(): Pick<RuntimeInfo, "hostname" | "bootId" | "pidNamespace" | "startTicks"> {
  const self = selfIdentity();
  return {
    hostname: self.host,
    ...(self.bootId ? { bootId: self.bootId } : {}),
    ...(self.pidNamespace ? { pidNamespace: self.pidNamespace } : {}),
    ...(self.startTicks !== null ? { startTicks: self.startTicks } : {}),
  };
}

/** Whether anything answers HTTP at `url` within the probe limit. */
async function answers(url: string, fetchFn: typeof fetch): Promise<boolean> {
  try {
    const res = await fetchFn(`${url}/healthz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

/** The parsed file as a RuntimeInfo, or why it is not one. */
function toRuntimeInfo(value: unknown): RuntimeInfo | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "it is not a JSON object";
  const v = value as Record<string, unknown>;
  const wholeNumber = (x: unknown, max: number) =>
    typeof x === "number" && Number.isInteger(x) && x >= 0 && x <= max;
  if (!wholeNumber(v.pid, 2 ** 32) || v.pid === 0) return `"pid" is ${JSON.stringify(v.pid)}`;
  if (!wholeNumber(v.port, 65_535)) return `"port" is ${JSON.stringify(v.port)}`;
  for (const key of ["host", "url", "home", "version", "startedAt"] as const)
    if (typeof v[key] !== "string") return `"${key}" is ${JSON.stringify(v[key])}`;
  if (v.configFile !== null && typeof v.configFile !== "string")
    return `"configFile" is ${JSON.stringify(v.configFile)}`;
  return {
    pid: v.pid as number,
    port: v.port as number,
    host: v.host as string,
    url: v.url as string,
    configFile: v.configFile as string | null,
    home: v.home as string,
    version: v.version as string,
    startedAt: v.startedAt as string,
    ...(typeof v.owner === "string" && v.owner !== "" ? { owner: v.owner } : {}),
    ...(typeof v.hostname === "string" ? { hostname: v.hostname } : {}),
    ...(typeof v.bootId === "string" ? { bootId: v.bootId } : {}),
    ...(typeof v.pidNamespace === "string" ? { pidNamespace: v.pidNamespace } : {}),
    ...(wholeNumber(v.startTicks, Number.MAX_SAFE_INTEGER) ? { startTicks: v.startTicks as number } : {}),
  };
}
