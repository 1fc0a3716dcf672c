/**
 * `switchyard auth status` and `switchyard auth reset <provider> <profile>`: the health of each
 * configured credential (cooldown, failures, last use, calls today) read from the database, and
 * clearing a profile's cooldown, which a running gateway picks up at its next sync. Profiles come
 * from the configuration the gateway runs with; a key is never printed, only where it comes from.
 */
import { existsSync } from "node:fs";
import { resolveHome } from "../config/home.js";
import { type ResolvedProvider, resolveProviders } from "../config/provider-choice.js";
import type { Config } from "../config/schema.js";
import type { AuthProfileState } from "../store/repos/auth-profile-repo.js";
import type { ProfileUsage } from "../store/repos/usage-repo.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import { ConfigError } from "../util/config-error.js";
import { loadClientConfig } from "./find-gateway.js";
import type { CliOptions } from "./main.js";
import { databasePath, openForReading } from "./open-database.js";
import { readRuntimeFile } from "./runtime-file.js";
import { UnknownIdError, noteUnresolved } from "./subcommand.js";
import { ago, localTime } from "./sessions.js";
import { count, formatTable, roundUsd, span } from "./table.js";

/** What `reset` promises: the model router reads the stored states back every few seconds. */
const GATEWAY_SYNC_TEXT = "a running gateway picks this up within 5 s";

/** ok: usable; cooling: not used before `cooldownUntil`; failing: failed last time, cooldown over. */
export type ProfileHealth = "ok" | "cooling" | "failing";

/** One row of `auth status` (also its JSON), never holding a key. */
export interface ProfileStatus {
  provider: string;
  profileId: string;
  /** Where its key comes from (`providers.anthropic.profiles[0]`, `ANTHROPIC_API_KEY`); null when not configured. */
  source: string | null;
  configured: boolean;
  health: ProfileHealth;
  consecutiveFailures: number;
  cooldownUntil: number | null;
  cooldownReason: string | null;
  lastUsedAt: number | null;
  lastErrorKind: string | null;
  lastErrorAt: number | null;
  resetAt: number | null;
  /** Calls since the start of the UTC day. */
  today: { calls: number; tokens: number; costUsd: number };
}

/** Runs `auth status` (the default) or `auth reset <provider> <profile>`; returns the exit code. */
export async function runAuth(options: CliOptions, args: string[]): Promise<number> {
  const [action = "status", provider, profileId] = args;
  if (action === "status") {
    if (provider !== undefined) {
      process.stderr.write(`switchyard auth status: unexpected argument "${provider}"\n`);
      return 2;
    }
    return status(options);
  }
  if (action === "reset") {
    if (!provider || !profileId) {
      process.stderr.write(
        "usage: switchyard auth reset <provider> <profile> (see switchyard auth status)\n",
      );
      return 2;
    }
    return reset(options, provider, profileId);
  }
  process.stderr.write(`switchyard auth: unknown action "${action}" (status, reset <provider> <profile>)\n`);
  return 2;
}

async function status(options: CliOptions): Promise<number> {
  const { home, config } = clientConfig(options, true);
  const providers = resolveProviders(config, process.env);
  const path = databasePath(home);
  if (!existsSync(path)) {
    process.stderr.write(
      `switchyard auth: no database at ${path}, so no profile state yet (the gateway creates it on its first start)\n`,
    );
    return 1;
  }
  const now = Date.now();
  const store = openForReading(path);
  let rows: ProfileStatus[];
  try {
    rows = profileStatuses(
      providers,
      await store.authProfiles.list(),
      await store.usage.byProfileSince(startOfUtcDay(now)),
      now,
    );
  } finally {
    await store.close();
  }
  const warnings = rows.flatMap((r) =>
    r.health === "cooling" && r.cooldownReason === "auth" && r.source
      ? [`${r.provider}:${r.profileId}: key rejected: check ${r.source}`]
      : [],
  );
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ profiles: rows, warnings }, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write("no auth profiles: no provider has a key configured (the simulator answers)\n");
    return 0;
  }
  process.stdout.write(formatProfileTable(rows, now));
  for (const w of warnings) process.stdout.write(`warning: ${w}\n`);
  return 0;
}

async function reset(options: CliOptions, provider: string, profileId: string): Promise<number> {
  const { home, config } = clientConfig(options);
  const providers = resolveProviders(config, process.env);
  const path = databasePath(home);
  const configured = providers.find((p) => p.name === provider);
  const known = configured?.profiles.some((p) => p.id === profileId) ?? false;
  const dbExists = existsSync(path);
  // A provider whose key comes from an environment variable this shell does not have resolves
  // no profile here; a state the gateway stored for it is still this profile's to reset.
  const storedHere =
    !known && configured?.unconfigured && dbExists ? await storedState(path, provider, profileId) : undefined;
  if (!known && !storedHere)
    throw new UnknownIdError(`${provider}:${profileId}`, unknownProfile(providers, provider, profileId));
  if (!dbExists) {
    process.stderr.write(
      `switchyard auth reset: no database at ${path}, so nothing to reset (the gateway creates it on its first start)\n`,
    );
    return 1;
  }
  const now = Date.now();
  // Read-write while a gateway may run: WAL, and the store's busy timeout waits out its commits.
  const store = openSqliteStore({ path });
  try {
    const before = await store.authProfiles.reset(provider, profileId, now);
    process.stdout.write(`${provider}:${profileId}: ${describeCleared(before, now)}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * The configuration the gateway runs with (see loadClientConfig) and the home folder; `readOnly`
 * goes on without the `${VAR}`s this shell lacks, naming them on stderr.
 */
function clientConfig(options: CliOptions, readOnly = false): { home: string; config: Config } {
  const env = process.env;
  const cwd = process.cwd();
  const home = resolveHome(options.home, env, cwd);
  const runtime = readRuntimeFile(home);
  const { config, problem, unresolved } = loadClientConfig(options, runtime, {
    env,
    cwd,
    lenientEnv: readOnly,
  });
  if (!config) throw problem ?? new ConfigError(undefined, ["no configuration could be loaded"]);
  noteUnresolved("auth status", unresolved);
  return { home, config };
}

async function storedState(path: string, provider: string, profileId: string) {
  const store = openForReading(path);
  try {
    return (await store.authProfiles.list()).find(
      (s) => s.provider === provider && s.profileId === profileId,
    );
  } finally {
    await store.close();
  }
}

/** Why `provider`/`profileId` is refused, naming what is configured; one line. */
function unknownProfile(providers: readonly ResolvedProvider[], provider: string, profileId: string): string {
  const all = providers.flatMap((p) => p.profiles.map((f) => `${p.name}:${f.id}`));
  const configured = all.length > 0 ? all.join(", ") : "none (no provider has a key)";
  const match = providers.find((p) => p.name === provider);
  if (!match) return `no provider "${provider}" is configured (profiles: ${configured})`;
  if (match.profiles.length === 0)
    return `${provider} has no key configured here, so no profile "${profileId}" (profiles: ${configured})`;
  return `${provider} has no profile "${profileId}" (its profiles: ${match.profiles.map((p) => p.id).join(", ")})`;
}

/** What a reset cleared, from the state before it. */
function describeCleared(before: AuthProfileState | undefined, now: number): string {
  const cleared: string[] = [];
  if (before?.cooldownUntil != null && before.cooldownUntil > now) {
    cleared.push(
      `cooldown (${before.cooldownReason ?? "unknown"}, ${span(before.cooldownUntil - now)} left)`,
    );
  }
  const failures = before?.consecutiveFailures ?? 0;
  if (failures > 0) cleared.push(`${failures} consecutive failure${failures === 1 ? "" : "s"}`);
  if (cleared.length === 0) return "nothing to clear (no cooldown or failures recorded)";
  return `${cleared.join(" and ")} cleared; ${GATEWAY_SYNC_TEXT}`;
}

/**
 * The configured profiles in configuration order, then stored states of profiles the
 * configuration no longer names (by provider, then id), each with its calls today.
 */
export function profileStatuses(
  providers: readonly ResolvedProvider[],
  states: readonly AuthProfileState[],
  today: readonly ProfileUsage[],
  now: number,
): ProfileStatus[] {
  const key = (provider: string, profileId: string) => `${provider}\u0000${profileId}`;
  const stateOf = new Map(states.map((s) => [key(s.provider, s.profileId), s]));
  const usageOf = new Map(today.map((u) => [key(u.provider, u.profileId), u]));
  const row = (provider: string, profileId: string, source: string | null): ProfileStatus => {
    const s = stateOf.get(key(provider, profileId));
    const u = usageOf.get(key(provider, profileId));
    const cooling = s?.cooldownUntil != null && s.cooldownUntil > now;
    return {
      provider,
      profileId,
      source,
      configured: source !== null,
      health: cooling ? "cooling" : (s?.consecutiveFailures ?? 0) > 0 ? "failing" : "ok",
      consecutiveFailures: s?.consecutiveFailures ?? 0,
      cooldownUntil: cooling ? (s?.cooldownUntil ?? null) : null,
      cooldownReason: cooling ? (s?.cooldownReason ?? null) : null,
      lastUsedAt: s?.lastUsedAt ?? null,
      lastErrorKind: s?.lastErrorKind ?? null,
      lastErrorAt: s?.lastErrorAt ?? null,
      resetAt: s?.resetAt ?? null,
      today: { calls: u?.calls ?? 0, tokens: u?.tokens ?? 0, costUsd: roundUsd(u?.costUsd ?? 0) },
    };
  };
  const rows = providers.flatMap((p) => p.profiles.map((f) => row(p.name, f.id, f.source)));
  const listed = new Set(rows.map((r) => key(r.provider, r.profileId)));
  for (const s of states) {
    if (!listed.has(key(s.provider, s.profileId))) rows.push(row(s.provider, s.profileId, null));
  }
  return rows;
}

/** The profiles as an aligned table with a header line. */
export function formatProfileTable(rows: readonly ProfileStatus[], now: number): string {
  return formatTable(
    [
      { header: "PROVIDER" },
      { header: "PROFILE" },
      { header: "STATE" },
      { header: "FAILURES", right: true },
      { header: "LAST USED" },
      { header: "LAST ERROR" },
      { header: "CALLS TODAY", right: true },
      { header: "TOKENS TODAY", right: true },
      { header: "KEY FROM" },
    ],
    rows.map((r) => [
      r.provider,
      r.profileId,
      r.health === "cooling" && r.cooldownUntil !== null
        ? `cooling until ${clockTime(r.cooldownUntil, now)} (${r.cooldownReason ?? "unknown"}, in ${span(r.cooldownUntil - now)})`
        : r.health,
      String(r.consecutiveFailures),
      r.lastUsedAt === null ? "never" : ago(r.lastUsedAt, now),
      r.lastErrorKind === null
        ? "-"
        : `${r.lastErrorKind}${r.lastErrorAt === null ? "" : ` (${ago(r.lastErrorAt, now)})`}`,
      count(r.today.calls),
      count(r.today.tokens),
      r.source ?? "(not configured)",
    ]),
  );
}

/** Local time of day (`14:32:05`) on the local day of `now`, else date and time. */
function clockTime(ms: number, now: number): string {
  const full = localTime(ms);
  return full.slice(0, 10) === localTime(now).slice(0, 10) ? full.slice(11) : full;
}

/** Epoch ms of 00:00 UTC on the UTC day of `now`. */
function startOfUtcDay(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}
