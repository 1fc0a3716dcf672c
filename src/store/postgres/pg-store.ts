/**
 * The PostgreSQL Store: the repositories over one pool, and commitTurn and rejectWithReply,
 * each one SERIALIZABLE transaction across several of them (PgDb.tx, run again on a
 * serialization failure). Several gateway processes on several machines share one database:
 * ownership is in the rows, as with SQLite (see types.ts), and every fence check is inside the
 * transaction whose writes it guards.
 */
import type { OutboxInsert } from "../repos/outbox-repo.js";
import type { CommitTurn, Store } from "../types.js";
import { PgAssignmentRepo, PgLearningRepo } from "./assignment-repo.js";
import { PgAuthProfileRepo } from "./auth-profile-repo.js";
import { PgClusterRepo } from "./cluster-repo.js";
import { PgPermitRepo } from "./permit-repo.js";
import { PgCronRepo } from "./cron-repo.js";
import { PgInboxRepo } from "./inbox-repo.js";
import { PgLeaseRepo } from "./lease-repo.js";
import { PgOutboxRepo } from "./outbox-repo.js";
import { PgPairingRepo } from "./pairing-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";
import { PgPreviewRepo } from "./preview-repo.js";
import { PgRunRepo } from "./run-repo.js";
import { PgSessionRepo } from "./session-repo.js";
import { PgSubagentRepo } from "./subagent-repo.js";
import { PgTranscriptRepo } from "./transcript-repo.js";
import { PgUsageRepo } from "./usage-repo.js";
import { PgWakeRepo } from "./wake-repo.js";

/** Store over an open, migrated PostgreSQL pool (see openPgStore). `close` ends the pool. */
export class PgStore implements Store {
  readonly inbox: PgInboxRepo;
  readonly outbox: PgOutboxRepo;
  readonly sessions: PgSessionRepo;
  readonly transcript: PgTranscriptRepo;
  readonly runs: PgRunRepo;
  readonly usage: PgUsageRepo;
  readonly authProfiles: PgAuthProfileRepo;
  readonly pairing: PgPairingRepo;
  readonly cron: PgCronRepo;
  readonly wakes: PgWakeRepo;
  readonly assignments: PgAssignmentRepo;
  readonly learnings: PgLearningRepo;
  readonly leases: PgLeaseRepo;
  readonly previews: PgPreviewRepo;
  readonly subagents: PgSubagentRepo;
  readonly cluster: PgClusterRepo;
  readonly permits: PgPermitRepo;
  readonly db: PgDb;
  readonly #schemaVersion: number;
  readonly #redact: (text: string) => string;

  /**
   * `schemaVersion` is what migratePg resolved; `redact` cleans every error text and failure
   * notice before it is written (default: none).
   */
  constructor(db: PgDb, schemaVersion: number, redact: (text: string) => string = (text) => text) {
    this.db = db;
    this.#schemaVersion = schemaVersion;
    this.#redact = redact;
    this.leases = new PgLeaseRepo(db);
    this.transcript = new PgTranscriptRepo(db, this.leases);
    this.inbox = new PgInboxRepo(db, this.transcript);
    this.outbox = new PgOutboxRepo(db, redact);
    this.sessions = new PgSessionRepo(db);
    this.runs = new PgRunRepo(db);
    this.usage = new PgUsageRepo(db);
    this.authProfiles = new PgAuthProfileRepo(db);
    this.pairing = new PgPairingRepo(db);
    this.previews = new PgPreviewRepo(db);
    this.cron = new PgCronRepo(db);
    this.wakes = new PgWakeRepo(db);
    this.assignments = new PgAssignmentRepo(db);
    this.learnings = new PgLearningRepo(db);
    this.subagents = new PgSubagentRepo(db, this.transcript, this.leases);
    this.cluster = new PgClusterRepo(db);
    this.permits = new PgPermitRepo(db);
  }

  async commitTurn(raw: CommitTurn, now: number): Promise<boolean> {
    const turn = this.#redacted(raw);
    return this.db.tx((tx) => this.#commit(tx, turn, now));
  }

  async rejectWithReply(
    inboxId: number,
    reason: string,
    outbox: OutboxInsert[],
    now: number,
  ): Promise<boolean> {
    return this.db.tx(async (tx) => {
      const record = await this.inbox.getIn(tx, inboxId);
      if (!record || !(await this.inbox.rejectIn(tx, inboxId, reason, now))) return false;
      await this.outbox.insertIn(tx, outbox, { sessionKey: record.sessionKey, runId: null, inboxId }, now);
      return true;
    });
  }

  schemaVersion(): number {
    return this.#schemaVersion;
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  async #commit(tx: PgRunner, turn: CommitTurn, now: number): Promise<boolean> {
    const inboxIds = [...new Set(turn.inboxIds)];
    if (!(await this.#mayCommit(tx, turn, inboxIds))) return false;
    await this.transcript.appendIn(tx, turn.sessionKey, turn.sessionId, turn.runId, turn.events, now);
    const owner = { sessionKey: turn.sessionKey, runId: turn.runId, inboxId: inboxIds.at(-1) ?? null };
    await this.outbox.insertIn(tx, turn.outbox, owner, now);
    for (const id of inboxIds)
      await this.inbox.finishIn(tx, id, turn.runId, turn.inboxState, turn.error ?? null, now);
    await this.runs.insertIn(tx, turn.run, now);
    // The day's totals and one usage row per model call (run.calls).
    await this.usage.addRunIn(tx, turn.run);
    if (turn.lastTarget) await this.sessions.setLastTargetIn(tx, turn.sessionKey, turn.lastTarget, now);
    if (turn.subagent) await this.subagents.finishIn(tx, turn.subagent, turn.runId, now);
    return true;
  }

  /**
   * The three fences of a commit in one statement (one round trip, not 2 + one per inbox row),
   * the reads LeaseRepo.isCurrentIn and, before, one read of each row and one of runs made, in
   * the same transaction: `lease` is the session's holder and fence, every row is running
   * under the turn's run, and that run was not committed before.
   */
  async #mayCommit(tx: PgRunner, turn: CommitTurn, inboxIds: readonly number[]): Promise<boolean> {
    const ids = inboxIds.map((_, i) => `$${i + 5}`).join(", ");
    const row = await tx.row<{ current: boolean | null; running: number; done: boolean }>(
      `SELECT (SELECT owner = $2 AND fence = $3 FROM session_leases WHERE session_key = $1) AS current,
              (SELECT count(*) FROM inbox
                WHERE id = ANY (ARRAY[${ids}]::bigint[]) AND state = 'running' AND run_id = $4) AS running,
              EXISTS (SELECT 1 FROM runs WHERE run_id = $${inboxIds.length + 5}) AS done`,
      [turn.sessionKey, turn.lease.owner, turn.lease.fence, turn.runId, ...inboxIds, turn.run.runId],
    );
    return row?.current === true && row.running === inboxIds.length && !row.done;
  }

  /** The turn with its error texts and failure notices redacted (replies are the model's words). */
  #redacted(turn: CommitTurn): CommitTurn {
    const r = this.#redact;
    return {
      ...turn,
      ...(turn.error !== undefined ? { error: r(turn.error) } : {}),
      run: { ...turn.run, error: turn.run.error === null ? null : r(turn.run.error) },
      events: turn.events.map((e) => (e.type === "notice" ? { ...e, text: r(e.text) } : e)),
      outbox: turn.outbox.map((o) => (o.kind === "notice" ? { ...o, text: r(o.text) } : o)),
    };
  }
}
