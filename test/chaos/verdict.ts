/**
 * The checker: turns what the chats finally show and the messages sent into the verdict, and the
 * verdict and the run's records into the printed summary. Pure: the unit test builds chat states
 * by hand.
 *
 * Each bot message is traced to the message its leading tag names. A sent message is lost without
 * a complete answer in its chat; duplicated with more than one bot message carrying (part of) its
 * answer (a leftover preview — a partial answer left behind — counts, and is also counted apart);
 * on Telegram an extra copy is Telegram's own limit (no way to look a sent message up), reported
 * apart, only when the process that posted it never recorded it — the store read after the next
 * kill does not know it — and that kill came within `recordLimitMs` of the post (a process that
 * lived on without recording it is the gateway's bug). Two answers in the wrong order, an answer
 * in another chat, and a restart over STALL_MS to an inherited conversation's answer are problems.
 */
import { type AnswerShape, classify, userText } from "./answers.js";
import { STALL_MS } from "./restart-figures.js";
import type {
  ChannelName,
  ChatView,
  ChaosSummary,
  KillRecord,
  Problem,
  RestartFigure,
  SentMessage,
  ShownMessage,
  VerdictCounts,
} from "./types.js";

/**
 * A post stored this soon after a kill came from the killed process: no successor is up so
 * soon (start-up alone takes longer).
 */
const DEAD_REQUEST_MS = 200;

/** Problems listed in the summary's `details`. */
export const MAX_DETAILS = 20;

export interface VerdictInput {
  channel: ChannelName;
  sent: readonly SentMessage[];
  /** What each chat shows at the end. */
  chats: readonly ChatView[];
  kills: readonly KillRecord[];
  figures: readonly RestartFigure[];
  /** Telegram: a copy its poster had this long to record and did not is the gateway's bug; default 2,000. */
  recordLimitMs?: number;
}

/** The verdict's counts and its problems (all of them, in the order found). */
export interface Verdict extends VerdictCounts {
  problems: Problem[];
}

interface Carrier {
  /** Position in its chat. */
  pos: number;
  shape: AnswerShape;
  message: ShownMessage;
}

/** Judges the final chat state (see the file header). */
export function judge(input: VerdictInput): Verdict {
  const recordLimitMs = input.recordLimitMs ?? 2_000;
  const problems: Problem[] = [];
  const sentKeys = new Set(input.sent.map((m) => `${m.chat}:${m.seq}`));
  const carriers = new Map<string, Carrier[]>();
  const wrongChats = new Set<string>();
  let unrecognized = 0;
  for (const view of input.chats) {
    view.messages.forEach((message, pos) => {
      const traced = classify(message.text);
      const key = traced ? `${traced.tag.chat}:${traced.tag.seq}` : "";
      if (!traced || !sentKeys.has(key) || traced.shape === "other") {
        unrecognized++;
        problems.push({ kind: "unrecognized", chat: view.chat, shows: cut(message.text) });
        return;
      }
      if (traced.tag.chat !== view.chat) {
        wrongChats.add(key);
        problems.push({
          kind: "wrong-chat",
          chat: view.chat,
          message: userText(traced.tag),
          shows: cut(message.text),
        });
        return;
      }
      const list = carriers.get(key) ?? [];
      list.push({ pos, shape: traced.shape, message });
      carriers.set(key, list);
    });
  }

  // The poster is the process the next kill ended, or — for a post stored within
  // DEAD_REQUEST_MS after a kill, before any successor could have posted — the one that kill
  // ended (its request was on the wire). Either way the store read after the next kill shows
  // whether any process ever recorded it.
  const inWindow = (message: ShownMessage) => {
    const { postedAtMs: at, storeKey } = message;
    if (input.channel !== "telegram" || at === undefined || storeKey === undefined) return false;
    const next = input.kills.find((k) => k.atMs >= at);
    if (!next?.recorded || next.recorded.includes(storeKey)) return false;
    const onTheWire = input.kills.some((k) => k.atMs < at && at - k.atMs <= DEAD_REQUEST_MS);
    return onTheWire || next.atMs - at <= recordLimitMs;
  };
  let answered = 0;
  let lost = 0;
  let duplicated = 0;
  let telegramWindow = 0;
  let leftoverPreviews = 0;
  /** Per chat: [seq, position of its answer] of the answered messages. */
  const answerAt = new Map<number, Array<[number, number]>>();
  for (const sent of input.sent) {
    const name = userText(sent);
    const mine = carriers.get(`${sent.chat}:${sent.seq}`) ?? [];
    const primary = mine.find((c) => c.shape === "complete");
    if (primary) {
      answered++;
      const list = answerAt.get(sent.chat) ?? [];
      list.push([sent.seq, primary.pos]);
      answerAt.set(sent.chat, list);
    } else {
      lost++;
      problems.push({
        kind: "lost",
        chat: sent.chat,
        message: name,
        shows: shows(mine) || "no bot message for it",
      });
    }
    const leftovers = mine.filter((c) => c.shape === "partial" && !inWindow(c.message));
    leftoverPreviews += leftovers.length;
    if (mine.length < 2) continue;
    // Copies their poster never recorded before it was killed; the one copy left is its answer.
    // Nothing else left over: Telegram's window explains them all.
    if (mine.filter((c) => !inWindow(c.message)).length <= 1) {
      telegramWindow++;
      const gaps = mine
        .filter((c) => inWindow(c.message))
        .map((c) => {
          const at = c.message.postedAtMs as number;
          const next = input.kills.find((k) => k.atMs >= at);
          return next ? `${Math.round(next.atMs - at)} ms` : "?";
        });
      problems.push({
        kind: "telegram-window",
        chat: sent.chat,
        message: name,
        shows: `${shows(mine)} (unrecorded, posted ${gaps.join(", ")} before the next kill)`,
      });
    } else {
      duplicated++;
      const kind = leftovers.length > 0 ? "leftover-preview" : "duplicated";
      problems.push({ kind, chat: sent.chat, message: name, shows: shows(mine) });
    }
  }

  let outOfOrder = 0;
  for (const [chat, list] of answerAt) {
    list.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < list.length; i++) {
      const [earlier, earlierAt] = list[i - 1] as [number, number];
      const [later, laterAt] = list[i] as [number, number];
      if (laterAt > earlierAt) continue;
      outOfOrder++;
      problems.push({
        kind: "out-of-order",
        chat,
        message: userText({ chat, seq: later }),
        shows: `answered before ${userText({ chat, seq: earlier })} (chat positions ${laterAt} < ${earlierAt})`,
      });
    }
  }

  const stalls = stallsOf(input.figures, problems);
  return {
    answered,
    lost,
    duplicated,
    telegramWindow,
    leftoverPreviews,
    outOfOrder,
    wrongChat: wrongChats.size,
    unrecognized,
    ...stalls,
    problems,
  };
}

/**
 * Per restart the worst figure: restart → answer beyond the model, start-up included. A stall is a
 * wait over STALL_MS after "listening on" (model time excluded). Censored figures count only above it.
 */
function stallsOf(
  figures: readonly RestartFigure[],
  problems: Problem[],
): Pick<Verdict, "stalls" | "restartToAnswerMs"> {
  const worst = new Map<number, RestartFigure>();
  for (const f of figures) {
    if (f.censored && f.afterListeningMs <= STALL_MS) continue; // cut short by the next kill: tells nothing
    const seen = worst.get(f.kill);
    if (!seen || f.ms > seen.ms) worst.set(f.kill, f);
  }
  const values = [...worst.values()].map((f) => f.ms).sort((a, b) => a - b);
  const waited = new Map<number, RestartFigure>();
  for (const f of figures) {
    const seen = waited.get(f.kill);
    if (f.afterListeningMs > STALL_MS && (!seen || f.afterListeningMs > seen.afterListeningMs))
      waited.set(f.kill, f);
  }
  let stalls = 0;
  for (const f of waited.values()) {
    stalls++;
    const bound = f.censored ? "at least " : "";
    problems.push({
      kind: "stall",
      chat: f.chat,
      shows: `restart after kill ${f.kill + 1}: ${bound}${Math.round(f.afterListeningMs)} ms from "listening on" to this chat's next answer (model time excluded)`,
    });
  }
  const p50 = values.length > 0 ? (values[Math.floor((values.length - 1) / 2)] as number) : null;
  const max = values.length > 0 ? (values.at(-1) as number) : null;
  return {
    stalls,
    restartToAnswerMs: {
      p50: p50 === null ? null : Math.round(p50),
      max: max === null ? null : Math.round(max),
    },
  };
}

/** The run's records and the verdict as the printed summary. */
export function summarize(run: {
  channel: ChannelName;
  seed: number;
  chats: number;
  sent: readonly SentMessage[];
  kills: readonly KillRecord[];
  verdict: Verdict;
  durationMs: number;
  notes: string[];
}): ChaosSummary {
  const killsByMoment: Record<string, number> = {};
  for (const k of run.kills) {
    const name = k.missed ? `${k.missed} (missed: random)` : k.moment;
    killsByMoment[name] = (killsByMoment[name] ?? 0) + 1;
  }
  const { problems, ...counts } = run.verdict;
  return {
    channel: run.channel,
    seed: run.seed,
    kills: run.kills.length,
    killsByMoment,
    messages: run.sent.length,
    chats: run.chats,
    ...counts,
    durationS: Math.round(run.durationMs / 100) / 10,
    details: sample(problems, MAX_DETAILS),
    notes: run.notes,
  };
}

/** True when the run passes: nothing lost, duplicated, out of order, in the wrong chat or stalled. */
export function passed(
  summary: Pick<ChaosSummary, "lost" | "duplicated" | "outOfOrder" | "wrongChat" | "stalls">,
): boolean {
  return (
    summary.lost === 0 &&
    summary.duplicated === 0 &&
    summary.outOfOrder === 0 &&
    summary.wrongChat === 0 &&
    summary.stalls === 0
  );
}

/** Up to `max` problems, taking each kind in turn (in the order found within a kind). */
function sample(problems: readonly Problem[], max: number): Problem[] {
  const byKind = new Map<string, Problem[]>();
  for (const p of problems) byKind.set(p.kind, [...(byKind.get(p.kind) ?? []), p]);
  const queues = [...byKind.values()];
  const picked: Problem[] = [];
  for (let i = 0; picked.length < max && queues.some((q) => i < q.length); i++) {
    for (const q of queues) if (i < q.length && picked.length < max) picked.push(q[i] as Problem);
  }
  return picked;
}

function shows(carriers: Carrier[]): string {
  return carriers.map((c) => `#${c.pos} ${c.shape}: "${cut(c.message.text)}"`).join(" | ");
}

function cut(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
