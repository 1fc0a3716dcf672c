/**
 * The admin API's wire shapes: what `/v1/admin/…` answers, what the control page (`/ui/`) and
 * the CLI read. Types only, so the page's bundle imports them without pulling in the gateway.
 *
 * Every route needs `Authorization: Bearer <gateway.auth.token>` when a token is configured (a
 * gateway without one serves `/v1/admin` and `/ui` to loopback clients only). Errors are the
 * gateway's usual JSON body `{ error: { message, type, code, param } }` with a 4xx/5xx status;
 * an action on something gone is a 404 whose message names it.
 *
 * Routes (GET unless marked POST; POST bodies are JSON):
 *
 *   GET  /v1/admin/overview                    → Overview
 *   GET  /v1/admin/events?logs=1               → text/event-stream of AdminStreamEvent (below)
 *   GET  /v1/admin/sessions?limit=N            → { sessions: SessionRow[] }   (limit ≤ 10,000, default 200)
 *   GET  /v1/admin/session?key=KEY&limit=N     → SessionDetail
 *   POST /v1/admin/session/stop   { key }      → { stopped: boolean }
 *   POST /v1/admin/session/reset  { key }      → { sessionId: string }
 *   GET  /v1/admin/cron                        → Scheduled
 *   GET  /v1/admin/cron/runs?job=ID&limit=N    → { runs: CronRunRow[] }
 *   POST /v1/admin/cron/run       { id }       → { queued: true, nextRunAt }
 *   POST /v1/admin/cron/enable    { id, enabled } → { job: CronJobRow }
 *   GET  /v1/admin/assignments                 → { assignments: AssignmentRow[] }
 *   GET  /v1/admin/assignment?id=ID            → AssignmentDetail
 *   POST /v1/admin/assignment/answer { id, text } → { resumed: true }
 *   POST /v1/admin/assignment/cancel { id }    → { state: "cancelled" }
 *   GET  /v1/admin/models                      → ModelsView
 *   GET  /v1/admin/usage?by=day|model|origin&days=N → { by, rows: UsageRow[] }
 *   POST /v1/admin/models/reset   { provider, profileId } → { profile: ProfileRow }
 *   GET  /v1/admin/access                      → AccessView
 *   POST /v1/admin/access/approve { channel, code } → { approved: ApprovedRow }
 *   POST /v1/admin/access/deny    { channel, code } → { denied: true }
 *   GET  /v1/admin/logs?level=info&limit=N     → { lines: LogLine[] }
 *
 * The stream (`/v1/admin/events`) is read with `fetch` (EventSource cannot send a Bearer
 * header). It sends `overview` at once and whenever it changes (at most twice a second),
 * `session` when a session's state or transcript changed, `log` per log line when `logs=1`,
 * and a comment line every 15 s that nothing else was sent. The page may add `session=KEY` (the
 * session it shows); the stream ignores it and the page filters `session` events itself.
 */

/** A channel account as the overview shows it. */
export interface ChannelRow {
  name: string;
  accountId: string;
  /** "ok" | "starting" | "standby" | "stopped" | "degraded" … (the channel's own health word). */
  state: string;
  /** Why it is not ok, and what to fix (e.g. "TELEGRAM_BOT_TOKEN is not set"). */
  detail?: string;
}

/** One session's lane as the overview shows it. */
export interface LaneRow {
  sessionKey: string;
  running: boolean;
  /** "human" | "normal" | "background" of the running task, when one runs. */
  runningPriority?: string;
  queued: number;
}

/** `GET /v1/admin/overview`. */
export interface Overview {
  ready: boolean;
  uptimeMs: number;
  /** The configured model reference, provider included ("openai/gpt-…"). */
  model: string;
  provider: string;
  /** True when answers come from the built-in model simulator (no API key). */
  simulated: boolean;
  channels: ChannelRow[];
  lanes: {
    sessions: LaneRow[];
    running: number;
    pending: { human: number; normal: number; background: number };
    slots: { busy: number; total: number; reservedForHuman: number };
  };
  outbox: { pending: number; dead: number };
  spend: {
    day: string;
    spendUsd: number;
    tokens: number;
    /** The configured caps (absent: no cap). */
    dailySpendUsd?: number;
    dailySpendHardUsd?: number;
    sessionDailyTokens?: number;
  };
  sessions: number;
  cooling: Array<{ provider: string; profileId: string; reason: string | null; until: number | null }>;
}

/** A row of `GET /v1/admin/sessions`, most recent activity first. */
export interface SessionRow {
  sessionKey: string;
  sessionId: string;
  channel: string;
  /** "running" | "queued" | "idle". */
  state: "running" | "queued" | "idle";
  lastActivityAt: number;
  messages: number;
  /** Tokens billed to the session today. */
  tokensToday: number;
}

/** A transcript entry, ready to show. */
export type ThreadItem =
  | { kind: "user"; id: number; at: number; sender: string; text: string }
  | { kind: "assistant"; id: number; at: number; text: string }
  | {
      kind: "tool_call";
      id: number;
      at: number;
      callId: string;
      name: string;
      /** The arguments as JSON text, cut to 2,000 characters. */
      args: string;
    }
  | {
      kind: "tool_result";
      id: number;
      at: number;
      callId: string;
      name: string;
      /** The result cut to 2,000 characters; `chars` is how many it had. */
      text: string;
      chars: number;
      isError: boolean;
    }
  | { kind: "compaction"; id: number; at: number; summary: string; tokensBefore: number }
  /** Anything else recorded (a hook outcome, a JIT line, a note): its type and a line. */
  | { kind: "note"; id: number; at: number; type: string; text: string };

/** `GET /v1/admin/session?key=`. */
export interface SessionDetail {
  session: SessionRow & { model: string | null; mode: string; createdAt: number };
  /** Oldest first: the last `limit` items (default 200) of the current session id. */
  thread: ThreadItem[];
  runs: Array<{
    runId: string;
    trigger: string;
    startedAt: number;
    durationMs: number;
    outcome: string;
    tokens: number;
    toolCalls: number;
    error: string | null;
  }>;
}

/** A cron job as the Scheduled view shows it. */
export interface CronJobRow {
  id: number;
  name: string;
  source: string;
  /** The schedule in words ("every 90m", "cron 0 9 * * * (Europe/Berlin)", "at …"). */
  schedule: string;
  enabled: boolean;
  failing: boolean;
  nextRunAt: number | null;
  disabledReason: string | null;
  lastRun: CronRunRow | null;
}

/** One slot of a job's run ledger. */
export interface CronRunRow {
  id: number;
  jobId: number;
  /** The slot: when the run was due. */
  scheduledFor: number;
  /** "running" | "retry" | "ok" | "failed" | "skipped" | "missed". */
  state: string;
  attempts: number;
  startedAt: number | null;
  finishedAt: number | null;
  durationMs: number | null;
  tokens: number | null;
  error: string | null;
  /** Why it was skipped or missed, or what a catch-up covered. */
  note: string | null;
}

/** `GET /v1/admin/cron`. */
export interface Scheduled {
  jobs: CronJobRow[];
  wakes: Array<{ id: number; sessionKey: string; dueAt: number; reason: string }>;
  heartbeat: {
    /** "on" | "off" | "skipped: <why>". */
    state: string;
    everyMs: number;
    nextAt: number | null;
    /** Latest first. */
    beats: Array<{ at: number; outcome: string; durationMs: number; text?: string }>;
  };
}

/** An assignment in the list. */
export interface AssignmentRow {
  id: string;
  goal: string;
  /** "running" | "sleeping" | "waiting" | "paused" | "done" | "failed" | "cancelled" … */
  state: string;
  /** Why it is in that state (the last directive's reason, a pause reason, an error). */
  why: string | null;
  updatedAt: number;
  tokens: number;
  costUsd: number;
  /** The question waiting for an answer, if any. */
  question: string | null;
}

/** `GET /v1/admin/assignment?id=`. */
export interface AssignmentDetail {
  assignment: AssignmentRow & {
    sessionKey: string;
    /** The contract's checks, each in words. */
    contract: string[];
    items: Array<{ id: number; title: string; status: string; notes: string }>;
    /** The pending question's options, if it offered some. */
    options: string[];
    createdAt: number;
  };
  /** Latest first. */
  runs: Array<{
    runNo: number;
    runId: string;
    startedAt: number;
    endedAt: number | null;
    directive: string | null;
    reason: string | null;
    turns: number;
    tokens: number;
    costUsd: number;
  }>;
}

/** An auth profile's health. */
export interface ProfileRow {
  provider: string;
  profileId: string;
  state: "ok" | "cooling";
  cooldownUntil: number | null;
  cooldownReason: string | null;
  consecutiveFailures: number;
  lastErrorKind: string | null;
  lastErrorAt: number | null;
  lastUsedAt: number | null;
}

/** `GET /v1/admin/models`. */
export interface ModelsView {
  /** The configured model reference, provider included. */
  model: string;
  provider: string;
  simulated: boolean;
  /** The failover chain, first choice first ("openai/gpt-…"). */
  chain: string[];
  profiles: ProfileRow[];
}

/** A row of `GET /v1/admin/usage`: `key` is the day (YYYY-MM-DD), model or origin. */
export interface UsageRow {
  key: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** `GET /v1/admin/access`. */
export interface AccessView {
  pending: Array<{
    channel: string;
    accountId: string;
    senderId: string;
    senderName: string;
    code: string;
    createdAt: number;
    expiresAt: number;
  }>;
  approved: ApprovedRow[];
  /** Per channel account: its DM policy and the configured allowlist. */
  policies: Array<{ channel: string; accountId: string; dmPolicy: string; allowFrom: string[] }>;
}

/** A sender let in by pairing. */
export interface ApprovedRow {
  channel: string;
  senderId: string;
  senderName: string;
  approvedAt: number;
}

/** One log line. */
export interface LogLine {
  /** Sequence number in this process (the stream resumes after it). */
  seq: number;
  time: number;
  level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
  name: string;
  msg: string;
  /** The line's other fields, as JSON text (cut to 2,000 characters). */
  fields: string;
}

/** What `/v1/admin/events` sends: the SSE `event:` name and its JSON `data:`. */
export type AdminStreamEvent =
  | { event: "overview"; data: Overview }
  | { event: "session"; data: { sessionKey: string; state: SessionRow["state"] } }
  | { event: "log"; data: LogLine };
