/**
 * The SQLite Store: the repositories over one better-sqlite3 connection, and commitTurn,
 * which writes a turn's end across several of them in one transaction. Several connections
 * (processes) may share one database file: ownership is in the rows (see types.ts).
 */
import type { Database, Transaction } from "better-sqlite3";
import type { OutboxInsert } from "../repos/outbox-repo.js";
import type { CommitTurn, Store } from "../types.js";
import { SqliteAuthProfileRepo } from "./auth-profile-repo.js";
import { guard } from "./errors.js";
import { SqliteInboxRepo } from "./inbox-repo.js";
import { SqliteLeaseRepo } from "./lease-repo.js";
import { SqliteOutboxRepo } from "./outbox-repo.js";
import { SqliteRunRepo } from "./run-repo.js";
import { SqliteSessionRepo } from "./session-repo.js";
import { SqliteTranscriptRepo } from "./transcript-repo.js";
import { SqliteCronRepo } from "./cron-repo.js";
import { SqlitePairingRepo } from "./pairing-repo.js";
import { SqlitePreviewRepo } from "./preview-repo.js";
import { SqliteWakeRepo } from "./wake-repo.js";
import { SqliteAssignmentRepo, SqliteLearningRepo } from "./assignment-repo.js";
import { SqliteUsageRepo } from "./usage-repo.js";
import { SqliteSubagentRepo } from "./subagent-repo.js";
import { SqliteClusterRepo } from "./cluster-repo.js";
import { SqlitePermitRepo } from "./permit-repo.js";
import type { WalCheckpointer } from "./wal-checkpointer.js";

/**
 * Store over an open, migrated better-sqlite3 connection (see openSqliteStore). Every
 * statement is prepared here, once. `close` closes the connection and is idempotent.
 */
export class SqliteStore implements Store {
  readonly inbox: SqliteInboxRepo;
  readonly outbox: SqliteOutboxRepo;
  readonly sessions: SqliteSessionRepo;
  readonly transcript: SqliteTranscriptRepo;
  readonly runs: SqliteRunRepo;
  readonly usage: SqliteUsageRepo;
  readonly authProfiles: SqliteAuthProfileRepo;
  readonly pairing: SqlitePairingRepo;
  readonly cron: SqliteCronRepo;
  readonly wakes: SqliteWakeRepo;
  readonly assignments: SqliteAssignmentRepo;
  readonly learnings: SqliteLearningRepo;
  readonly leases: SqliteLeaseRepo;
  readonly previews: SqlitePreviewRepo;
  readonly subagents: SqliteSubagentRepo;
  readonly cluster: SqliteClusterRepo;
  readonly permits: SqlitePermitRepo;
  readonly #db: Database;
  readonly #path: string;
  readonly #schemaVersion: number;
  readonly #commitTx: Transaction<(turn: CommitTurn, now: number) => boolean>;
  readonly #rejectWithReplyTx: Transaction<
    (inboxId: number, reason: string, outbox: OutboxInsert[], now: number) => boolean
  >;

  readonly #checkpointer: WalCheckpointer | undefined;
  readonly #redact: (text: string) => string;

  /**
   * `path` names the database in error messages; `schemaVersion` is what migrate returned;
   * `checkpointer`, when given, is stopped on close; `redact` cleans every error text and
   * failure notice before it is written (default: none).
   */
  constructor(
    db: Database,
    path: string,
    schemaVersion: number,
    checkpointer?: WalCheckpointer,
    redact: (text: string) => string = (text) => text,
  ) {
    this.#checkpointer = checkpointer;
    this.#redact = redact;
    this.#db = db;
    this.#path = path;
    this.#schemaVersion = schemaVersion;
    this.leases = new SqliteLeaseRepo(db, path);
    this.transcript = new SqliteTranscriptRepo(db, path, this.leases);
    this.inbox = new SqliteInboxRepo(db, path, this.transcript, this.leases);
    this.outbox = new SqliteOutboxRepo(db, path, redact);
    this.sessions = new SqliteSessionRepo(db, path);
    this.runs = new SqliteRunRepo(db, path);
    this.usage = new SqliteUsageRepo(db, path);
    this.authProfiles = new SqliteAuthProfileRepo(db, path);
    this.pairing = new SqlitePairingRepo(db, path);
    this.previews = new SqlitePreviewRepo(db, path);
    this.cron = new SqliteCronRepo(db, path);
    this.wakes = new SqliteWakeRepo(db, path);
    this.assignments = new SqliteAssignmentRepo(db, path, this.wakes);
    this.learnings = new SqliteLearningRepo(db, path);
    this.subagents = new SqliteSubagentRepo(db, path, this.transcript, this.leases);
    this.cluster = new SqliteClusterRepo(db, path);
    this.permits = new SqlitePermitRepo(db, path);
    this.#commitTx = db.transaction((turn: CommitTurn, now: number) => this.#commit(turn, now));
    this.#rejectWithReplyTx = db.transaction(
      (inboxId: number, reason: string, outbox: OutboxInsert[], now: number) => {
        const record = this.inbox.getInTransaction(inboxId);
        if (!record || !this.inbox.rejectInTransaction(inboxId, reason, now)) return false;
        this.outbox.insertInTransaction(outbox, { sessionKey: record.sessionKey, runId: null, inboxId }, now);
        return true;
      },
    );
  }

  async rejectWithReply(
    inboxId: number,
    reason: string,
    outbox: OutboxInsert[],
    now: number,
  ): Promise<boolean> {
    return guard(this.#path, () => this.#rejectWithReplyTx.immediate(inboxId, reason, outbox, now));
  }

  /**
   * See CommitTurn. Also refuses a run id that was committed before (a turn without inbox
   * rows could otherwise be committed twice). Outbox rows get `inboxId` = the last inbox id.
   * The fence is checked inside the write transaction, so a grant to another owner is either
   * before it (refused) or after it (the new holder sees the committed turn).
   */
  async commitTurn(turn: CommitTurn, now: number): Promise<boolean> {
    return guard(this.#path, () => this.#commitTx.immediate(turn, now));
  }

  schemaVersion(): number {
    return this.#schemaVersion;
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
    // The worker checkpoints once more and closes its own connection, the last one.
    await this.#checkpointer?.stop();
  }

  #commit(raw: CommitTurn, now: number): boolean {
    const turn = this.#redacted(raw);
    const inboxIds = [...new Set(turn.inboxIds)];
    if (!this.leases.isCurrentInTransaction(turn.sessionKey, turn.lease)) return false;
    if (!inboxIds.every((id) => this.inbox.isRunningUnder(id, turn.runId))) return false;
    if (this.runs.existsInTransaction(turn.run.runId)) return false;
    this.transcript.appendInTransaction(turn.sessionKey, turn.sessionId, turn.runId, turn.events, now);
    const owner = { sessionKey: turn.sessionKey, runId: turn.runId, inboxId: inboxIds.at(-1) ?? null };
    this.outbox.insertInTransaction(turn.outbox, owner, now);
    for (const id of inboxIds)
      this.inbox.finishInTransaction(id, turn.runId, turn.inboxState, turn.error ?? null, now);
    this.runs.insertInTransaction(turn.run, now);
    // The day's totals and one usage row per model call (run.calls).
    this.usage.addRunInTransaction(turn.run);
    if (turn.lastTarget) this.sessions.setLastTargetInTransaction(turn.sessionKey, turn.lastTarget, now);
    if (turn.subagent) this.subagents.finishInTransaction(turn.subagent, turn.runId, now);
    return true;
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
