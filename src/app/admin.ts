/**
 * The control page and its admin API, wired to the running gateway: the page's files from the
 * package's `dist/ui`, the API's sources from the gateway's parts, the access policies from the
 * channels' configuration.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AdminApi } from "../admin/admin-api.js";
import { serveAdmin } from "../admin/admin-routes.js";
import type { AdminSources } from "../admin/sources.js";
import { UiAssets } from "../admin/ui-assets.js";
import { type ChannelModules, channelModules } from "../channels/registry.js";
import type { StartGatewayOptions } from "./gateway-types.js";
import type { Config } from "../config/schema.js";
import type { GatewayHttpServer } from "../http/server.js";

/**
 * The built page's folder: `dist/ui` of the package this module belongs to (found by walking up
 * to the folder holding package.json and workspace/, so it works from src/ and dist/ alike).
 */
export function defaultUiDir(): string | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, "package.json")) && existsSync(path.join(dir, "workspace")))
      return path.join(dir, "dist", "ui");
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Each configured channel account's DM policy and allowlist, as the Access view shows them. */
export function accessPolicies(config: Config, modules: ChannelModules): AdminSources["policies"] {
  const out: AdminSources["policies"] = [];
  const sections = config.channels as Record<string, unknown>;
  for (const [name, module] of Object.entries(modules)) {
    const settings = module.settings.parse(sections[name]);
    if (!module.enabled(settings)) continue;
    const ids = module.accounts ? module.accounts(settings as NonNullable<typeof settings>) : ["default"];
    const base = (settings ?? {}) as Record<string, unknown>;
    const accounts = (base.accounts ?? {}) as Record<string, Record<string, unknown> | undefined>;
    for (const accountId of ids) {
      const own = accounts[accountId] ?? {};
      const dmPolicy = own.dmPolicy ?? base.dmPolicy;
      const allowFrom = own.allowFrom ?? base.allowFrom;
      out.push({
        channel: name,
        accountId,
        dmPolicy: typeof dmPolicy === "string" ? dmPolicy : "open (a local channel)",
        allowFrom: Array.isArray(allowFrom) ? allowFrom.map(String) : [],
      });
    }
  }
  return out;
}

/** What the control page takes from the gateway's configuration and start options. */
type PageOptions = Pick<StartGatewayOptions, "channelModules" | "logTail" | "uiDir">;

/** Registers `/v1/admin/…` and `/ui/` on the gateway's server. */
export function serveControlPage(
  server: GatewayHttpServer,
  config: Config,
  options: PageOptions,
  live: Omit<AdminSources, "agentId" | "chain" | "policies" | "logTail">,
): AdminApi {
  const api = new AdminApi({
    ...live,
    agentId: config.agent.id,
    chain: [config.agent.model, ...config.agent.fallbacks],
    policies: accessPolicies(config, options.channelModules ?? channelModules),
    ...(options.logTail ? { logTail: options.logTail } : {}),
  });
  const uiDir = options.uiDir ?? defaultUiDir();
  serveAdmin(server, api, {
    tokenRequired: config.gateway.auth.token !== undefined,
    ...(uiDir ? { ui: new UiAssets(path.resolve(uiDir)) } : {}),
  });
  return api;
}
