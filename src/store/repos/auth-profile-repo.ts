/**
 * The auth profiles' contract: the health of each credential (consecutive failures, cooldown,
 * last use, last error kind), so cooldowns survive a restart and `switchyard auth status` can
 * show them. The model router keeps the live state in memory and writes changes behind; a
 * `reset` from the CLI is seen by a running gateway at its next sync (a newer `resetAt`).
 * Never holds a key.
 */

/** One profile's health. Times are epoch ms. */
export interface AuthProfileState {
  /** The provider's name under `providers:` (`anthropic`, `ollama`, …). */
  provider: string;
  profileId: string;
  consecutiveFailures: number;
  /** The profile is not used before this time; null when not cooling. */
  cooldownUntil: number | null;
  /** The failure kind that set the cooldown (`rate_limit`, `auth`, …). */
  cooldownReason: string | null;
  lastUsedAt: number | null;
  lastErrorKind: string | null;
  lastErrorAt: number | null;
  /** When `auth reset` last cleared it; null if never. */
  resetAt: number | null;
}

/** The auth-profile repository (see the file header). */
export interface AuthProfileRepo {
  /** Every stored state, by provider then profile id. */
  list(): Promise<AuthProfileState[]>;
  /**
   * Upserts the states in one transaction (the router's write-behind flush). `resetAt` is not
   * written by save: a stored reset stays until the next reset. A state whose `resetAt` is older
   * than the stored one (its writer has not seen that reset yet) does not overwrite the stored
   * failures and cooldown, so a flush racing `auth reset` cannot undo it.
   */
  save(states: AuthProfileState[]): Promise<void>;
  /**
   * Clears failures and cooldown and sets `resetAt = now` (creating the row if absent). Returns
   * the state before, or undefined when there was no row.
   */
  reset(provider: string, profileId: string, now: number): Promise<AuthProfileState | undefined>;
}
