/**
 * The Store contract suite: every repository method and the documented semantics, driven
 * only through the `Store` interface, so every store implementation (SQLite today, a server
 * database later) runs the same suite: `runStoreContract("sqlite", () => openSqliteStore(...))`.
 * One part per repository lives in `store/`; ownership (owners, leases, fences, takeovers,
 * hosted channels) and the mailbox cursor are proven across two handles on one database.
 */
import { describe, expect, it } from "vitest";
import type { Store } from "../../src/store/types.js";
import { assignmentsContract } from "./store/assignments.contract.js";
import { authProfilesContract } from "./store/auth-profiles.contract.js";
import { clusterContract } from "./store/cluster.contract.js";
import { commitTurnContract } from "./store/commit-turn.contract.js";
import { cronContract } from "./store/cron.contract.js";
import { wakesContract } from "./store/wakes.contract.js";
import { type StoreContractOptions, useStoreContext } from "./store/fixtures.js";
import { groupContextContract, inboxContract } from "./store/inbox.contract.js";
import { mailboxContract } from "./store/mailbox.contract.js";
import { outboxContract } from "./store/outbox.contract.js";
import { ownershipContract } from "./store/ownership.contract.js";
import { pairingContract } from "./store/pairing.contract.js";
import { permitsContract } from "./store/permits.contract.js";
import { previewsContract } from "./store/previews.contract.js";
import { runsContract } from "./store/runs.contract.js";
import { sessionsContract, transcriptContract } from "./store/sessions.contract.js";
import { subagentsContract } from "./store/subagents.contract.js";

export type { StoreContractOptions } from "./store/fixtures.js";

/**
 * Registers the Store contract suite. `makeStore` is called before every test (and every
 * property-test run) and must return a fresh, empty store; the suite closes it. With
 * `options.openPeer`, cases about several processes use a second handle onto the same database.
 */
export function runStoreContract(
  name: string,
  makeStore: () => Promise<Store> | Store,
  options: StoreContractOptions = {},
): void {
  describe(`Store contract: ${name}`, () => {
    const ctx = useStoreContext(makeStore, options);

    it("reports a schema version", () => {
      expect(ctx.store.schemaVersion()).toBeGreaterThan(0);
    });

    inboxContract(ctx);
    commitTurnContract(ctx);
    outboxContract(ctx);
    sessionsContract(ctx);
    transcriptContract(ctx);
    groupContextContract(ctx);
    pairingContract(ctx);
    runsContract(ctx);
    authProfilesContract(ctx);
    ownershipContract(ctx);
    mailboxContract(ctx);
    cronContract(ctx);
    wakesContract(ctx);
    previewsContract(ctx);
    subagentsContract(ctx);
    clusterContract(ctx);
    permitsContract(ctx);
    assignmentsContract(ctx);
  });
}
