/**
 * `switchyard doctor`: checks configuration, home folder, database, workspace, every configured
 * provider (saying which one agent.model uses), the exec tool's sandbox, every configured channel (Telegram tokens are
 * tried with getMe) and the running gateway (found like `status` finds it, token included), and
 * says what is wrong in plain words. Exit 0 when nothing failed. The configuration checked is the
 * one the gateway runs with, as far as known: --config, else the runtime file's, else the lookup.
 * Secrets are never printed: every line goes through the same redaction as the logs. Doctor
 * only looks: it creates no folder and no database, and upgrades nothing.
 */
import { ConfigError } from "../util/config-error.js";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

import { chooseProvider, providerKeyEnv, resolveProviders } from "../config/provider-choice.js";
import type { Config } from "../config/schema.js";
import { type ChannelModules, channelModules } from "../channels/registry.js";
import { providerModules } from "../harness/providers/registry.js";
import { resolveHome } from "../config/home.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import { StoreError } from "../store/store-error.js";
import { SecretList } from "../util/redact.js";
import {
  type ClientConfig,
  type FoundGateway,
  describeSource,
  findGateway,
  loadClientConfig,
  ignoredRuntimeNote,
} from "./find-gateway.js";
import { GatewayRequestError, requestGateway } from "./gateway-client.js";
import { isLoopbackHost } from "../util/loopback.js";
import { configuredSecrets, remoteExposureWarning } from "./gateway-command.js";
import type { CliOptions } from "./main.js";
import { readRuntimeFile } from "./runtime-file.js";

import { type Check, type Verdict, checkExec, checkMcp } from "./doctor-tools.js";

/** How long each network probe of a provider or Telegram may take. */
const PROBE_TIMEOUT_MS = 5_000;

/** How long the running gateway (on this machine, as a rule) may take to answer. */
const GATEWAY_PROBE_TIMEOUT_MS = 2_000;

/** Runs every check, prints one line each, returns 1 if any failed. */
export async function runDoctor(options: CliOptions): Promise<number> {
  const checks: Check[] = [];
  const add = (verdict: Verdict, what: string, detail: string) => checks.push({ verdict, what, detail });
  const env = process.env;
  const secrets = new SecretList();

  const home = resolveHome(options.home, env, process.cwd());
  const runtime = readRuntimeFile(home);
  const loaded = loadClientConfig(options, runtime, { env, cwd: process.cwd() });
  const config = loaded.config;
  if (config) {
    for (const secret of configuredSecrets(config, env)) secrets.add(secret);
    add("ok", "config", describeConfig(loaded));
  } else if (loaded.problem) {
    add("fail", "config", loaded.problem.issues.join("; "));
  }

  const homeCheck = checkHome(home);
  checks.push(homeCheck);
  if (config?.store.engine === "postgres" && config.store.url !== undefined)
    checks.push(...(await checkPostgres(config.store.url)));
  else if (homeCheck.verdict === "ok") checks.push(...(await checkDatabase(join(home, "switchyard.db"))));

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
    for (const check of await checkProviders(config, env)) checks.push(check);
    checks.push(await checkExec(config, env));
    // The same discovery as status and chat; the configuration is already loaded, so it cannot throw.
    const found = findGateway(options);
    for (const check of await checkChannels(config, options, found)) checks.push(check);
    checks.push(...(await checkMcp(config, loaded.file, workspace, env)));
    checks.push(...(await checkGateway(config, found)));
  }

  const mark: Record<Verdict, string> = { ok: "ok  ", warn: "warn", fail: "FAIL" };
  for (const c of checks) {
    process.stdout.write(secrets.redact(`${mark[c.verdict]}  ${c.what.padEnd(10)} ${c.detail}\n`));
  }
  return checks.some((c) => c.verdict === "fail") ? 1 : 0;
}

/** The home folder exists and is writable; doctor never creates it (the gateway does). */
function checkHome(home: string): Check {
  if (!existsSync(home))
    return {
      verdict: "fail",
      what: "home",
      detail: `${home} does not exist (the gateway creates it on its first start; or pass --home DIR)`,
    };
  try {
    if (!statSync(home).isDirectory())
      return { verdict: "fail", what: "home", detail: `${home} is not a folder` };
    accessSync(home, constants.W_OK);
    return { verdict: "ok", what: "home", detail: `${home} is writable` };
  } catch (err) {
    return { verdict: "fail", what: "home", detail: `${home} is not writable: ${(err as Error).message}` };
  }
}

/** The database opens read-only (nothing is created or upgraded); its dead replies and rejected keys. */
async function checkDatabase(dbPath: string): Promise<Check[]> {
  if (!existsSync(dbPath))
    return [
      {
        verdict: "warn",
        what: "database",
        detail: `no database at ${dbPath} yet (the gateway creates it on its first start)`,
      },
    ];
  try {
    const store = openSqliteStore({ path: dbPath, readonly: true });
    try {
      const version = store.schemaVersion();
      const dead = (await store.outbox.countByState()).dead;
      const authStates = await store.authProfiles.list();
      const more = dead > 0 ? `; ${dead} undelivered replies (see switchyard status)` : "";
      return [
        {
          verdict: dead > 0 ? "warn" : "ok",
          what: "database",
          detail: `${dbPath} opens (schema v${version})${more}`,
        },
        ...authProfileWarnings(authStates, Date.now()),
      ];
    } finally {
      await store.close();
    }
  } catch (err) {
    if (err instanceof StoreError && err.code === "read_only")
      return [
        {
          verdict: "warn",
          what: "database",
          detail: `${dbPath} has an older schema; the gateway upgrades it on its next start`,
        },
      ];
    return [{ verdict: "fail", what: "database", detail: (err as Error).message }];
  }
}

/**
 * The PostgreSQL store (`store.engine: postgres`): it connects, its server is version 13 or
 * newer, and its schema version against this binary's — read without migrating anything.
 */
async function checkPostgres(url: string): Promise<Check[]> {
  const { PgDb } = await import("../store/postgres/pg-db.js");
  const { PG_SCHEMA_VERSION, pgSchemaVersion } = await import("../store/postgres/pg-migrations.js");
  const { MIN_SERVER_VERSION } = await import("../store/postgres/open-pg-store.js");
  const db = new PgDb({ url, poolSize: 1 });
  try {
    const server = await db.row<{ num: number; v: string }>(
      "SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS v",
    );
    const major = Math.floor((server?.num ?? 0) / 10_000);
    const version = (server?.v ?? "").split(" ")[0];
    if (major < MIN_SERVER_VERSION)
      return [
        {
          verdict: "fail",
          what: "database",
          detail: `PostgreSQL ${db.label} runs server ${version}; switchyard needs ${MIN_SERVER_VERSION} or newer`,
        },
      ];
    const schema = await pgSchemaVersion(db);
    const where = `PostgreSQL ${db.label} (server ${version})`;
    if (schema > PG_SCHEMA_VERSION)
      return [
        {
          verdict: "fail",
          what: "database",
          detail: `${where} is at schema v${schema}, newer than this switchyard knows (v${PG_SCHEMA_VERSION}): upgrade switchyard`,
        },
      ];
    if (schema < PG_SCHEMA_VERSION)
      return [
        {
          verdict: "warn",
          what: "database",
          detail: `${where} is at schema v${schema}; the gateway migrates it to v${PG_SCHEMA_VERSION} on start (or switchyard db migrate)`,
        },
      ];
    return [{ verdict: "ok", what: "database", detail: `${where} connects (schema v${schema})` }];
  } catch (err) {
    return [{ verdict: "fail", what: "database", detail: (err as Error).message }];
  } finally {
    await db.close();
  }
}

/**
 * One line per auth profile of every configured provider, each key probed with a model listing;
 * the models agent.model and agent.fallbacks use are named, and a primary without a key is a
 * warning (replies would be simulated). Keys are never printed: where each comes from is.
 */
async function checkProviders(config: Config, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const checks: Check[] = [];
  const choice = chooseProvider(config, env);
  const primary = choice.chain[0]?.provider ?? "";
  if (config.agent.model.startsWith("simulator/")) {
    checks.push({
      verdict: "ok",
      what: "provider",
      detail: `agent.model is ${config.agent.model}: replies are SIMULATED by the built-in model simulator`,
    });
  } else if (choice.simulated) {
    const keyHint =
      primary === "anthropic" || primary === "openai" ? `set ${providerKeyEnv(primary)} or ` : "";
    checks.push({
      verdict: "warn",
      what: "provider",
      detail: `no API key for ${primary}: replies will be SIMULATED (agent.model is ${config.agent.model}; ${keyHint}providers.${primary}.apiKey or profiles)`,
    });
  }
  for (const s of choice.skipped) {
    checks.push({ verdict: "warn", what: "provider", detail: `fallback ${s.ref} is left out: ${s.reason}` });
  }
  const used = new Map<string, string[]>();
  if (!choice.simulated)
    for (const e of choice.chain) used.set(e.provider, [...(used.get(e.provider) ?? []), e.ref]);
  const probes = resolveProviders(config, env).flatMap((provider) =>
    provider.profiles.map(async (profile): Promise<Check> => {
      const refs = used.get(provider.name);
      const role = refs ? `used by ${refs.join(", ")}` : "configured, not in the model chain";
      const { verdict, detail } = await providerModules[provider.type].probe({
        apiKey: profile.apiKey,
        baseUrl: provider.baseUrl,
        timeoutMs: PROBE_TIMEOUT_MS,
      });
      // A provider the chain does not use cannot break replies, and one profile of several
      // failing is covered by the others: both are warnings.
      const covered = !refs || provider.profiles.length > 1;
      return {
        verdict: verdict === "fail" && covered ? "warn" : verdict,
        what: "provider",
        detail: `${provider.name}:${profile.id} (${role}; key from ${profile.source}): ${detail}`,
      };
    }),
  );
  for (const check of await Promise.all(probes)) checks.push(check);
  return checks;
}

/** A warning per auth profile whose key was rejected (cooling for `auth`) or out of quota. */
export function authProfileWarnings(
  states: ReadonlyArray<{
    provider: string;
    profileId: string;
    cooldownUntil: number | null;
    cooldownReason: string | null;
  }>,
  now: number,
): Check[] {
  return states
    .filter(
      (s) => (s.cooldownUntil ?? 0) > now && (s.cooldownReason === "auth" || s.cooldownReason === "billing"),
    )
    .map((s) => ({
      verdict: "warn" as const,
      what: "auth",
      detail: `${s.provider}:${s.profileId} ${s.cooldownReason === "auth" ? "had its key rejected" : "is out of credit or quota"}; cooling until ${new Date(s.cooldownUntil ?? 0).toISOString()} (switchyard auth status; auth reset ${s.provider} ${s.profileId} after fixing it)`,
    }));
}

/** Which configuration file was checked, and why that one. */
function describeConfig(loaded: ClientConfig): string {
  if (loaded.origin === "runtime-file")
    return loaded.file
      ? `${loaded.file} is valid (the running gateway's, from its runtime file)`
      : "the gateway in this home runs on the defaults (its runtime file names no config file)";
  return loaded.file ? `${loaded.file} is valid` : "no switchyard.yaml found; using defaults";
}

/** One summary line, then where HTTP and console listen and whether each Telegram bot answers. */
async function checkChannels(config: Config, options: CliOptions, found: FoundGateway): Promise<Check[]> {
  // Where it binds, as configured (0.0.0.0 stays 0.0.0.0: that is the point of saying it).
  const host = config.gateway.host.includes(":")
    ? `[${config.gateway.host.replace(/^\[|\]$/g, "")}]`
    : config.gateway.host;
  // A running gateway's real port (it may have been started with --port) beats the configured one.
  const runningPort = found.runtime.type === "live" ? found.runtime.info.port : undefined;
  const baseUrl = `http://${host}:${options.port ?? runningPort ?? config.gateway.port}`;
  const sections = config.channels as Record<string, unknown>;
  const enabled = Object.entries(channelModules as ChannelModules).flatMap(([name, module]) => {
    const settings = module.settings.parse(sections[name]);
    return module.enabled(settings) ? [{ name, module, settings }] : [];
  });
  const checks: Check[] = [
    {
      verdict: enabled.length > 0 ? "ok" : "warn",
      what: "channels",
      detail: enabled.length > 0 ? enabled.map((e) => e.name).join(", ") : "no channel is enabled",
    },
  ];
  for (const { name, module, settings } of enabled) {
    if (!module.probe) continue;
    try {
      checks.push(
        ...(await module.probe(settings as NonNullable<typeof settings>, {
          timeoutMs: PROBE_TIMEOUT_MS,
          baseUrl,
        })),
      );
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      checks.push(...err.issues.map((detail) => ({ verdict: "fail" as const, what: name, detail })));
    }
  }
  return checks;
}

/**
 * The bind address is safe (loopback) or explicitly allowed; and is a gateway running where
 * status and chat would look (saying how it was found), and does it accept the configured token?
 */
async function checkGateway(config: Config, found: FoundGateway): Promise<Check[]> {
  const checks: Check[] = [];
  const host = config.gateway.host;
  const { auth } = config.gateway;
  if (!isLoopbackHost(host)) {
    const exposure = remoteExposureWarning(host, auth.token !== undefined);
    checks.push(
      config.gateway.allowRemote
        ? {
            verdict: "warn",
            what: "exposure",
            detail: `${exposure} (gateway.allowRemote: true)`,
          }
        : {
            verdict: "fail",
            what: "exposure",
            detail: `${exposure}; the gateway refuses to start until gateway.allowRemote: true is set (or gateway.host is 127.0.0.1)`,
          },
    );
    // The gateway's second refusal for a non-loopback host (see runGatewayCommand).
    if (auth.token === undefined && auth.mode !== "none") {
      checks.push({
        verdict: "fail",
        what: "auth",
        detail: `gateway.auth.token is not set, but gateway.host is "${host}" (not loopback): the gateway refuses to start; set gateway.auth.token (e.g. \${SWITCHYARD_TOKEN}), or gateway.auth.mode: none behind a proxy that authenticates`,
      });
    }
  }
  const how = describeSource(found);
  const ignored = ignoredRuntimeNote(found.runtime);
  let ready: boolean;
  try {
    const res = await requestGateway(found, "/readyz", { timeoutMs: GATEWAY_PROBE_TIMEOUT_MS });
    await res.body?.cancel();
    ready = res.ok;
    // /v1/status needs the token when the gateway has one: this is the check that it is right.
    const status = await requestGateway(found, "/v1/status", { timeoutMs: GATEWAY_PROBE_TIMEOUT_MS });
    await status.body?.cancel();
  } catch (err) {
    if (!(err instanceof GatewayRequestError)) throw err;
    if (err.kind === "unauthorized") {
      checks.push({
        verdict: "fail",
        what: "gateway",
        detail: `running at ${found.url} (${how}), but ${err.message}`,
      });
      return checks;
    }
    checks.push({
      // A live runtime file that nothing answers for is odd; a gateway that is not started is not.
      verdict: found.source === "runtime-file" ? "warn" : "ok",
      what: "gateway",
      detail: `not running: ${err.message} (${how})${ignored ? `; ${ignored}` : ""}; start it with npm start`,
    });
    return checks;
  }
  checks.push({
    verdict: "ok",
    what: "gateway",
    detail: `running at ${found.url} (${ready ? "ready" : "not ready yet"}; ${found.token ? "token accepted" : "no token sent"}), ${how}`,
  });
  return checks;
}
