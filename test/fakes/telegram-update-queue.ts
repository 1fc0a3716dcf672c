/**
 * One bot's update queue with Telegram's getUpdates semantics: ids increase per bot, an update
 * is confirmed (and gone for good) once getUpdates is called with a higher offset, a negative
 * offset keeps only the last -offset updates, and `allowed_updates` filters what is queued.
 */
import type { TelegramUpdate } from "./telegram-types.js";

/** Update kinds Telegram leaves out unless `allowed_updates` names them. */
const OPT_IN_UPDATES = new Set(["chat_member", "message_reaction", "message_reaction_count"]);

/** Pending (unconfirmed) updates of one bot. */
export class UpdateQueue {
  #pending: TelegramUpdate[] = [];
  #nextUpdateId = 1;
  #confirmedOffset = 0;
  #allowed: string[] = [];

  /** Unconfirmed updates, oldest first. */
  get size(): number {
    return this.#pending.length;
  }

  /** The highest confirming offset so far (0 before any). */
  get confirmedOffset(): number {
    return this.#confirmedOffset;
  }

  /** The last `allowed_updates` given; empty means Telegram's default set. */
  get allowedUpdates(): readonly string[] {
    return this.#allowed;
  }

  /** Copies `update`, keeping its `update_id` or assigning the next one (ids only grow). */
  withId(update: object): TelegramUpdate {
    const record: Record<string, unknown> = { ...update };
    const updateId = typeof record.update_id === "number" ? record.update_id : this.#nextUpdateId;
    this.#nextUpdateId = Math.max(this.#nextUpdateId, updateId + 1);
    return { ...record, update_id: updateId };
  }

  /** Queues the update in id order; false (not queued) when `allowed_updates` excludes its kind. */
  push(update: TelegramUpdate): boolean {
    const kind = Object.keys(update).find((key) => key !== "update_id");
    const allowed =
      kind === undefined ||
      (this.#allowed.length > 0 ? this.#allowed.includes(kind) : !OPT_IN_UPDATES.has(kind));
    if (!allowed) return false;
    const at = this.#pending.findIndex((u) => u.update_id > update.update_id);
    if (at < 0) this.#pending.push(update);
    else this.#pending.splice(at, 0, update);
    return true;
  }

  /** Applies a getUpdates `offset`: positive confirms lower ids, negative keeps the last -offset. */
  confirm(offset: number): void {
    if (offset > 0) {
      this.#pending = this.#pending.filter((u) => u.update_id >= offset);
      this.#confirmedOffset = Math.max(this.#confirmedOffset, offset);
    } else if (offset < 0) {
      this.#pending = this.#pending.slice(offset);
      const first = this.#pending[0]?.update_id ?? this.#nextUpdateId;
      this.#confirmedOffset = Math.max(this.#confirmedOffset, first);
    }
  }

  /** The oldest `limit` unconfirmed updates (they stay queued until confirmed). */
  peek(limit: number): TelegramUpdate[] {
    return this.#pending.slice(0, limit);
  }

  /** Removes one update (delivered to a webhook, or given up). */
  remove(update: TelegramUpdate): void {
    const index = this.#pending.indexOf(update);
    if (index >= 0) this.#pending.splice(index, 1);
  }

  /** Drops everything queued (`drop_pending_updates`). */
  clear(): void {
    this.#pending = [];
  }

  /** Remembers `allowed_updates` for later updates (Telegram keeps the last setting). */
  setAllowed(kinds: readonly unknown[]): void {
    this.#allowed = kinds.filter((kind): kind is string => typeof kind === "string");
  }
}
