/**
 * `switchyard doctor`: checks configuration, home folder, database, workspace, the configured
 * provider and channels, and says what is wrong in plain words. Exit 0 when nothing failed.
 */
import { accessSync, constants, existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError, loadConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { chooseProvider, resolveHome } from "../main.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import type { CliOptions } from "./main.js";

type Verdict = "ok" | "warn" | "fail";
interface Check {
  verdict: Verdict;
  what: string;
  detail: string;
}

export async function runDoctor(options: CliOptions): Promise<number> {
  const checks: Check[] = [];
  const add = (verdict: Verdict, what: string, detail: string) => checks.push({ verdict, what, detail });

  let config: Config | undefined;
  try {
    const loaded = loadConfig({
      ...(options.config ? { path: options.config } : {}),
      cwd: process.cwd(),
      env: process.env,
    });
    config = loaded.config;
    add("ok", "config", loaded.file ? `${loaded.file} is valid` : "no switchyard.yaml found; using defaults");
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    add("fail", "config", err.issues.join("; "));
  }

  const home = resolveHome(options.home, process.env, process.cwd());
  try {
    mkdirSync(home, { recursive: true });
    accessSync(home, constants.W_OK);
    add("ok", "home", `${home} is writable`);
  } catch (err) {
    add("fail", "home", `${home} is not writable: ${(err as Error).message}`);
  }

  const dbPath = join(home, "switchyard.db");
  try {
    const store = openSqliteStore({ path: dbPath });
    const version = store.schemaVersion();
    const dead = (await store.outbox.countByState()).dead;
    store.close();
    add(
      dead > 0 ? "warn" : "ok",
      "database",
      `${dbPath} opens (schema v${version})${dead > 0 ? `; ${dead} undelivered replies (see switchyard status)` : ""}`,
    );
  } catch (err) {
    add("fail", "database", (err as Error).message);
  }

  if (config) {
    const workspace = config.agent.workspace
      ? resolve(home, config.agent.workspace)
      : join(home, "workspace");
    add(
      existsSync(join(workspace, "AGENTS.md")) ? "ok" : "warn",
      "workspace",
      existsSync(workspace)
        ? workspace
        : `${workspace} does not exist yet; the gateway creates it from the template on start`,
    );
    const choice = chooseProvider(config, process.env);
    if (choice.simulated) {
      add(
        "warn",
        "provider",
        `no API key for ${choice.provider}: replies will be SIMULATED (set ${choice.provider === "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY"} or providers.${choice.provider}.apiKey)`,
      );
    } else {
      add(...(await probeProvider(choice.provider, choice.apiKey, choice.baseUrl)));
    }
    const enabled = Object.entries(config.channels)
      .filter(([, c]) => c?.enabled === true)
      .map(([name]) => name);
    add(
      enabled.length > 0 ? "ok" : "warn",
      "channels",
      enabled.length > 0 ? enabled.join(", ") : "no channel is enabled",
    );
    const url = `http://${config.gateway.host}:${options.port ?? config.gateway.port}`;
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      add("ok", "gateway", `running at ${url} (${res.ok ? "ready" : "not ready yet"})`);
    } catch {
      add("ok", "gateway", `not running at ${url} (start it with npm start)`);
    }
  }

  const mark: Record<Verdict, string> = { ok: "ok  ", warn: "warn", fail: "FAIL" };
  for (const c of checks) process.stdout.write(`${mark[c.verdict]}  ${c.what.padEnd(10)} ${c.detail}\n`);
  return checks.some((c) => c.verdict === "fail") ? 1 : 0;
}

async function probeProvider(
  provider: "openai" | "anthropic",
  apiKey: string | undefined,
  baseUrl: string | undefined,
): Promise<[Verdict, string, string]> {
  const root = (
    baseUrl ?? (provider === "openai" ? "https://api.openai.com/v1" : "https://api.anthropic.com")
  ).replace(/\/+$/, "");
  const url = provider === "openai" ? `${root}/models` : `${root}/v1/models`;
  const headers: Record<string, string> =
    provider === "openai"
      ? { authorization: `Bearer ${apiKey ?? ""}` }
      : { "x-api-key": apiKey ?? "", "anthropic-version": "2023-06-01" };
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(5_000) });
    if (res.ok) return ["ok", "provider", `${provider} at ${root} accepts the key`];
    if (res.status === 401 || res.status === 403)
      return ["fail", "provider", `${provider} at ${root} rejected the API key (HTTP ${res.status})`];
    return ["warn", "provider", `${provider} at ${root} answered HTTP ${res.status} to a model listing`];
  } catch (err) {
    return ["fail", "provider", `cannot reach ${provider} at ${root}: ${(err as Error).message}`];
  }
}
