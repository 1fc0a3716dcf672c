/**
 * Streaming previews (`streaming: edit`), for every platform that can edit a message it sent:
 * while a turn runs, one message shows its text so far, edited at most once per interval; the
 * reply's first chunk then replaces it. A status (the session's helpers at work) uses the same
 * preview whether or not text streams. A preview belongs to one turn (chat, topic and the
 * message it answers), so a followup turn gets its own. Edits of one preview run one after
 * another; taking a preview for the final text stops the timer and waits for the edit in
 * flight, so a partial edit can never land after the final one.
 *
 * A preview outlives its process: its message id is recorded once, when it is posted (a
 * `PreviewLedger`; edits write nothing), and a channel starting after a crash restores those
 * records. A turn redone for the same message adopts the recorded message instead of posting a
 * second one, and the reply's first chunk takes it; a recorded preview that nothing will take
 * any more (its turn finished) is deleted. A platform that can look messages up (Slack, Discord:
 * `PreviewApi.find`) also finds a preview posted in the instant before a crash, before it was
 * recorded — when the redone turn's first delta comes, or, if its text all streamed before the
 * channel was up, when its reply is sent; on one that cannot (Telegram) such a preview stays.
 */
import { type Clock, systemClock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { PreviewEntry } from "./preview-entry.js";
import { previewKey } from "./preview-entry.js";
import type { PreviewLedger } from "./preview-ledger.js";

/** Which turn a preview belongs to. */
export interface PreviewTarget {
  chatId: string;
  threadId?: string;
  /** Platform id of the message the turn answers; the preview replies to it. */
  replyTo?: string;
}

/** The platform calls a preview needs; each channel adapts its own API. */
export interface PreviewApi {
  /** Posts the preview's first text where the turn's reply will go; resolves its message id. */
  post(target: PreviewTarget, text: string): Promise<string>;
  /** Replaces the text of the preview message `messageId`. */
  update(target: PreviewTarget, messageId: string, text: string): Promise<unknown>;
  /** Deletes the preview message `messageId` (its turn ended without an answer for it). */
  remove(target: PreviewTarget, messageId: string): Promise<unknown>;
  /**
   * Looks a preview of `target` up in the chat: one an earlier process posted and could not
   * record. Resolves its message id, or undefined when there is none; throws when it cannot
   * tell. Absent: the platform offers no way to look (Telegram).
   */
  find?(target: PreviewTarget): Promise<string | undefined>;
}

export interface StreamingPreviewsOptions {
  /** The API to call; undefined while the channel is not started (deltas are then dropped). */
  api: () => PreviewApi | undefined;
  /** Where previews are recorded; absent: in memory only (a crash leaves its preview). */
  ledger?: PreviewLedger;
  /**
   * False (`streaming: off`): no text is streamed into a preview (a status still shows);
   * previews an earlier run recorded are still restored, taken by their replies and removed.
   * Default true.
   */
  enabled?: boolean;
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

/** What `take` needs to know of the chunk being sent. */
export type TakeTarget = PreviewTarget & {
  /** The chunk's place in its reply: only the first (0, the default) takes a preview. */
  seq?: number;
  /** When the reply was committed: one committed before this process started may find an unrecorded preview. */
  createdAt?: number;
};

/** The previews of one channel account (see the file header). */
export class StreamingPreviews {
  readonly #o: Required<Omit<StreamingPreviewsOptions, "api" | "logger" | "ledger">> &
    StreamingPreviewsOptions;
  readonly #previews = new Map<string, PreviewEntry>();
  /** Previews an earlier process recorded and nothing has taken yet, by key. */
  readonly #recovered = new Map<string, string>();
  /** Restored previews that nothing will take any more, to delete once the API is up. */
  readonly #orphans: Array<{ target: PreviewTarget; messageId: string }> = [];
  /** When `restore` ran: a reply committed before it may have an unrecorded preview. */
  #restoredAt = Number.NEGATIVE_INFINITY;
  /**
   * Redone turns whose text streamed while the API was not up yet (a restart calls the model
   * while its channels start), by key, with when: none of their deltas could look for the
   * earlier attempt's preview, so their reply's first chunk does.
   */
  readonly #unlooked = new Map<string, number>();

  constructor(options: StreamingPreviewsOptions) {
    this.#o = {
      editIntervalMs: 1_000,
      ttlMs: 3_600_000,
      maxChars: 4096,
      clock: systemClock,
      enabled: true,
      ...options,
    };
  }

  /** Previews alive now (for tests and metrics). */
  get size(): number {
    return this.#previews.size;
  }

  /**
   * Reads the ledger, before the channel's API is up (so no turn posts a preview before an
   * earlier one is known): previews an earlier process left are kept for the turns and replies
   * that will take them; those nothing will take any more wait for `removeOrphans`. Never throws.
   */
  async restore(): Promise<void> {
    this.#restoredAt = this.#o.clock.now();
    const { ledger } = this.#o;
    if (!ledger) return;
    let records: Awaited<ReturnType<PreviewLedger["list"]>>;
    try {
      records = await ledger.list();
    } catch (err) {
      this.#o.logger.warn(
        { err },
        "cannot read the recorded previews; previews of interrupted turns may stay",
      );
      return;
    }
    for (const r of records) {
      if (r.settled) this.#orphans.push(r);
      else this.#recovered.set(previewKey(r.target), r.messageId);
    }
  }

  /** Deletes, one after another, the restored previews nothing will take (the API is up). Never rejects. */
  async removeOrphans(): Promise<void> {
    const orphans = this.#orphans.splice(0);
    for (const { target, messageId } of orphans) await this.#remove(target, messageId);
  }

  /** `removeOrphans` in the background (the channel has connected; nothing waits for it). */
  removeOrphansLater(): void {
    this.removeOrphans().catch((err: unknown) =>
      this.#o.logger.warn({ err }, "could not remove orphaned previews"),
    );
  }

  /**
   * Adds streamed text to the turn's preview, creating it (as a reply to the turn's message) on
   * the first delta — or adopting the one an earlier attempt of a redone turn left.
   */
  delta(target: PreviewTarget & { recovered?: boolean }, text: string): void {
    if (!this.#o.enabled) return;
    const existing = this.#previews.get(previewKey(target));
    if (existing) {
      if (existing.closed) return; // the final text is on its way; nothing may overwrite it
      existing.text = existing.status ? text : existing.text + text;
      existing.status = false;
      this.#scheduleEdit(existing, target);
      return;
    }
    this.#open(target, text, false);
  }

  /**
   * Shows `text` as the turn's preview (a status: the session's helpers at work), creating the
   * preview if there is none, throttled like deltas. The turn's first delta replaces it, and so
   * does its final text (`take`) or `discard`. Ignored once the preview shows streamed text or
   * is closed for its final text, so a status never overwrites an answer. Shown with
   * `streaming: off` too: helpers at work are worth a message whether or not text streams.
   */
  status(target: PreviewTarget, text: string): void {
    const existing = this.#previews.get(previewKey(target));
    if (!existing) this.#open(target, text, true);
    else if (!existing.closed && existing.status) {
      existing.text = text;
      this.#scheduleEdit(existing, target);
    }
  }

  /** A new preview of `target` showing `text` (posted, or adopted from an earlier attempt). */
  #open(target: PreviewTarget & { recovered?: boolean }, text: string, status: boolean): void {
    const key = previewKey(target);
    const api = this.#o.api();
    if (!api) {
      if (target.recovered && !this.#unlooked.has(key)) this.#unlooked.set(key, this.#o.clock.now());
      return;
    }
    this.#prune(); // once per new preview, not per streamed token
    this.#unlooked.delete(key); // this delta looks
    const now = this.#o.clock.now();
    const preview: PreviewEntry = {
      id: undefined,
      text,
      shown: "",
      createdAt: now,
      lastEditAt: now - this.#o.editIntervalMs,
      timer: undefined,
      inflight: Promise.resolve(),
      closed: false,
      status,
    };
    this.#previews.set(key, preview);
    const recorded = this.#recovered.get(key);
    if (recorded !== undefined) {
      this.#recovered.delete(key);
      preview.id = recorded;
      this.#scheduleEdit(preview, target);
      return;
    }
    const first = this.#clip(text) || "…";
    preview.inflight = (async () => {
      const found = target.recovered && api.find ? await api.find(target) : undefined;
      preview.id = found ?? (await api.post(target, first));
      // A found preview shows an earlier attempt's text: it is edited at once.
      if (found === undefined) [preview.shown, preview.lastEditAt] = [first, this.#o.clock.now()];
      await this.#record(target, preview.id);
      if (preview.text !== preview.shown) this.#scheduleEdit(preview, target);
    })().catch((err: unknown) => this.#o.logger.debug({ err, chatId: target.chatId }, "preview post failed"));
  }

  /**
   * Drops the last `discardedChars` characters of the turn's preview text (a model call failed
   * part-way; the text streamed next replaces them) and schedules an edit like a delta does, so
   * the preview message — never a second one — shows the text as it now stands. No preview, or
   * one closed for its final text: nothing to do.
   */
  reset(target: PreviewTarget, discardedChars: number): void {
    if (!this.#o.enabled) return;
    const preview = this.#previews.get(previewKey(target));
    if (!preview || preview.closed || preview.status || !(discardedChars > 0)) return;
    preview.text = preview.text.slice(0, Math.max(0, preview.text.length - discardedChars));
    this.#scheduleEdit(preview, target);
  }

  /**
   * Closes the turn's preview for its final text: stops the edit timer and waits for the send
   * or edit in flight. Resolves undefined when the turn has no preview (or it never appeared),
   * and for any chunk but a reply's first. Until `done()` is called the preview stays (closed),
   * so a retried final send finds it again. A first chunk committed before this process started
   * also takes a preview an earlier process recorded, or one the platform finds; a lookup that
   * cannot tell throws (the send is retried, never posted beside a preview).
   */
  async take(target: TakeTarget): Promise<TakenPreview | undefined> {
    this.#prune();
    const key = previewKey(target);
    const preview = this.#previews.get(key);
    if (!preview) {
      if ((target.seq ?? 0) !== 0) return undefined;
      const recorded = this.#recovered.get(key);
      if (recorded !== undefined) return { messageId: recorded, done: () => this.#recovered.delete(key) };
      const api = this.#o.api();
      const before = target.createdAt !== undefined && target.createdAt < this.#restoredAt;
      const unlooked = this.#unlooked.has(key);
      if (!this.#o.enabled || !api?.find || !(before || unlooked)) return undefined;
      const found = await api.find(target);
      const done = () => this.#unlooked.delete(key);
      if (found === undefined) {
        done();
        return undefined;
      }
      return { messageId: found, done };
    }
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

  /**
   * The turn ended with nothing to send to `target`: its preview — this process's, one an
   * earlier process recorded, or (for a redone turn) one the platform finds — is deleted from
   * the chat and its record forgotten. Never rejects.
   */
  async discard(target: PreviewTarget & { recovered?: boolean }): Promise<void> {
    const key = previewKey(target);
    this.#unlooked.delete(key);
    const preview = this.#previews.get(key);
    let id: string | undefined;
    try {
      if (preview) {
        preview.closed = true;
        this.#o.clock.clearTimeout(preview.timer);
        await preview.inflight;
        this.#previews.delete(key);
        id = preview.id;
      } else if (this.#recovered.has(key)) {
        id = this.#recovered.get(key);
        this.#recovered.delete(key);
      } else if (target.recovered && this.#o.enabled) {
        id = await this.#o.api()?.find?.(target);
      }
    } catch (err) {
      this.#o.logger.debug({ err, chatId: target.chatId }, "cannot tell whether the turn left a preview");
    }
    if (id !== undefined) await this.#remove(target, id);
  }

  /** Forgets every preview and stops their timers (the channel stops); the records stay. */
  clear(): void {
    for (const p of this.#previews.values()) this.#o.clock.clearTimeout(p.timer);
    this.#previews.clear();
    this.#recovered.clear();
    this.#unlooked.clear();
    this.#orphans.length = 0;
  }

  /** Deletes a preview message and its record; best effort (logged). */
  async #remove(target: PreviewTarget, messageId: string): Promise<void> {
    const api = this.#o.api();
    if (!api) return;
    try {
      await api.remove(target, messageId);
    } catch (err) {
      // Gone already, or too old to delete: either way nothing more can be done.
      this.#o.logger.info({ err, chatId: target.chatId }, "could not delete a preview its turn left");
    }
    await this.#o.ledger
      ?.forget(target)
      .catch((err: unknown) => this.#o.logger.warn({ err }, "could not forget a preview's record"));
  }

  async #record(target: PreviewTarget, messageId: string): Promise<void> {
    await this.#o.ledger
      ?.record(target, messageId)
      .catch((err: unknown) =>
        this.#o.logger.warn(
          { err, chatId: target.chatId },
          "could not record a preview: a crash would leave it",
        ),
      );
  }

  #scheduleEdit(preview: PreviewEntry, target: PreviewTarget): void {
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

  async #edit(preview: PreviewEntry, target: PreviewTarget): Promise<void> {
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
    for (const [key, at] of this.#unlooked) if (at < cutoff) this.#unlooked.delete(key);
    for (const [key, p] of this.#previews) {
      if (p.createdAt >= cutoff) continue;
      this.#o.clock.clearTimeout(p.timer);
      this.#previews.delete(key);
    }
  }
}
