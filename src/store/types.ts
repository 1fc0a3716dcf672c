/**
 * The Store: its repositories (one contract each, in `repos/`) and the steps that span several
 * of them (commitTurn, rejectWithReply). Every method is async (a server database can implement
 * the same interface later) and every atomic step is exactly one method: no transaction is held
 * open across an await. Times are epoch milliseconds passed in by the caller's injected clock.
 *
 * Several gateway processes may share one store. Work in progress has an owner (a process
 * instance id such as `gw_<random>`) and a lease expiry: `running` inbox rows, `sending` outbox
 * rows and session leases (see LeaseRepo). A lease is held while `now < leaseUntil`; nothing but
 * its owner touches work under a held lease, and only expired leases are taken over. `now`
 * comes from each process's clock, so lease TTLs must dwarf the clock skew between them.
 *
 * No cursor relies on ids being assigned in commit order (a server database's sequences hand
 * out ids at insert, so a reader can see id 12 before id 11 commits and skip 11 for ever): a
 * position a reader resumes from is assigned under a lock that orders its writers (the mailbox
 * cursor), or has one writer at a time (a session's transcript: its lease holder; a group
 * session's intake: the one process hosting its channel account). See listMailbox,
 * TranscriptRepo and groupContext; claimDue's chat order needs no cursor.
 */
import type { ClusterRepo } from "./repos/cluster-repo.js";
import type { PermitRepo } from "./repos/permit-repo.js";
import type { ChatTarget } from "../channels/types.js";
import type { AuthProfileRepo } from "./repos/auth-profile-repo.js";
import type { CronRepo } from "./repos/cron-repo.js";
import type { WakeRepo } from "./repos/wake-repo.js";
import type { AssignmentRepo, LearningRepo } from "./repos/assignment-repo.js";
import type { InboxRepo } from "./repos/inbox-repo.js";
import type { LeaseRepo, SessionFence } from "./repos/lease-repo.js";
import type { OutboxInsert, OutboxRepo } from "./repos/outbox-repo.js";
import type { PairingRepo } from "./repos/pairing-repo.js";
import type { PreviewRepo } from "./repos/preview-repo.js";
import type { RunRecord, RunRepo } from "./repos/run-repo.js";
import type { SessionRepo } from "./repos/session-repo.js";
import type { TranscriptPayload, TranscriptRepo } from "./repos/transcript-repo.js";
import type { UsageRepo } from "./repos/usage-repo.js";
import type { SubagentEnd, SubagentRepo } from "./repos/subagent-repo.js";

/**
 * One turn's end, written in one transaction: the final transcript events, the outbox rows
 * (replies, or one failure notice), the inbox rows' final state, the run record and usage.
 * Refuses (returns false, writes nothing) if any inbox row is no longer `running` under this
 * run id, so a turn can never be answered twice, or if the session's lease is no longer
 * `lease.owner`'s under `lease.fence`.
 */
export interface CommitTurn {
  sessionKey: string;
  sessionId: string;
  runId: string;
  inboxIds: number[];
  inboxState: "answered" | "failed";
  error?: string;
  events: TranscriptPayload[];
  outbox: OutboxInsert[];
  run: RunRecord;
  /** A direct chat this turn answered: recorded as the session's `lastTarget`. */
  lastTarget?: ChatTarget;
  /**
   * The session lease the turn ran under. The commit is refused when the session's fence
   * differs, even if the inbox rows still say `running` under this run id: another process has
   * held the session since. Equality is the whole check: a lease that lapsed but that nobody
   * took is still the last holder's to finish with (acquiring it would have moved the fence).
   */
  lease: SessionFence;
  /**
   * The turn is a sub-agent child's: its end (result or failure) is written to the child's row
   * in the same transaction, when this run still owns the row (SubagentRepo). An answer does not
   * end a child whose own children are active or have results it has not received: it stays
   * running, and their results come to it as its next turn.
   */
  subagent?: SubagentEnd;
}

/** The whole store. */
export interface Store {
  inbox: InboxRepo;
  outbox: OutboxRepo;
  sessions: SessionRepo;
  transcript: TranscriptRepo;
  runs: RunRepo;
  usage: UsageRepo;
  authProfiles: AuthProfileRepo;
  pairing: PairingRepo;
  leases: LeaseRepo;
  /** Scheduled jobs and their run ledger. */
  cron: CronRepo;
  /** Wakes the agent queued for its own sessions. */
  wakes: WakeRepo;
  /** Multi-day assignments and their run log. */
  assignments: AssignmentRepo;
  /** Learnings agents reported. */
  learnings: LearningRepo;
  /** Streaming previews' messages, so a turn redone after a crash takes its preview over. */
  previews: PreviewRepo;
  /** Facts the nodes sharing the database agree on, set once (the workspace's id). */
  cluster: ClusterRepo;
  /** The cluster's model-call permits (`lanes.clusterMaxConcurrent`): leased rows. */
  permits: PermitRepo;
  /** Sub-agent children: their parent link, state and result. */
  subagents: SubagentRepo;
  /** See CommitTurn. */
  commitTurn(turn: CommitTurn, now: number): Promise<boolean>;
  /**
   * Finishes a message that gets no agent run but an answer from the gateway itself (a pairing
   * code, a chat command's reply): received → rejected with `reason`, and the reply chunks into
   * the outbox (owned by the inbox row, no run), in one step. Returns false and writes nothing
   * if the row is not `received` (it was routed already).
   *
   * It takes no session fence: it is intake, not a run. It writes no transcript and no session
   * state, and its guard, "the row is still `received`", is one conditional update that only
   * one process can win, so two processes routing the same redelivered message answer it once.
   */
  rejectWithReply(inboxId: number, reason: string, outbox: OutboxInsert[], now: number): Promise<boolean>;
  /** Schema version the database is at. */
  schemaVersion(): number;
  /**
   * Closes the store; idempotent. Resolves when background work on the database (the SQLite
   * store's checkpoint worker) has finished too, so its files may then be moved or removed.
   */
  close(): Promise<void>;
}
