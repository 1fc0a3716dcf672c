/**
 * Auth-profile health on PostgreSQL: one row per (provider, profile id), shared by every node, so
 * a cooldown one node's router hits is seen by the others at their next sync. Written behind by
 * each gateway's model router and reset by `switchyard auth reset`. Never holds a key.
 */
import type { AuthProfileRepo, AuthProfileState } from "../repos/auth-profile-repo.js";
import type { PgDb } from "./pg-db.js";

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

// A writer that has not seen the stored reset ($9: the reset it saw) does not undo it.
const UPSERT = `INSERT INTO auth_profiles (provider, profile_id, consecutive_failures, cooldown_until,
    cooldown_reason, last_used_at, last_error_kind, last_error_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
  ON CONFLICT (provider, profile_id) DO UPDATE SET
    consecutive_failures = CASE WHEN COALESCE(auth_profiles.reset_at, 0) > $9
      THEN auth_profiles.consecutive_failures ELSE excluded.consecutive_failures END,
    cooldown_until = CASE WHEN COALESCE(auth_profiles.reset_at, 0) > $9
      THEN auth_profiles.cooldown_until ELSE excluded.cooldown_until END,
    cooldown_reason = CASE WHEN COALESCE(auth_profiles.reset_at, 0) > $9
      THEN auth_profiles.cooldown_reason ELSE excluded.cooldown_reason END,
    last_used_at = excluded.last_used_at,
    last_error_kind = excluded.last_error_kind,
    last_error_at = excluded.last_error_at`;

const RESET = `INSERT INTO auth_profiles (provider, profile_id, consecutive_failures, reset_at)
  VALUES ($1, $2, 0, $3)
  ON CONFLICT (provider, profile_id) DO UPDATE SET
    consecutive_failures = 0, cooldown_until = NULL, cooldown_reason = NULL, reset_at = excluded.reset_at`;

/**
 * The AuthProfileRepo on PostgreSQL: owns the auth_profiles table. `save` upserts every column
 * but `reset_at`; `reset` keeps the last use and last error (history), clearing only what stops
 * the profile from being used.
 */
export class PgAuthProfileRepo implements AuthProfileRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  /** The pool this repository runs on. */
  get db(): PgDb {
    return this.#db;
  }

  async list(): Promise<AuthProfileState[]> {
    const rows = await this.#db.rows<AuthProfileRow>(
      "SELECT * FROM auth_profiles ORDER BY provider, profile_id",
    );
    return rows.map(toState);
  }

  async save(states: AuthProfileState[]): Promise<void> {
    if (states.length === 0) return;
    await this.#db.tx(async (tx) => {
      for (const s of states) {
        await tx.run(UPSERT, [
          s.provider,
          s.profileId,
          s.consecutiveFailures,
          s.cooldownUntil,
          s.cooldownReason,
          s.lastUsedAt,
          s.lastErrorKind,
          s.lastErrorAt,
          s.resetAt ?? 0,
        ]);
      }
    });
  }

  async reset(provider: string, profileId: string, now: number): Promise<AuthProfileState | undefined> {
    return this.#db.tx(async (tx) => {
      const before = await tx.row<AuthProfileRow>(
        "SELECT * FROM auth_profiles WHERE provider = $1 AND profile_id = $2",
        [provider, profileId],
      );
      await tx.run(RESET, [provider, profileId, now]);
      return before ? toState(before) : undefined;
    });
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
