/**
 * Every channel module, in one map keyed by its `channels.<name>` config key: the only place
 * that names the platforms. Adding one is a folder exporting a ChannelModule and a line here.
 * Modules import their platform SDK lazily, so an unconfigured platform costs nothing.
 */
import { discordModule } from "./discord/module.js";
import { consoleModule, httpModule } from "./http/module.js";
import { slackModule } from "./slack/module.js";
import { telegramModule } from "./telegram/module.js";
import type { ChannelModule, ChannelName } from "./types.js";

/** The channel modules by name. */
export const channelModules = {
  http: httpModule,
  console: consoleModule,
  telegram: telegramModule,
  slack: slackModule,
  discord: discordModule,
} satisfies Partial<Record<ChannelName, ChannelModule>>;

/** A set of channel modules (the registry, or the registry plus a test's). */
export type ChannelModules = Readonly<Record<string, ChannelModule>>;
