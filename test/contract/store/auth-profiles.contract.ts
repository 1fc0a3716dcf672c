/**
 * Store contract, auth profiles: each credential's health as the model router writes it behind
 * (save) and `switchyard auth reset` clears it (reset), from two processes on one database.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { AuthProfileState } from "../../../src/store/repos/auth-profile-repo.js";
import type { Store } from "../../../src/store/types.js";
import { type StoreContext, T0 } from "./fixtures.js";

/** A healthy profile's state; `over` replaces fields. */
function state(provider: string, profileId: string, over: Partial<AuthProfileState> = {}): AuthProfileState {
  return {
    provider,
    profileId,
    consecutiveFailures: 0,
    cooldownUntil: null,
    cooldownReason: null,
    lastUsedAt: null,
    lastErrorKind: null,
    lastErrorAt: null,
    resetAt: null,
    ...over,
  };
}

/** A profile cooling after two rate limits. */
function cooling(
  provider: string,
  profileId: string,
  over: Partial<AuthProfileState> = {},
): AuthProfileState {
  return state(provider, profileId, {
    consecutiveFailures: 2,
    cooldownUntil: T0 + 300_000,
    cooldownReason: "rate_limit",
    lastUsedAt: T0 - 1_000,
    lastErrorKind: "rate_limit",
    lastErrorAt: T0,
    ...over,
  });
}

/** Auth-profile cases: list, save, reset. */
export function authProfilesContract(ctx: StoreContext): void {
  describe("auth profiles", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    it("saves states in one step and lists them by provider, then profile id", async () => {
      expect(await store.authProfiles.list()).toEqual([]);
      await store.authProfiles.save([]);
      await store.authProfiles.save([
        cooling("openai", "default"),
        state("anthropic", "work", { lastUsedAt: T0 }),
        state("anthropic", "personal"),
      ]);
      expect(await store.authProfiles.list()).toEqual([
        state("anthropic", "personal"),
        state("anthropic", "work", { lastUsedAt: T0 }),
        cooling("openai", "default"),
      ]);
      // A later save replaces a profile's state; profiles it does not name are kept.
      await store.authProfiles.save([state("openai", "default", { lastUsedAt: T0 + 5 })]);
      expect(await store.authProfiles.list()).toEqual([
        state("anthropic", "personal"),
        state("anthropic", "work", { lastUsedAt: T0 }),
        state("openai", "default", { lastUsedAt: T0 + 5 }),
      ]);
    });

    it("reset clears failures and cooldown, keeps last use and last error, and returns the state before", async () => {
      await store.authProfiles.save([cooling("anthropic", "work")]);
      expect(await store.authProfiles.reset("anthropic", "work", T0 + 10)).toEqual(
        cooling("anthropic", "work"),
      );
      expect(await store.authProfiles.list()).toEqual([
        cooling("anthropic", "work", {
          consecutiveFailures: 0,
          cooldownUntil: null,
          cooldownReason: null,
          resetAt: T0 + 10,
        }),
      ]);
    });

    it("reset of a profile never stored creates its row and returns undefined", async () => {
      expect(await store.authProfiles.reset("anthropic", "new", T0)).toBeUndefined();
      expect(await store.authProfiles.list()).toEqual([state("anthropic", "new", { resetAt: T0 })]);
    });

    it("save does not write resetAt, and a writer that has not seen a reset cannot undo it", async () => {
      await store.authProfiles.reset("anthropic", "work", T0);
      // A flush from a router that has not seen the reset yet: last use and error are written,
      // failures and cooldown stay cleared.
      await store.authProfiles.save([cooling("anthropic", "work", { resetAt: null })]);
      expect(await store.authProfiles.list()).toEqual([
        cooling("anthropic", "work", {
          resetAt: T0,
          consecutiveFailures: 0,
          cooldownUntil: null,
          cooldownReason: null,
        }),
      ]);
      // Once it has seen the reset, a new cooldown is written.
      await store.authProfiles.save([cooling("anthropic", "work", { resetAt: T0 })]);
      expect(await store.authProfiles.list()).toEqual([cooling("anthropic", "work", { resetAt: T0 })]);
      await store.authProfiles.save([state("anthropic", "work", { resetAt: T0 + 99 })]);
      expect(await store.authProfiles.list()).toEqual([state("anthropic", "work", { resetAt: T0 })]);
      await store.authProfiles.reset("anthropic", "work", T0 + 50);
      expect((await store.authProfiles.list())[0]?.resetAt).toBe(T0 + 50);
    });

    it("two processes see each other's writes: the router's saves and the CLI's reset", async () => {
      const gateway = store;
      const cli = await ctx.peer();
      await gateway.authProfiles.save([cooling("anthropic", "work"), state("anthropic", "personal")]);
      expect(await cli.authProfiles.list()).toEqual([
        state("anthropic", "personal"),
        cooling("anthropic", "work"),
      ]);
      expect(await cli.authProfiles.reset("anthropic", "work", T0 + 10)).toEqual(
        cooling("anthropic", "work"),
      );
      const seen = await gateway.authProfiles.list();
      expect(seen.find((s) => s.profileId === "work")).toMatchObject({
        consecutiveFailures: 0,
        cooldownUntil: null,
        resetAt: T0 + 10,
      });
    });
  });
}
