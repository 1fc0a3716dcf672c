/**
 * What `GET /v1/status` answers (and `switchyard status` prints): readiness, the model and
 * whether it is simulated, lanes and model-call slots, inbox and outbox counts (chat commands
 * and group context apart from refusals), runs, sessions, undelivered replies, channels.
 */
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { ChannelDirectory } from "./channel-directory.js";
import type { Gateway } from "./gateway.js";
import type { LaneQueue } from "./lanes/lane-queue.js";
import type { ModelSlotPool } from "./lanes/types.js";

/** What the snapshot reads. */
export interface StatusSources {
  store: Store;
  lanes: LaneQueue;
  pool: Pick<ModelSlotPool, "inUse">;
  gateway: Pick<Gateway, "ready" | "startedAt">;
  channels: ChannelDirectory;
  clock: Clock;
  /** The configured model reference and its provider. */
  model: string;
  provider: string;
  simulated: boolean;
  maxConcurrent: number;
  workspaceDir: string;
}

/** The status body (see the file header). */
export async function statusSnapshot(s: StatusSources) {
  const { store } = s;
  const [inboxStates, rejected, outbox, runs, dead] = await Promise.all([
    store.inbox.countByState(),
    store.inbox.countRejected(),
    store.outbox.countByState(),
    store.runs.countByOutcome(),
    store.outbox.listByState("dead", 20),
  ]);
  // `rejected` is split by why: a chat command or group context is not a refusal.
  const { rejected: _rejected, ...unsplit } = inboxStates;
  return {
    ready: s.gateway.ready,
    uptimeMs: s.clock.now() - s.gateway.startedAt,
    model: s.model,
    provider: s.provider,
    simulated: s.simulated,
    workspace: s.workspaceDir,
    lanes: { ...s.lanes.stats(), slotsInUse: s.pool.inUse, maxConcurrent: s.maxConcurrent },
    inbox: { ...unsplit, ...rejected },
    outbox,
    runs,
    sessions: await store.sessions.count(),
    deadReplies: dead.map((r) => ({
      id: r.id,
      channel: r.target.channel,
      chatId: r.target.chatId,
      attempts: r.attempts,
      error: r.lastError,
      text: r.text.slice(0, 80),
    })),
    channels: s.channels.hosted().map(({ channel, accountId }) => ({ name: channel, accountId })),
  };
}
