/**
 * `switchyard gateway`: load config, refuse an unsafe bind, start, run until SIGTERM/SIGINT, then
 * drain and stop. A second signal during the drain exits at once (130 for SIGINT, 143 for SIGTERM).
 */
import { LogTail } from "../admin/log-tail.js";
import { isLoopbackHost } from "../util/loopback.js";
import { join } from "node:path";
import { ensureWritableFolder, resolveHome } from "../config/home.js";
import { loadConfig } from "../config/load.js";
import { resolveProviders } from "../config/provider-choice.js";
import type { Config } from "../config/schema.js";
import { ConfigError } from "../util/config-error.js";
import type { Logger } from "../util/logger.js";
import { createLogger } from "../util/logger.js";
import { SecretList } from "../util/redact.js";
import type { CliOptions } from "./main.js";
import { publishRuntimeFile, removeRuntimeFile } from "./runtime-file.js";

/** Exit codes for a second signal: 128 + the signal number, as shells report them. */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * Why a non-loopback gateway.host is dangerous, in one sentence (used in the refusal and the
 * warning); with a token set, only the token stands between the network and the agent.
 */
export function remoteExposureWarning(host: string, tokenSet = false): string {
  return tokenSet
    ? `gateway.host is "${host}", which is not loopback: anyone who can reach this address and has gateway.auth.token can drive the agent, which has file tools`
    : `gateway.host is "${host}", which is not loopback: the HTTP API (/v1/chat) has no authentication and the agent has file tools, so anyone who can reach this address can drive the agent and read and write its workspace`;
}

/**
 * Every secret value in the configuration (and the provider keys in the environment), so the
 * logger redacts them wherever they appear, whatever their shape: provider API keys, Telegram
 * bot tokens (`channels.telegram.token` and every `channels.telegram.accounts.*.token`) and
 * webhook secrets.
 */
export function configuredSecrets(config: Config, env: NodeJS.ProcessEnv): string[] {
  const values: Array<string | undefined> = [
    config.gateway.auth.token,
    env.OPENAI_API_KEY,
    env.ANTHROPIC_API_KEY,
  ];
  // Every auth profile's key, of every provider (built-in and named).
  for (const provider of resolveProviders(config, env))
    for (const profile of provider.profiles) if (profile.apiKey !== "no-key") values.push(profile.apiKey);
  const telegram = config.channels.telegram;
  if (telegram) {
    values.push(telegram.token, telegram.webhook?.secret);
    for (const account of Object.values(telegram.accounts))
      values.push(account.token, account.webhook?.secret);
  }
  return [...new Set(values.filter((v): v is string => typeof v === "string" && v !== ""))];
}

/**
 * What starts the gateway: the composition root's `startGateway`, handed to the CLI by the entry
 * point (src/main.ts), so the CLI never imports the composition root.
 */
export type GatewayStarter = (options: {
  config: Config;
  configFile: string | undefined;
  home: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  secrets: SecretList;
  /** The logger's tap: the control page's Logs view. */
  logTail?: LogTail;
  port?: number;
}) => Promise<{ url: string; owner: string; simulated: boolean; stop(): Promise<void> }>;

/** Runs the daemon; resolves with the exit code after a graceful stop. */
export async function runGatewayCommand(options: CliOptions, startGateway: GatewayStarter): Promise<number> {
  const { config, file } = loadConfig({
    ...(options.config ? { path: options.config } : {}),
    cwd: process.cwd(),
    env: process.env,
  });
  const remote = !isLoopbackHost(config.gateway.host);
  const { auth } = config.gateway;
  if (remote && !config.gateway.allowRemote) {
    throw new ConfigError(file, [
      `${remoteExposureWarning(config.gateway.host, auth.token !== undefined)}. Refusing to start: use gateway.host: 127.0.0.1, or set gateway.allowRemote: true if this address is firewalled or behind an authenticating proxy`,
    ]);
  }
  if (remote && auth.token === undefined && auth.mode !== "none") {
    throw new ConfigError(file, [
      `gateway.auth.token: not set, but gateway.host is "${config.gateway.host}" (not loopback): set gateway.auth.token (e.g. \${SWITCHYARD_TOKEN}) so every /v1 request needs it, or gateway.auth.mode: none to run without authentication behind a proxy that authenticates`,
    ]);
  }
  const home = resolveHome(options.home, process.env, process.cwd());
  // Before the log file opens in it: a bad home folder is one plain line, exit 2.
  ensureWritableFolder(home, "home folder", "choose another with --home or SWITCHYARD_HOME");
  const secrets = new SecretList();
  for (const secret of configuredSecrets(config, process.env)) secrets.add(secret);
  // The control page's Logs view: the last lines, kept in memory.
  const logTail = new LogTail();
  const logger = createLogger({
    level: options.logLevel ?? config.logging.level,
    tap: logTail,
    format: config.logging.format,
    file: join(home, "logs", "switchyard.log"),
    maxFileMb: config.logging.maxFileMb,
    maxFiles: config.logging.maxFiles,
    secrets,
  });
  if (remote) {
    const warning = `${remoteExposureWarning(config.gateway.host, auth.token !== undefined)} (allowed by gateway.allowRemote: true${auth.token === undefined ? " and gateway.auth.mode: none" : ""})`;
    logger.warn({ host: config.gateway.host }, warning);
    process.stderr.write(`WARNING: ${warning}\n`);
  }
  let running: Awaited<ReturnType<GatewayStarter>>;
  try {
    running = await startGateway({
      config,
      configFile: file,
      home,
      env: process.env,
      logger,
      logTail,
      secrets,
      ...(options.port !== undefined ? { port: options.port } : {}),
    });
  } catch (err) {
    // Everything it opened is closed again: the caller prints one line and the process exits
    // (2 for configuration, 1 otherwise) so a service manager sees the failure. A failure with a
    // stable code (a port in use, a damaged database) is logged as its one line, no stack.
    const code = (err as { code?: unknown }).code;
    if (err instanceof Error && typeof code === "string")
      logger.error({ code }, `gateway failed to start: ${err.message}`);
    else logger.error({ err }, "gateway failed to start");
    logger.flush();
    throw err;
  }
  // Handlers go in before the banner: whoever reads "listening on" may signal at once, and a
  // signal with no handler kills the process outright.
  const stopped = new Promise<number>((resolve) => {
    let signals = 0;
    const onSignal = (signal: "SIGINT" | "SIGTERM") => {
      signals++;
      if (signals > 1) {
        // The open server and the running turns would keep the process alive: leave now.
        logger.warn({ signal }, "second signal: exiting now without waiting for running turns");
        logger.flush();
        process.stderr.write(`switchyard gateway: ${signal} again, exiting now\n`);
        removeRuntimeFile(home, process.pid);
        process.exit(SIGNAL_EXIT_CODES[signal]);
      }
      logger.info({ signal }, "shutting down: draining running turns");
      process.stderr.write(
        `switchyard gateway: shutting down, letting running turns finish (up to ${Math.round(config.gateway.drainTimeoutMs / 1000)} s); press Ctrl-C again to exit now\n`,
      );
      // The runtime file goes once nothing listens any more, whether the stop went well or not.
      running.stop().then(
        () => {
          removeRuntimeFile(home, process.pid);
          logger.flush();
          resolve(0);
        },
        (err: unknown) => {
          removeRuntimeFile(home, process.pid);
          logger.error({ err }, "shutdown failed");
          logger.flush();
          resolve(1);
        },
      );
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
  // Before the banner: whoever reads "listening on" finds the runtime file (status, doctor, chat).
  await publishRuntimeFile({
    home,
    url: running.url,
    host: config.gateway.host,
    configFile: file,
    owner: running.owner,
    logger,
  });
  process.stderr.write(
    `switchyard gateway listening on ${running.url}${running.simulated ? " — replies are SIMULATED: no model API key is configured (set ANTHROPIC_API_KEY or OPENAI_API_KEY)" : ""}\n` +
      `try: curl -s ${running.url}/v1/chat -d '{"sender":"ann","text":"hi"}'\n`,
  );

  return await stopped;
}
