/**
 * Streaming previews (`streaming: edit`), for every platform that can edit a message it sent:
 * while a turn runs, one message shows its text so far, edited at most once per interval; the
 * reply's first chunk then replaces it. A preview
 * belongs to one turn (chat, topic and the message it answers), so a followup turn gets its own.
 * Edits of one preview run one after another; taking a preview for the final text stops the
 * timer and waits for the edit in flight, so a partial edit can never land after the final one.
 */
import { type Clock, systemClock, type TimerHandle } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** Which turn a preview belongs to. */
export interface PreviewTarget {
  chatId: string;
  threadId?: string;
  /** Platform id of the message the turn answers; the preview replies to it. */
  replyTo?: string;
}

/** The two platform calls a preview needs; each channel adapts its own API. */
export interface PreviewApi {
  /** Posts the preview's first text where the turn's reply will go; resolves its message id. */
  post(target: PreviewTarget, text: string): Promise<string>;
  /** Replaces the text of the preview message `messageId`. */
  update(target: PreviewTarget, messageId: string, text: string): Promise<unknown>;
}

export interface StreamingPreviewsOptions {
  /** The API to call; undefined while the channel is not started (deltas are then dropped). */
  api: () => PreviewApi | undefined;
  /** Least time between two edits of one preview, in ms (default 1000). */
  editIntervalMs?: number;
  /** A preview never taken (its turn was interrupted) is forgotten after this long, in ms (default 1 h). */
  ttlMs?: number;
  /** Longest preview text; longer text is cut (default 4096). */
  maxChars?: number;
  /** Time source and edit timers (default `systemClock`). */
  clock?: Clock;
  logger: Logger;
}

/** A preview handed to the final send. */
export interface TakenPreview {
  messageId: string;
  /** The final text is in place: forget the preview. */
  done(): void;
}

interface Preview {
  /** Set once the preview message exists. */
  id: string | undefined;
  /** Everything streamed so far. */
  text: string;
  /** What the message shows now. */
  shown: string;
  createdAt: number;
  lastEditAt: number;
  timer: TimerHandle | undefined;
  /** The send or edit in flight; edits are chained on it, so they never overlap. */
  inflight: Promise<void>;
  /** The final text is being put in place: no more partial edits. */
  closed: boolean;
}

/** The previews of one channel account. */
export class StreamingPreviews {
  readonly #o: Required<Omit<StreamingPreviewsOptions, "api" | "logger">> & StreamingPreviewsOptions;
  readonly #previews = new Map<string, Preview>();

  constructor(options: StreamingPreviewsOptions) {
    this.#o = {
      editIntervalMs: 1_000,
      ttlMs: 3_600_000,
      maxChars: 4096,
      clock: systemClock,
      ...options,
    };
  }

  /** Previews alive now (for tests and metrics). */
  get size(): number {
    return this.#previews.size;
  }

  /** Adds streamed text to the turn's preview, creating it (as a reply to the turn's message) on the first delta. */
  delta(target: PreviewTarget, text: string): void {
    const key = keyOf(target);
    const existing = this.#previews.get(key);
    if (existing) {
      if (existing.closed) return; // the final text is on its way; nothing may overwrite it
      existing.text += text;
      this.#scheduleEdit(existing, target);
      return;
    }
    const api = this.#o.api();
    if (!api) return;
    this.#prune(); // once per new preview, not per streamed token
    const now = this.#o.clock.now();
    const preview: Preview = {
      id: undefined,
      text,
      shown: "",
      createdAt: now,
      lastEditAt: now,
      timer: undefined,
      inflight: Promise.resolve(),
      closed: false,
    };
    const first = this.#clip(text) || "…";
    preview.inflight = api
      .post(target, first)
      .then((id) => {
        preview.id = id;
        preview.shown = first;
        if (preview.text !== text) this.#scheduleEdit(preview, target);
      })
      .catch((err: unknown) => this.#o.logger.debug({ err, chatId: target.chatId }, "preview post failed"));
    this.#previews.set(key, preview);
  }

  /**
   * Drops the last `discardedChars` characters of the turn's preview text (a model call failed
   * part-way; the text streamed next replaces them) and schedules an edit like a delta does, so
   * the preview message — never a second one — shows the text as it now stands. No preview, or
   * one closed for its final text: nothing to do.
   */
  reset(target: PreviewTarget, discardedChars: number): void {
    const preview = this.#previews.get(keyOf(target));
    if (!preview || preview.closed || !(discardedChars > 0)) return;
    preview.text = preview.text.slice(0, Math.max(0, preview.text.length - discardedChars));
    this.#scheduleEdit(preview, target);
  }

  /**
   * Closes the turn's preview for its final text: stops the edit timer and waits for the send
   * or edit in flight. Resolves undefined when the turn has no preview (or it never appeared).
   * Until `done()` is called the preview stays (closed), so a retried final send finds it again.
   */
  async take(target: PreviewTarget): Promise<TakenPreview | undefined> {
    this.#prune();
    const key = keyOf(target);
    const preview = this.#previews.get(key);
    if (!preview) return undefined;
    preview.closed = true;
    this.#o.clock.clearTimeout(preview.timer);
    preview.timer = undefined;
    await preview.inflight;
    const forget = () => {
      if (this.#previews.get(key) === preview) this.#previews.delete(key);
    };
    if (preview.id === undefined) {
      forget();
      return undefined;
    }
    return { messageId: preview.id, done: forget };
  }

  /** Forgets every preview and stops their timers (the channel stops). */
  clear(): void {
    for (const p of this.#previews.values()) this.#o.clock.clearTimeout(p.timer);
    this.#previews.clear();
  }

  #scheduleEdit(preview: Preview, target: PreviewTarget): void {
    if (preview.timer || preview.closed || preview.id === undefined) return;
    const wait = Math.max(0, preview.lastEditAt + this.#o.editIntervalMs - this.#o.clock.now());
    preview.timer = this.#o.clock.setTimeout(
      () => {
        preview.timer = undefined;
        if (preview.closed) return;
        preview.lastEditAt = this.#o.clock.now();
        preview.inflight = preview.inflight.then(() => this.#edit(preview, target));
      },
      wait,
      { unref: true },
    );
  }

  async #edit(preview: Preview, target: PreviewTarget): Promise<void> {
    const api = this.#o.api();
    // Platforms refuse an empty text; a reset may discard everything streamed so far.
    const text = this.#clip(preview.text) || "…";
    if (!api || preview.closed || preview.id === undefined || text === preview.shown) return;
    try {
      await api.update(target, preview.id, text);
      preview.shown = text;
    } catch (err) {
      this.#o.logger.debug({ err, chatId: target.chatId }, "preview edit failed");
    }
  }

  #clip(text: string): string {
    return text.length > this.#o.maxChars ? text.slice(0, this.#o.maxChars) : text;
  }

  #prune(): void {
    const cutoff = this.#o.clock.now() - this.#o.ttlMs;
    for (const [key, p] of this.#previews) {
      if (p.createdAt >= cutoff) continue;
      this.#o.clock.clearTimeout(p.timer);
      this.#previews.delete(key);
    }
  }
}

function keyOf(target: PreviewTarget): string {
  return `${target.chatId}:${target.threadId ?? ""}:${target.replyTo ?? ""}`;
}
