/**
 * `switchyard status`: what the running gateway is doing — readiness, model (and whether it is
 * simulated), turns and model calls, queues, runs, and replies that could not be delivered. If no
 * gateway answers, the database in the home folder is read directly, with the configuration the
 * gateway runs (or ran) with. `--json` prints JSON in every case. Exit 1 when no gateway answers.
 */
import { ConfigError } from "../util/config-error.js";
import { existsSync } from "node:fs";
import { join } from "node:path";

import { chooseProvider } from "../config/provider-choice.js";
import {
  type NodeStatus,
  coolingLines,
  coolingProfiles,
  nodeLines,
  type SpendCaps,
  spendSummary,
} from "../gateway/status-snapshot.js";
import { resolveHome, workspaceDirOf } from "../config/home.js";
import { heartbeatCondition, type HeartbeatCondition } from "../harness/heartbeat.js";
import { readFileSync } from "node:fs";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import { type FoundGateway, describeSource, findGateway, ignoredRuntimeNote } from "./find-gateway.js";
import { GatewayRequestError, requestGateway } from "./gateway-client.js";
import type { CliOptions } from "./main.js";

/** How long the gateway may take to answer /v1/status. */
const STATUS_TIMEOUT_MS = 3_000;

/** How many undelivered replies are listed. */
const DEAD_LISTED = 20;

/** An undelivered reply, as /v1/status lists it. */
interface DeadReply {
  id: number;
  channel: string;
  chatId: string;
  attempts: number;
  error: string | null;
  text: string;
}

/** The part of /v1/status this command prints. */
interface StatusBody {
  ready: boolean;
  uptimeMs: number;
  model: string;
  simulated: boolean;
  lanes: {
    running: number;
    lanes: number;
    slotsInUse: number;
    maxConcurrent: number;
    pending: Record<string, number>;
  };
  inbox: Record<string, number>;
  outbox: Record<string, number>;
  runs: Record<string, number>;
  sessions: number;
  deadReplies: DeadReply[];
  /** Each channel account, with its connection state where it has one. */
  channels?: Array<{ name: string; accountId: string; state?: string; detail?: string }>;
  auth?: { cooling: CoolingProfile[] };
  heartbeat?: HeartbeatLine;
  /** Every gateway process registered in the store (several on one database: a cluster). */
  nodes?: NodeStatus[];
  spend?: {
    day: string;
    spendUsd: number;
    tokens: number;
    limits: SpendCaps;
  };
}

type CoolingProfile = ReturnType<typeof coolingProfiles>[number];

/** The heartbeat as /v1/status reports it (capabilities/heartbeat/heartbeat.ts `HeartbeatStatus`). */
interface HeartbeatLine extends HeartbeatCondition {
  everyMs: number;
  nextBeatAt?: number;
  lastBeat?: { at: number; outcome: string };
}

/** What `status --json` prints when no gateway answers. */
interface OfflineReport {
  running: false;
  url: string | null;
  source: FoundGateway["source"] | null;
  reason: string;
  /** A runtime file whose gateway is gone: `{pid, path, startedAt}`. */
  staleRuntimeFile: { pid: number; path: string; startedAt: string } | null;
  /** The configuration read for the model line, or null on the defaults. */
  config: string | null;
  configProblem: string | null;
  database: string | null;
  databaseProblem: string | null;
  /** The model a gateway would use with that configuration. */
  model: string | null;
  simulated: boolean | null;
  inbox: Record<string, number> | null;
  outbox: Record<string, number> | null;
  deadReplies: DeadReply[];
  /** Auth profiles cooling now (read from the database). */
  auth?: { cooling: CoolingProfile[] };
  /** The heartbeat a gateway would run, from the configuration and HEARTBEAT.md. */
  heartbeat?: HeartbeatLine;
}

/** Runs `switchyard status`; resolves with the exit code. */
export async function runStatus(options: CliOptions): Promise<number> {
  let found: FoundGateway;
  try {
    found = findGateway(options);
  } catch (err) {
    if (!(err instanceof ConfigError) || !options.json) throw err;
    // The address depends on a configuration that does not load: still JSON, as promised.
    const dbPath = join(resolveHome(options.home, process.env, process.cwd()), "switchyard.db");
    printJson({
      ...emptyReport(),
      reason: err.message,
      configProblem: err.message,
      database: existsSync(dbPath) ? dbPath : null,
    });
    return 2;
  }
  let body: StatusBody;
  try {
    const res = await requestGateway(found, "/v1/status", { timeoutMs: STATUS_TIMEOUT_MS });
    if (!res.ok) await res.body?.cancel();
    const parsed: unknown = res.ok ? await res.json().catch(() => undefined) : undefined;
    if (!isStatusBody(parsed))
      return offlineStatus(
        options,
        found,
        `${found.url} answered HTTP ${res.status} to /v1/status, not a switchyard gateway's status`,
      );
    body = parsed;
  } catch (err) {
    if (!(err instanceof GatewayRequestError)) throw err;
    if (err.kind === "unreachable") return offlineStatus(options, found, err.message);
    process.stderr.write(`switchyard status: ${err.message}\n`);
    if (options.json) printJson({ running: true, url: found.url, source: found.source, reason: err.message });
    return 1;
  }
  if (options.json) {
    printJson({ running: true, url: found.url, source: found.source, ...body });
    return 0;
  }
  const b = body;
  const waiting = b.lanes.pending;
  const lines = [
    `gateway   ${found.url} — ${b.ready ? "ready" : "NOT ready"}, up ${Math.round(b.uptimeMs / 1000)} s (${describeSource(found)})`,
    `model     ${b.model}${b.simulated ? "  ** SIMULATED replies: no API key configured **" : ""}`,
    `turns     ${b.lanes.running} in progress (at most one per session); waiting to start: ${waiting.human ?? 0} human / ${waiting.normal ?? 0} normal / ${waiting.background ?? 0} background`,
    `calls     ${b.lanes.slotsInUse} model calls in flight, of ${b.lanes.maxConcurrent} slots (lanes.maxConcurrent)`,
    `inbox     ${formatInbox(b.inbox)}`,
    `outbox    ${formatCounts(b.outbox)}`,
    `runs      ${formatCounts(b.runs)}; ${b.sessions} sessions`,
    ...channelLines(b.channels ?? []),
    ...(b.heartbeat ? [heartbeatLine(b.heartbeat, Date.now())] : []),
    ...(b.spend ? [`spend     today (${b.spend.day} UTC): ${spendSummary(b.spend, b.spend.limits)}`] : []),
    ...coolingLines(b.auth?.cooling ?? [], Date.now()),
    ...deadLines(b.deadReplies),
    ...nodeLines(b.nodes ?? [], Date.now()),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** No gateway answers: the database and the configuration, read directly. Always exit 1. */
async function offlineStatus(options: CliOptions, found: FoundGateway, reason: string): Promise<number> {
  const report: OfflineReport = { ...emptyReport(), url: found.url, source: found.source, reason };
  const stale = found.runtime.type === "stale" ? found.runtime : undefined;
  if (stale)
    report.staleRuntimeFile = { pid: stale.info.pid, path: stale.path, startedAt: stale.info.startedAt };
  const { config, file, problem } = found.clientConfig;
  report.config = file ?? null;
  if (config) {
    report.model = config.agent.model;
    report.simulated = chooseProvider(config, process.env).simulated;
    const hb = join(workspaceDirOf(config, found.home), "HEARTBEAT.md");
    let checklist: string | undefined;
    try {
      checklist = readFileSync(hb, "utf8");
    } catch {
      checklist = undefined;
    }
    report.heartbeat = {
      ...heartbeatCondition({ everyMs: config.heartbeat.everyMs, checklist }),
      everyMs: config.heartbeat.everyMs,
    };
  } else if (problem) report.configProblem = problem.message;

  const dbPath = join(found.home, "switchyard.db");
  if (existsSync(dbPath)) {
    report.database = dbPath;
    try {
      const store = openSqliteStore({ path: dbPath, readonly: true });
      try {
        const [states, rejected, outbox, dead, cooling] = await Promise.all([
          store.inbox.countByState(),
          store.inbox.countRejected(),
          store.outbox.countByState(),
          store.outbox.listByState("dead", DEAD_LISTED),
          store.authProfiles.list(),
        ]);
        report.auth = { cooling: coolingProfiles(cooling, Date.now()) };
        // The same split as the gateway's /v1/status: commands and group context are not refusals.
        const { rejected: _rejected, ...unsplit } = states;
        report.inbox = { ...unsplit, ...rejected };
        report.outbox = outbox;
        report.deadReplies = dead.map((d) => ({
          id: d.id,
          channel: d.target.channel,
          chatId: d.target.chatId,
          attempts: d.attempts,
          error: d.lastError,
          text: d.text.slice(0, 80),
        }));
      } finally {
        await store.close();
      }
    } catch (err) {
      report.databaseProblem = err instanceof Error ? err.message : String(err);
    }
  }

  if (options.json) {
    printJson(report);
    return 1;
  }
  const lines = [`${reason} (${describeSource(found)})`];
  const note = ignoredRuntimeNote(found.runtime);
  if (note) lines.push(note);
  if (!report.database) {
    lines.push(`no database at ${dbPath} either: the gateway has not run with this home folder`);
    if (report.heartbeat) lines.push(heartbeatLine(report.heartbeat, Date.now()));
    process.stdout.write(`${lines.join("\n")}\n`);
    return 1;
  }
  lines.push(`database  ${dbPath} (gateway stopped)`);
  if (report.model !== null) {
    lines.push(
      `model     ${report.model}${report.simulated ? "  ** replies would be SIMULATED: no API key configured **" : ""}`,
    );
  } else
    lines.push(`model     unknown: ${report.configProblem ?? "no configuration"} (see switchyard doctor)`);
  if (report.databaseProblem) lines.push(`database problem: ${report.databaseProblem}`);
  if (report.heartbeat) lines.push(heartbeatLine(report.heartbeat, Date.now()));
  if (report.inbox) lines.push(`inbox     ${formatInbox(report.inbox)}`);
  if (report.outbox) lines.push(`outbox    ${formatCounts(report.outbox)}`);
  lines.push(...coolingLines(report.auth?.cooling ?? [], Date.now()));
  lines.push(...deadLines(report.deadReplies));
  process.stdout.write(`${lines.join("\n")}\n`);
  return 1;
}

/**
 * `heartbeat on, every 30 min; next beat 14:30:00 (in 12 min); last 14:00:00 enqueued`, or SKIPPED
 * or off with the reason.
 */
export function heartbeatLine(h: HeartbeatLine, now: number): string {
  if (h.state === "off") return `heartbeat off (${h.reason ?? "disabled"})`;
  const every = `every ${formatEvery(h.everyMs)}`;
  const next =
    h.nextBeatAt !== undefined
      ? `; next beat ${new Date(h.nextBeatAt).toTimeString().slice(0, 8)} (in ${formatEvery(Math.max(0, h.nextBeatAt - now))})`
      : "";
  const last = h.lastBeat
    ? `; last ${new Date(h.lastBeat.at).toTimeString().slice(0, 8)} ${h.lastBeat.outcome.replace("_", " ")}`
    : "";
  return h.state === "skipped"
    ? `heartbeat SKIPPED: ${h.reason ?? "nothing to check"}; ${every}${next}${last}`
    : `heartbeat on, ${every}${next}${last}`;
}

/** 30 min, 2 h, 45 s, 1 h 30 min. */
function formatEvery(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  return m % 60 === 0 ? `${m / 60} h` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

function emptyReport(): OfflineReport {
  return {
    running: false,
    url: null,
    source: null,
    reason: "",
    staleRuntimeFile: null,
    config: null,
    configProblem: null,
    database: null,
    databaseProblem: null,
    model: null,
    simulated: null,
    inbox: null,
    outbox: null,
    deadReplies: [],
  };
}

function deadLines(dead: DeadReply[]): string[] {
  if (dead.length === 0) return [];
  return [
    "undelivered replies (dead):",
    ...dead.map(
      (d) =>
        `  #${d.id} ${d.channel}:${d.chatId} after ${d.attempts} attempts — ${d.error ?? "?"} — "${d.text}"`,
    ),
  ];
}

/** The inbox keys in reading order, with the words printed for them. */
const INBOX_LABELS: ReadonlyArray<readonly [string, string]> = [
  ["answered", "answered"],
  ["commands", "commands"],
  ["groupContext", "group context"],
  ["refused", "refused"],
  ["queued", "queued"],
  ["running", "running"],
  ["received", "received"],
  ["failed", "failed"],
];

/** `answered 3, commands 2, group context 0, refused 1, queued 0, …`; unknown keys last, as they are. */
function formatInbox(counts: Record<string, number>): string {
  const known = new Set(INBOX_LABELS.map(([key]) => key));
  const parts = INBOX_LABELS.filter(([key]) => key in counts).map(
    ([key, label]) => `${label} ${counts[key]}`,
  );
  for (const [key, n] of Object.entries(counts)) if (!known.has(key)) parts.push(`${key} ${n}`);
  return parts.join(", ");
}

function formatCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
}

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Enough of the shape to print it; anything else answering on the port is not a gateway. */
function isStatusBody(value: unknown): value is StatusBody {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Partial<Record<keyof StatusBody, unknown>>;
  return (
    typeof v.model === "string" &&
    typeof v.lanes === "object" &&
    v.lanes !== null &&
    typeof v.inbox === "object" &&
    typeof v.outbox === "object" &&
    typeof v.runs === "object" &&
    Array.isArray(v.deadReplies)
  );
}

/** The channels line, then one WARNING line per channel that stopped (saying what to fix). */
function channelLines(channels: NonNullable<StatusBody["channels"]>): string[] {
  if (channels.length === 0) return [];
  const listed = channels.map((c) => `${c.name}:${c.accountId}${c.state ? ` ${c.state}` : ""}`).join(", ");
  return [
    `channels  ${listed}`,
    ...channels
      .filter((c) => c.state === "stopped" && c.detail)
      .map((c) => `  WARNING: ${c.name}:${c.accountId} stopped: ${c.detail}`),
  ];
}
