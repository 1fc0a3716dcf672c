/**
 * Auth-profile health in SQLite: one row per (provider, profile id), written behind by the
 * gateway's model router and reset by `switchyard auth reset` from another process (WAL lets
 * both work at once). Never holds a key.
 */
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { AuthProfileRepo, AuthProfileState } from "../repos/auth-profile-repo.js";
import { guard } from "./errors.js";

interface AuthProfileRow {
  provider: string;
  profile_id: string;
  consecutive_failures: number;
  cooldown_until: number | null;
  cooldown_reason: string | null;
  last_used_at: number | null;
  last_error_kind: string | null;
  last_error_at: number | null;
  reset_at: number | null;
}

/**
 * AuthProfileRepo over one better-sqlite3 connection. `save` upserts every column but
 * `reset_at`; `reset` keeps the last use and last error (history), clearing only what stops
 * the profile from being used.
 */
export class SqliteAuthProfileRepo implements AuthProfileRepo {
  readonly #path: string;
  readonly #all: Statement<[], AuthProfileRow>;
  readonly #get: Statement<[string, string], AuthProfileRow>;
  readonly #upsert: Statement<[Omit<AuthProfileRow, "reset_at"> & { seen_reset_at: number }]>;
  readonly #reset: Statement<[{ provider: string; profile_id: string; now: number }]>;
  readonly #saveTx: Transaction<(states: AuthProfileState[]) => void>;
  readonly #resetTx: Transaction<
    (provider: string, profileId: string, now: number) => AuthProfileState | undefined
  >;

  constructor(db: Database, path: string) {
    this.#path = path;
    this.#all = db.prepare("SELECT * FROM auth_profiles ORDER BY provider, profile_id");
    this.#get = db.prepare("SELECT * FROM auth_profiles WHERE provider = ? AND profile_id = ?");
    this.#upsert = db.prepare(
      `INSERT INTO auth_profiles (provider, profile_id, consecutive_failures, cooldown_until, cooldown_reason,
         last_used_at, last_error_kind, last_error_at)
       VALUES (@provider, @profile_id, @consecutive_failures, @cooldown_until, @cooldown_reason,
         @last_used_at, @last_error_kind, @last_error_at)
       ON CONFLICT (provider, profile_id) DO UPDATE SET
         -- A writer that has not seen the stored reset does not undo it.
         consecutive_failures = CASE WHEN COALESCE(reset_at, 0) > @seen_reset_at
           THEN consecutive_failures ELSE excluded.consecutive_failures END,
         cooldown_until = CASE WHEN COALESCE(reset_at, 0) > @seen_reset_at
           THEN cooldown_until ELSE excluded.cooldown_until END,
         cooldown_reason = CASE WHEN COALESCE(reset_at, 0) > @seen_reset_at
           THEN cooldown_reason ELSE excluded.cooldown_reason END,
         last_used_at = excluded.last_used_at,
         last_error_kind = excluded.last_error_kind,
         last_error_at = excluded.last_error_at`,
    );
    this.#reset = db.prepare(
      `INSERT INTO auth_profiles (provider, profile_id, consecutive_failures, reset_at)
       VALUES (@provider, @profile_id, 0, @now)
       ON CONFLICT (provider, profile_id) DO UPDATE SET
         consecutive_failures = 0, cooldown_until = NULL, cooldown_reason = NULL, reset_at = excluded.reset_at`,
    );
    this.#saveTx = db.transaction((states: AuthProfileState[]) => {
      for (const s of states) {
        this.#upsert.run({
          provider: s.provider,
          profile_id: s.profileId,
          consecutive_failures: s.consecutiveFailures,
          cooldown_until: s.cooldownUntil,
          cooldown_reason: s.cooldownReason,
          last_used_at: s.lastUsedAt,
          last_error_kind: s.lastErrorKind,
          last_error_at: s.lastErrorAt,
          seen_reset_at: s.resetAt ?? 0,
        });
      }
    });
    this.#resetTx = db.transaction((provider: string, profileId: string, now: number) => {
      const before = this.#get.get(provider, profileId);
      this.#reset.run({ provider, profile_id: profileId, now });
      return before ? toState(before) : undefined;
    });
  }

  async list(): Promise<AuthProfileState[]> {
    return guard(this.#path, () => this.#all.all().map(toState));
  }

  async save(states: AuthProfileState[]): Promise<void> {
    if (states.length === 0) return;
    guard(this.#path, () => this.#saveTx.immediate(states));
  }

  async reset(provider: string, profileId: string, now: number): Promise<AuthProfileState | undefined> {
    return guard(this.#path, () => this.#resetTx.immediate(provider, profileId, now));
  }
}

function toState(row: AuthProfileRow): AuthProfileState {
  return {
    provider: row.provider,
    profileId: row.profile_id,
    consecutiveFailures: row.consecutive_failures,
    cooldownUntil: row.cooldown_until,
    cooldownReason: row.cooldown_reason,
    lastUsedAt: row.last_used_at,
    lastErrorKind: row.last_error_kind,
    lastErrorAt: row.last_error_at,
    resetAt: row.reset_at,
  };
}
