/** `switchyard gateway`: load config, start, run until SIGTERM/SIGINT, then drain and stop. */
import { join } from "node:path";
import { loadConfig } from "../config/load.js";
import { resolveHome, startGateway } from "../main.js";
import { createLogger } from "../util/logger.js";
import { SecretList } from "../util/redact.js";
import type { CliOptions } from "./main.js";

export async function runGatewayCommand(options: CliOptions): Promise<number> {
  const { config, file } = loadConfig({
    ...(options.config ? { path: options.config } : {}),
    cwd: process.cwd(),
    env: process.env,
  });
  const home = resolveHome(options.home, process.env, process.cwd());
  const secrets = new SecretList();
  secrets.add(config.providers.openai.apiKey);
  secrets.add(config.providers.anthropic.apiKey);
  secrets.add(process.env.OPENAI_API_KEY);
  secrets.add(process.env.ANTHROPIC_API_KEY);
  const logger = createLogger({
    level: options.logLevel ?? config.logging.level,
    format: config.logging.format,
    file: join(home, "logs", "switchyard.log"),
    secrets,
  });
  const running = await startGateway({
    config,
    configFile: file,
    home,
    env: process.env,
    logger,
    ...(options.port !== undefined ? { port: options.port } : {}),
  });
  process.stderr.write(
    `switchyard gateway listening on ${running.url}${running.simulated ? " — replies are SIMULATED: no model API key is configured (set ANTHROPIC_API_KEY or OPENAI_API_KEY)" : ""}\n` +
      `try: curl -s ${running.url}/v1/chat -d '{"sender":"ann","text":"hi"}'\n`,
  );

  return await new Promise<number>((resolve) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      if (signals > 1) {
        logger.warn({ signal }, "second signal: exiting now");
        logger.flush();
        resolve(130);
        return;
      }
      logger.info({ signal }, "shutting down: draining running turns");
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
}
