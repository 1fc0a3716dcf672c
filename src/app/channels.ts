/** The channels of every enabled channel module, each with the access policy its module declares. */
import type { ChannelModules } from "../channels/registry.js";
import type { AccessPolicy, ChannelName } from "../channels/types.js";
import type { Config } from "../config/schema.js";
import type { ChannelDirectory } from "../gateway/channel-directory.js";

/**
 * Builds every enabled channel module's channels into the directory; returns the access policy
 * of each. A channel exists only with the policy its module declares.
 */
export async function createChannels(
  modules: ChannelModules,
  config: Config,
  directory: ChannelDirectory,
  ctx: Parameters<ChannelModules[string]["create"]>[1],
): Promise<Partial<Record<ChannelName, AccessPolicy>>> {
  const access: Partial<Record<string, AccessPolicy>> = {};
  const sections = config.channels as Record<string, unknown>;
  for (const [name, module] of Object.entries(modules)) {
    const settings = module.settings.parse(sections[name]);
    if (!module.enabled(settings)) continue;
    const set = await module.create(settings as NonNullable<typeof settings>, ctx);
    for (const channel of set.channels) directory.add(channel);
    access[name] = set.access;
  }
  return access;
}
