/** Where the running gateway is, for client commands (chat, status). */
import { loadConfig } from "../config/load.js";
import type { CliOptions } from "./main.js";

export function gatewayUrl(options: CliOptions): string {
  if (options.url) return options.url.replace(/\/+$/, "");
  let port = options.port;
  let host = "127.0.0.1";
  if (port === undefined) {
    const { config } = loadConfig({
      ...(options.config ? { path: options.config } : {}),
      cwd: process.cwd(),
      env: process.env,
    });
    port = config.gateway.port;
    host = config.gateway.host === "0.0.0.0" ? "127.0.0.1" : config.gateway.host;
  }
  return `http://${host}:${port}`;
}
