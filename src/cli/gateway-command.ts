/**
 * `switchyard gateway`: load config, refuse an unsafe bind, start, run until SIGTERM/SIGINT, then
 * drain and stop. A second signal during the drain exits at once (130 for SIGINT, 143 for SIGTERM).
 */
import { join } from "node:path";
import { ConfigError, loadConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { resolveHome, startGateway } from "../main.js";
import { createLogger } from "../util/logger.js";
import { SecretList } from "../util/redact.js";
import type { CliOptions } from "./main.js";

/** Exit codes for a second signal: 128 + the signal number, as shells report them. */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h === "::1" || /^127(?:\.\d{1,3}){3}$/.test(h);
}

/** Why a non-loopback gateway.host is dangerous, in one sentence (used in the refusal and the warning). */
export function remoteExposureWarning(host: string): string {
  return `gateway.host is "${host}", which is not loopback: the HTTP API (/v1/chat) has no authentication and the agent has file tools, so anyone who can reach this address can drive the agent and read and write its workspace`;
}

/**
 * Every secret value in the configuration (and the provider keys in the environment), so the
 * logger redacts them wherever they appear, whatever their shape: provider API keys, Telegram
 * bot tokens (`channels.telegram.token` and every `channels.telegram.accounts.*.token`) and
 * webhook secrets.
 */
export function configuredSecrets(config: Config, env: NodeJS.ProcessEnv): string[] {
  const values = [
    config.providers.openai.apiKey,
    config.providers.anthropic.apiKey,
    config.gateway.auth.token,
    env.OPENAI_API_KEY,
    env.ANTHROPIC_API_KEY,
  ];
  const telegram = config.channels.telegram;
  if (telegram) {
    values.push(telegram.token, telegram.webhook?.secret);
    for (const account of Object.values(telegram.accounts))
      values.push(account.token, account.webhook?.secret);
  }
  return values.filter((v): v is string => typeof v === "string" && v !== "");
}

/** Runs the daemon; resolves with the exit code after a graceful stop. */
export async function runGatewayCommand(options: CliOptions): Promise<number> {
  const { config, file } = loadConfig({
    ...(options.config ? { path: options.config } : {}),
    cwd: process.cwd(),
    env: process.env,
  });
  const remote = !isLoopbackHost(config.gateway.host);
  if (remote && !config.gateway.allowRemote) {
    throw new ConfigError(file, [
      `${remoteExposureWarning(config.gateway.host)}. Refusing to start: use gateway.host: 127.0.0.1, or set gateway.allowRemote: true if this address is firewalled or behind an authenticating proxy`,
    ]);
  }
  const home = resolveHome(options.home, process.env, process.cwd());
  const secrets = new SecretList();
  for (const secret of configuredSecrets(config, process.env)) secrets.add(secret);
  const logger = createLogger({
    level: options.logLevel ?? config.logging.level,
    format: config.logging.format,
    file: join(home, "logs", "switchyard.log"),
    secrets,
  });
  if (remote) {
    const warning = `${remoteExposureWarning(config.gateway.host)} (allowed by gateway.allowRemote: true)`;
    logger.warn({ host: config.gateway.host }, warning);
    process.stderr.write(`WARNING: ${warning}\n`);
  }
  const running = await startGateway({
    config,
    configFile: file,
    home,
    env: process.env,
    logger,
    ...(options.port !== undefined ? { port: options.port } : {}),
  });
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
        process.exit(SIGNAL_EXIT_CODES[signal]);
      }
      logger.info({ signal }, "shutting down: draining running turns");
      process.stderr.write(
        `switchyard gateway: shutting down, letting running turns finish (up to ${Math.round(config.gateway.drainTimeoutMs / 1000)} s); press Ctrl-C again to exit now\n`,
      );
      running.stop().then(
        () => {
          logger.flush();
          resolve(0);
        },
        (err: unknown) => {
          logger.error({ err }, "shutdown failed");
          logger.flush();
          resolve(1);
        },
      );
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
  process.stderr.write(
    `switchyard gateway listening on ${running.url}${running.simulated ? " — replies are SIMULATED: no model API key is configured (set ANTHROPIC_API_KEY or OPENAI_API_KEY)" : ""}\n` +
      `try: curl -s ${running.url}/v1/chat -d '{"sender":"ann","text":"hi"}'\n`,
  );

  return await stopped;
}
