/**
 * The platform channels the gateway can run, in one map: each factory turns its config section
 * into one channel per bot account. Platform libraries are imported by the adapters on start,
 * so an unconfigured platform costs nothing.
 */
import type { TelegramSettings } from "../config/schema.js";
import type { Logger } from "../util/logger.js";
import type { RouteRegistrar } from "./http/http-channel.js";
import { TelegramChannel } from "./telegram/telegram-channel.js";
import type { Channel } from "./types.js";

/** What a factory gets besides its settings. */
export interface ChannelFactoryContext {
  server: RouteRegistrar;
  workspaceDir: string;
  commands: ReadonlyArray<{ command: string; description: string }>;
  logger: Logger;
}

export type ChannelFactory<S> = (settings: S, ctx: ChannelFactoryContext) => Channel[];

function telegram(settings: TelegramSettings, ctx: ChannelFactoryContext): Channel[] {
  const accounts = {
    ...(settings.token ? { default: { token: settings.token } } : {}),
    ...settings.accounts,
  };
  return Object.entries(accounts).map(([accountId, account]) => {
    const a: {
      token: string;
      apiRoot?: string;
      mode?: "polling" | "webhook";
      webhook?: TelegramSettings["webhook"];
    } = account;
    const mode = a.mode ?? settings.mode;
    const webhook = a.webhook ?? settings.webhook;
    return new TelegramChannel({
      accountId,
      token: a.token,
      apiRoot: (a.apiRoot ?? settings.apiRoot).replace(/\/+$/, ""),
      mode,
      ...(mode === "webhook" && webhook
        ? {
            webhook: {
              url: webhook.url,
              secret: webhook.secret,
              path: webhook.path ?? `/telegram/${accountId}`,
            },
          }
        : {}),
      server: ctx.server,
      mentionPatterns: settings.mentionPatterns,
      streaming: settings.streaming,
      mediaMaxBytes: Math.round(settings.mediaMaxMb * 1_048_576),
      workspaceDir: ctx.workspaceDir,
      pollTimeoutSeconds: settings.pollTimeoutSeconds,
      commands: ctx.commands,
      logger: ctx.logger.child({ name: "channel.telegram", account: accountId }),
    });
  });
}

/** Platform channel factories by config key. */
export const channelFactories = { telegram } satisfies Record<string, ChannelFactory<never>>;
