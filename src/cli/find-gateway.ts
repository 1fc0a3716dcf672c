/**
 * Where the running gateway is, and which token to send it, for the client commands (`status`,
 * `doctor`, `chat`). One order everywhere: `--url`, `--port` (host from the config), the runtime
 * file in the home folder, then the config's `gateway.port`.
 */
import { ConfigError } from "../util/config-error.js";
import { existsSync } from "node:fs";
import { loadConfig, parseConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { resolveHome } from "../config/home.js";
import type { CliOptions } from "./main.js";
import { type RuntimeFileState, type RuntimeInfo, isGatewayAlive, readRuntimeFile } from "./runtime-file.js";

/** How the gateway's address was found: `--url`, `--port`, the runtime file, or `gateway.port`. */
export type GatewaySource = "url-flag" | "port-flag" | "runtime-file" | "config";

/** Which configuration file a client command reads, and why that one. */
export type ConfigOrigin = "config-flag" | "runtime-file" | "lookup";

/** The configuration a client command reads: the one the gateway runs with, as far as known. */
export interface ClientConfig {
  /** The validated configuration; undefined when it could not be loaded (see `problem`). */
  config: Config | undefined;
  /** The file read; undefined when the defaults apply (or when loading failed before one was chosen). */
  file: string | undefined;
  /** Why the configuration could not be loaded. */
  problem: ConfigError | undefined;
  /** `--config`; the file named in the runtime file; or the usual lookup (SWITCHYARD_CONFIG, ./switchyard.yaml). */
  origin: ConfigOrigin;
  /** With `lenientEnv`: the `${VAR}`s this shell lacks (see LoadConfigOptions.lenientEnv); else empty. */
  unresolved: string[];
}

/** A gateway to talk to (it may or may not answer there). */
export interface FoundGateway {
  /** Base URL, no trailing slash. */
  url: string;
  /** `gateway.auth.token` of {@link FoundGateway.clientConfig}, sent as a bearer token. */
  token: string | undefined;
  source: GatewaySource;
  /** The home folder looked in (`--home`, SWITCHYARD_HOME, ~/.switchyard). */
  home: string;
  /** What the home folder's runtime file says (a stale one is reported, never used). */
  runtime: RuntimeFileState;
  clientConfig: ClientConfig;
}

/** I/O seams of {@link findGateway}; each defaults to the real process. */
export interface FindGatewayDeps {
  /** Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Default `process.cwd()`. */
  cwd?: string;
  /** Default {@link isGatewayAlive}. */
  isAlive?: (info: RuntimeInfo) => boolean;
}

/**
 * Finds the gateway: `--url`; else `--port` on the config's host; else the runtime file of the
 * home folder when its process is alive; else the config's `gateway.host` and `gateway.port`.
 * The token comes from {@link loadClientConfig}. Throws the ConfigError only when the address
 * itself depends on a configuration that cannot be loaded; otherwise a bad configuration is
 * reported in `clientConfig.problem` and no token is sent.
 */
export function findGateway(options: CliOptions, deps: FindGatewayDeps = {}): FoundGateway {
  const env = deps.env ?? process.env;
  const cwd = deps.cwd ?? process.cwd();
  const home = resolveHome(options.home, env, cwd);
  const runtime = readRuntimeFile(home, deps.isAlive ?? isGatewayAlive);
  const clientConfig = loadClientConfig(options, runtime, { env, cwd });
  const base = { home, runtime, clientConfig, token: clientConfig.config?.gateway.auth.token };
  if (options.url) return { ...base, url: options.url.replace(/\/+$/, ""), source: "url-flag" };
  if (options.port !== undefined) {
    const host = clientConfig.config?.gateway.host ?? "127.0.0.1";
    return { ...base, url: `http://${hostForUrl(host)}:${options.port}`, source: "port-flag" };
  }
  if (runtime.type === "live") {
    const { host, port } = runtime.info;
    return { ...base, url: `http://${hostForUrl(host)}:${port}`, source: "runtime-file" };
  }
  const { config, problem } = clientConfig;
  if (!config) throw problem ?? new ConfigError(undefined, ["no configuration"]);
  return {
    ...base,
    url: `http://${hostForUrl(config.gateway.host)}:${config.gateway.port}`,
    source: "config",
  };
}

/**
 * The configuration the gateway runs with, as far as a client can know: `--config`; else the
 * file named in the home folder's runtime file (live or stale), if it still exists (a runtime
 * file naming no file means the gateway ran on the defaults); else the usual lookup
 * (SWITCHYARD_CONFIG, then ./switchyard.yaml, else the defaults). Never throws a ConfigError.
 * `lenientEnv` (default false): read-only commands go on without the `${VAR}`s this shell lacks.
 */
export function loadClientConfig(
  options: Pick<CliOptions, "config">,
  runtime: RuntimeFileState,
  deps: { env: NodeJS.ProcessEnv; cwd: string; lenientEnv?: boolean },
): ClientConfig {
  const recorded = runtime.type === "live" || runtime.type === "stale" ? runtime.info.configFile : undefined;
  let origin: ConfigOrigin = "lookup";
  let path: string | undefined;
  if (options.config) {
    origin = "config-flag";
    path = options.config;
  } else if (recorded === null) {
    return {
      config: parseConfig({}, undefined),
      file: undefined,
      problem: undefined,
      origin: "runtime-file",
      unresolved: [],
    };
  } else if (recorded !== undefined && existsSync(recorded)) {
    origin = "runtime-file";
    path = recorded;
  }
  try {
    const loaded = loadConfig({
      ...(path ? { path } : {}),
      cwd: deps.cwd,
      env: deps.env,
      lenientEnv: deps.lenientEnv ?? false,
    });
    const { config, file, unresolved } = loaded;
    return { config, file, problem: undefined, origin, unresolved };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { config: undefined, file: err.file, problem: err, origin, unresolved: [] };
  }
}

/**
 * How the gateway was found, as a phrase that fits in parentheses: "given with --url", "found in
 * <home>/gateway.json, pid 4242", "from gateway.port in <file>", ...
 */
export function describeSource(found: FoundGateway): string {
  switch (found.source) {
    case "url-flag":
      return "given with --url";
    case "port-flag":
      return "given with --port";
    case "runtime-file":
      return found.runtime.type === "live"
        ? `found in ${found.runtime.path}, pid ${found.runtime.info.pid}`
        : "found in the runtime file";
    case "config": {
      const file = found.clientConfig.file;
      return file ? `from gateway.port in ${file}` : "from the default gateway.port, with no config file";
    }
  }
}

/** A sentence about a runtime file that is ignored (stale or invalid), else undefined. */
export function ignoredRuntimeNote(runtime: RuntimeFileState): string | undefined {
  if (runtime.type === "stale")
    return `a gateway (pid ${runtime.info.pid}, started ${runtime.info.startedAt}) stopped without cleaning up ${runtime.path}; ignoring it`;
  if (runtime.type === "invalid") return `ignoring ${runtime.path}: ${runtime.reason}`;
  return undefined;
}

/** A wildcard bind address is reached through loopback; an IPv6 literal needs brackets in a URL. */
export function hostForUrl(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
