/**
 * The live health of every auth profile, in memory, with write-behind to the store. Choosing a
 * profile never touches the store: a success on a healthy profile only updates `lastUsedAt` in
 * memory (flushed with the next write-behind), and a failure schedules one flush shortly after.
 * A periodic sync writes what changed and reads back what others did: a cooldown another
 * gateway process saw, or an `auth reset` from the CLI (a newer `resetAt`).
 */
import type { AuthProfileRepo, AuthProfileState } from "../../store/repos/auth-profile-repo.js";
import { type Clock, systemClock, type TimerHandle } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { ProviderError } from "../providers/provider-error.js";
import { type CooldownTable, cooldownMs, isCoolingKind } from "./cooldown.js";

/** Options of {@link AuthProfiles}. */
export interface AuthProfilesOptions {
  cooldowns: CooldownTable;
  /** Where state is written behind and read back; none keeps it in memory only. */
  repo?: AuthProfileRepo;
  clock?: Clock;
  /** Period of the write-behind flush and read-back; default 5_000 ms. */
  syncMs?: number;
  logger?: Logger;
  /** Told of every cooldown set (for metrics). */
  onCooldown?(provider: string, profileId: string, kind: string, ms: number): void;
}

/** What a failure did to a profile. */
export interface FailureOutcome {
  /** Milliseconds the profile now rests (0: the kind does not cool a profile). */
  cooldownMs: number;
}

const key = (provider: string, profileId: string) => `${provider}\u0000${profileId}`;

/** Owns the in-memory health of every auth profile and its write-behind to the store. */
export class AuthProfiles {
  readonly #o: AuthProfilesOptions & { clock: Clock; syncMs: number };
  readonly #states = new Map<string, AuthProfileState>();
  readonly #dirty = new Set<string>();
  #timer: TimerHandle | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: AuthProfilesOptions) {
    this.#o = { clock: systemClock, syncMs: 5_000, ...options };
  }

  /** Reads the stored states (once, before the first call), then syncs periodically. */
  async load(): Promise<void> {
    if (this.#o.repo)
      for (const s of await this.#o.repo.list()) this.#states.set(key(s.provider, s.profileId), s);
    this.#schedule(this.#o.syncMs);
  }

  /** The state of a profile (a fresh one when it never failed). */
  state(provider: string, profileId: string): AuthProfileState {
    const k = key(provider, profileId);
    let s = this.#states.get(k);
    if (!s) {
      s = {
        provider,
        profileId,
        consecutiveFailures: 0,
        cooldownUntil: null,
        cooldownReason: null,
        lastUsedAt: null,
        lastErrorKind: null,
        lastErrorAt: null,
        resetAt: null,
      };
      this.#states.set(k, s);
    }
    return s;
  }

  /** Epoch ms until which the profile rests, or 0 when it is usable now. */
  coolingUntil(provider: string, profileId: string, now = this.#o.clock.now()): number {
    const until = this.#states.get(key(provider, profileId))?.cooldownUntil ?? 0;
    return until > now ? until : 0;
  }

  /**
   * The profiles of `provider` in the order to try them: not cooling, then fewest consecutive
   * failures, then least recently used; `sticky` first while it is not cooling (prompt-cache
   * locality). Cooling profiles come last, soonest free first.
   */
  order(provider: string, ids: readonly string[], sticky?: string): string[] {
    const now = this.#o.clock.now();
    const ranked = ids.map((id, index) => {
      const s = this.#states.get(key(provider, id));
      const until = s?.cooldownUntil && s.cooldownUntil > now ? s.cooldownUntil : 0;
      return { id, index, until, failures: s?.consecutiveFailures ?? 0, used: s?.lastUsedAt ?? 0 };
    });
    ranked.sort(
      (a, b) =>
        Number(a.until > 0) - Number(b.until > 0) ||
        a.until - b.until ||
        Number(b.id === sticky) - Number(a.id === sticky) ||
        a.failures - b.failures ||
        a.used - b.used ||
        a.index - b.index,
    );
    return ranked.map((r) => r.id);
  }

  /** A call on the profile succeeded: failures reset; in memory only unless it had failed. */
  succeeded(provider: string, profileId: string): void {
    const s = this.state(provider, profileId);
    s.lastUsedAt = this.#o.clock.now();
    if (s.consecutiveFailures === 0 && s.cooldownUntil === null) {
      this.#dirty.add(key(provider, profileId)); // lastUsedAt, flushed with the periodic sync
      return;
    }
    s.consecutiveFailures = 0;
    s.cooldownUntil = null;
    s.cooldownReason = null;
    this.#markChanged(provider, profileId);
  }

  /** A call on the profile failed with `error`: the kind's cooldown, written behind soon. */
  failed(provider: string, profileId: string, error: ProviderError): FailureOutcome {
    const now = this.#o.clock.now();
    const s = this.state(provider, profileId);
    s.lastUsedAt = now;
    s.lastErrorKind = error.kind;
    s.lastErrorAt = now;
    if (!isCoolingKind(error.kind)) {
      this.#markChanged(provider, profileId);
      return { cooldownMs: 0 };
    }
    s.consecutiveFailures++;
    const ms = cooldownMs(error.kind, s.consecutiveFailures, error.retryAfterMs, this.#o.cooldowns);
    s.cooldownUntil = now + ms;
    s.cooldownReason = error.kind;
    this.#o.logger?.warn(
      { provider, profile: profileId, kind: error.kind, cooldownMs: ms, failures: s.consecutiveFailures },
      "auth profile cooling down",
    );
    this.#o.onCooldown?.(provider, profileId, error.kind, ms);
    this.#markChanged(provider, profileId);
    return { cooldownMs: ms };
  }

  /** Every state known in memory (for status lines). */
  all(): AuthProfileState[] {
    return [...this.#states.values()].map((s) => ({ ...s }));
  }

  /** Writes what changed, then reads back what others changed. Never throws. */
  async sync(): Promise<void> {
    const repo = this.#o.repo;
    if (!repo) return;
    const run = this.#flushing.then(async () => {
      const keys = [...this.#dirty];
      this.#dirty.clear();
      try {
        const changed = keys.flatMap((k) => {
          const s = this.#states.get(k);
          return s ? [{ ...s }] : [];
        });
        if (changed.length > 0) await repo.save(changed);
        for (const stored of await repo.list()) this.#merge(stored);
      } catch (err) {
        for (const k of keys) this.#dirty.add(k); // written at the next sync
        this.#o.logger?.warn({ err }, "auth profile state not synced with the store; retrying");
      }
    });
    this.#flushing = run;
    await run;
  }

  /** Stops the periodic sync after one last flush. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.sync();
  }

  /** A stored state another writer made: a newer reset clears ours; a longer cooldown is adopted. */
  #merge(stored: AuthProfileState): void {
    const k = key(stored.provider, stored.profileId);
    const local = this.#states.get(k);
    if (!local) {
      this.#states.set(k, stored);
      return;
    }
    if ((stored.resetAt ?? 0) > (local.resetAt ?? 0)) {
      local.resetAt = stored.resetAt;
      local.consecutiveFailures = stored.consecutiveFailures;
      local.cooldownUntil = stored.cooldownUntil;
      local.cooldownReason = stored.cooldownReason;
      this.#o.logger?.info({ provider: stored.provider, profile: stored.profileId }, "auth profile reset");
      return;
    }
    if ((stored.cooldownUntil ?? 0) > (local.cooldownUntil ?? 0)) {
      local.cooldownUntil = stored.cooldownUntil;
      local.cooldownReason = stored.cooldownReason;
      local.consecutiveFailures = Math.max(local.consecutiveFailures, stored.consecutiveFailures);
    }
  }

  #markChanged(provider: string, profileId: string): void {
    this.#dirty.add(key(provider, profileId));
    // A failure is written within a second, not at the next periodic sync.
    this.#schedule(Math.min(1_000, this.#o.syncMs));
  }

  #schedule(ms: number): void {
    if (this.#closed || !this.#o.repo) return;
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = this.#o.clock.setTimeout(
      () => {
        this.#timer = undefined;
        this.sync()
          .catch(() => {})
          .finally(() => this.#schedule(this.#o.syncMs));
      },
      ms,
      { unref: true },
    );
  }
}
