/**
 * One planned kill: waits for its moment in the life of the current gateway process, then
 * SIGKILLs it in the same turn of the event loop that observed the moment (the fakes and the
 * model tap run in this process and report synchronously). An aimed moment that does not come
 * within AIM_LIMIT_MS is given up: the kill lands then, recorded as missed.
 */
import { classify, userText } from "./answers.js";
import type { GatewayLife } from "./gateway-runner.js";
import type { PlannedKill } from "./kill-plan.js";
import type { ModelTap, TapEvent } from "./model-tap.js";
import type { Timeline } from "./timeline.js";
import type { BotWrite, ChatPlatform, HeldReply, KillRecord } from "./types.js";
import { delay, firstEvent, limited, WaitAborted } from "./waits.js";

/** Longest wait for an aimed moment, in ms. */
export const AIM_LIMIT_MS = 10_000;

export interface KillerDeps {
  platform: ChatPlatform;
  tap: ModelTap;
  timeline: Timeline;
  now: () => number;
}

/**
 * Waits for `plan`'s moment in `life` (which must be listening already, except for a platform's
 * own moments such as Discord's `after-ready`), kills it, and returns the record. Rejects with
 * WaitAborted when `signal` aborts (the run is torn down, or the process exited by itself).
 */
export async function killAtMoment(
  life: GatewayLife,
  plan: PlannedKill,
  deps: KillerDeps,
  signal: AbortSignal,
): Promise<KillRecord> {
  const { platform, tap } = deps;
  const aim = limited(signal, AIM_LIMIT_MS);
  const writes = (test: (w: BotWrite) => string | undefined) =>
    firstEvent<BotWrite, string>((l) => platform.onWrite(l), test, aim);
  const completeWrite = (w: BotWrite) => {
    const traced = w.kind === "delete" ? undefined : classify(w.text);
    return traced?.shape === "complete"
      ? `${userText(traced.tag)}: complete answer stored (${w.kind})`
      : undefined;
  };
  let held: HeldReply | undefined;
  let observed: string | undefined;
  try {
    switch (plan.moment) {
      case "random":
        await delay(plan.delayMs, signal);
        observed = `${plan.delayMs} ms after listening`;
        break;
      case "mid-stream":
        observed = await firstEvent<TapEvent, string>(
          (l) => tap.onEvent(l),
          (e) =>
            e.type === "delta" && e.tag && e.deltas >= plan.chunks && e.startMs >= life.spawnedAtMs
              ? `${userText(e.tag)}: ${e.deltas} chunks streamed`
              : undefined,
          aim,
        );
        break;
      case "preview-posted":
        observed = await writes((w) => {
          const traced = w.kind === "post" ? classify(w.text) : undefined;
          return traced?.shape === "partial" ? `${userText(traced.tag)}: preview posted` : undefined;
        });
        break;
      case "reply-stored":
        observed = await writes(completeWrite);
        break;
      case "reply-held":
        held = platform.holdNextReply((text) => classify(text)?.shape === "complete");
        observed = await writes(completeWrite);
        observed += held.caught() ? ", its answer held" : ", not held (it came first)";
        break;
      default:
        observed = await platform.watchOwn(plan.moment, aim);
    }
  } catch (error) {
    held?.disarm();
    if (!(error instanceof WaitAborted) || signal.aborted) throw error;
    // The aimed moment did not come in time: kill now, and say so.
    return kill(life, deps, {
      moment: "random",
      missed: plan.moment,
      observed: `no ${plan.moment} within ${AIM_LIMIT_MS} ms`,
    });
  }
  const record = kill(life, deps, { moment: plan.moment, observed });
  held?.disarm(); // after the kill: the held answer can no longer reach the gateway
  return record;
}

function kill(
  life: GatewayLife,
  deps: KillerDeps,
  what: Pick<KillRecord, "moment" | "missed" | "observed">,
): KillRecord {
  const chatsMidTurn = deps.timeline.chatsMidTurn();
  life.kill();
  return {
    atMs: deps.now(),
    ...what,
    ...(life.listeningAtMs !== undefined ? { listeningAtMs: life.listeningAtMs } : {}),
    chatsMidTurn,
  };
}
