/**
 * The chat platforms a chaos run can drive, one factory each; nothing else switches on their names.
 */
import type { ChannelName, ChatPlatform } from "../types.js";
import { discordPlatform } from "./discord.js";
import { slackPlatform } from "./slack.js";
import { telegramPlatform } from "./telegram.js";

/** Builds a platform; `now` is the driver's clock in ms. */
export type PlatformFactory = (now: () => number) => ChatPlatform;

/** Every platform by channel name. */
export const platforms = {
  telegram: telegramPlatform,
  slack: slackPlatform,
  discord: discordPlatform,
} satisfies Record<ChannelName, PlatformFactory>;

/** The channel names, for flag checking. */
export const channelNames = Object.keys(platforms) as ChannelName[];
