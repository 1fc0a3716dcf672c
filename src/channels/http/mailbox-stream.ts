/**
 * `GET <base>/events?sender=`: one sender's mailbox as server-sent events, so a client sees what
 * reaches it in the background (a cron answer, a heartbeat alert, an assignment's report, a
 * reply committed after its request went away). Each reply is one `reply` event whose `id` is
 * its mailbox cursor; a client that reconnects with `Last-Event-ID` (or `?after=`) gets what it
 * missed first, in order, and nothing twice. Without either it starts at the mailbox's end: the
 * first event, `ready`, carries that cursor as its id (also when a given cursor is beyond the
 * end: it came from another database, and reading on after it would show nothing). The stream reads the store, so replies
 * sent by another gateway process on the same database arrive too (within `pollMs`). Live
 * events of this process without a cursor (`subagent`: the sender's helpers at work) are
 * written to the sender's open streams as they happen (`broadcast`); a reconnect does not replay them.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError } from "../../http/server.js";
import type { AnswerSource, ChannelName, MailboxEntry } from "../types.js";
import { normalizeSender, senderProblem } from "./sender.js";
import { openSse } from "./sse.js";

/** Options of {@link MailboxStreams}. */
export interface MailboxStreamsOptions {
  channel: ChannelName;
  answers: AnswerSource;
  /** How often an open stream reads the store when no in-process hint came (default 1,000 ms). */
  pollMs?: number;
  /** SSE keep-alive comment interval (default 15 s). */
  keepAliveMs?: number;
}

/** The `data` of a `reply` event. */
export type MailboxEventData = Omit<MailboxEntry, "id">;

/** One SSE frame with an id. */
function frame(event: string, id: number, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Owns the open mailbox streams of one channel: serves them and ends them all on stop. */
export class MailboxStreams {
  readonly #o: MailboxStreamsOptions;
  readonly #open = new Set<() => void>();
  /** The open streams' writers, by sender. */
  readonly #writers = new Map<string, Set<(frames: string) => void>>();

  constructor(options: MailboxStreamsOptions) {
    this.#o = options;
  }

  /** Ends every open stream (the channel stops); clients reconnect and resume by cursor. */
  endAll(): void {
    for (const end of [...this.#open]) end();
  }

  /** Writes `frames` (live events without a cursor) to every open stream of `sender`. */
  broadcast(sender: string, frames: string): void {
    for (const write of this.#writers.get(sender) ?? []) write(frames);
  }

  /** Serves one stream until the client goes away or {@link endAll}. */
  async serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const raw = url.searchParams.get("sender") ?? undefined;
    const problem = senderProblem(raw);
    if (problem) throw new HttpError(400, `${problem} in the query`, "invalid_sender", "sender");
    const sender = normalizeSender(raw as string);
    const given = cursorOf(req.headers["last-event-id"], url.searchParams.get("after"));
    const { answers, channel } = this.#o;
    const last = await answers.mailboxEnd(channel, sender);
    // A cursor beyond the end comes from another database (the home was reset): start at its end.
    let after = given === undefined || given > last ? last : given;
    const sse = openSse(res, this.#o.keepAliveMs);
    let ended = false;
    let wake: (() => void) | undefined;
    /** A hint came since the last read began: read again before waiting. */
    let hinted = false;
    let timer: NodeJS.Timeout | undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      wake?.();
      sse.end("");
    };
    const unsubscribe = answers.onReplies?.(() => {
      hinted = true;
      wake?.();
    });
    this.#open.add(end);
    res.once("close", end);
    const writers = this.#writers.get(sender) ?? new Set();
    this.#writers.set(sender, writers);
    const write = (frames: string) => {
      if (!ended) sse.write(frames);
    };
    try {
      sse.write(frame("ready", after, { after }));
      writers.add(write);
      while (!ended) {
        hinted = false;
        const entries = await answers.listReplies(channel, sender, after);
        for (const { id, ...data } of entries) {
          if (ended) break;
          sse.write(frame("reply", id, data satisfies MailboxEventData));
          after = id;
        }
        if (entries.length > 0 || hinted || ended) continue; // read until a read finds nothing new
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, this.#o.pollMs ?? 1_000);
        });
        clearTimeout(timer);
        wake = undefined;
      }
    } catch {
      // The store failed: end the stream; the client reconnects and resumes from its cursor.
    } finally {
      writers.delete(write);
      if (writers.size === 0 && this.#writers.get(sender) === writers) this.#writers.delete(sender);
      clearTimeout(timer);
      unsubscribe?.();
      this.#open.delete(end);
      res.off("close", end);
      end();
    }
  }
}

/** The cursor to resume after: `Last-Event-ID` wins over `?after=`; undefined when neither is given. */
function cursorOf(header: string | string[] | undefined, query: string | null): number | undefined {
  const [raw, field] =
    typeof header === "string" && header !== "" ? [header, "Last-Event-ID"] : [query, '"after"'];
  if (raw === null || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new HttpError(
      400,
      `${field} must be a whole number (found ${JSON.stringify(raw.slice(0, 40))})`,
      "invalid_after",
    );
  return value;
}
