/**
 * The channel accounts a configuration turns on (`telegram:default`, `slack:work`, …), read from
 * the settings alone: the CLI checks a job's delivery target against them without starting
 * anything.
 */
import type { ChannelModules } from "../channels/registry.js";
import type { Config } from "../config/schema.js";

/** `<channel>:<account>` of every enabled channel account in `config`. */
export function configuredAccounts(config: Config, modules: ChannelModules): Set<string> {
  const out = new Set<string>();
  const sections = config.channels as Record<string, unknown>;
  for (const [name, module] of Object.entries(modules)) {
    const settings = module.settings.parse(sections[name]);
    if (!module.enabled(settings)) continue;
    const ids = module.accounts ? module.accounts(settings as NonNullable<typeof settings>) : ["default"];
    for (const id of ids) out.add(`${name}:${id}`);
  }
  return out;
}
