/**
 * What the run saw as it happened, from the platform's bot writes and the model tap: which
 * message got its complete answer when (and in which chat), which chats have a turn in flight,
 * and when anything last changed. The kill loop reads it; the stall figures are worked out from it.
 */
import { classify, type Tag } from "./answers.js";
import type { ModelTap, TapEvent } from "./model-tap.js";
import type { BotWrite, ChatPlatform, SentMessage } from "./types.js";

/** The first time a complete answer to a message was stored in its own chat. */
export interface Completion {
  chat: number;
  tag: Tag;
  atMs: number;
}

const keyOf = (tag: Tag) => `${tag.chat}:${tag.seq}`;

/** Live view of the run; subscribe it with `attach`. */
export class Timeline {
  readonly sent: SentMessage[] = [];
  readonly completions: Completion[] = [];
  readonly #completed = new Set<string>();
  /** Messages whose turn started (a model request seen), by key. */
  readonly #started = new Map<string, Tag>();
  readonly #now: () => number;
  readonly #changeListeners = new Set<() => void>();
  #lastChangeMs: number;

  constructor(now: () => number) {
    this.#now = now;
    this.#lastChangeMs = now();
  }

  /** Listens to the platform's writes and the tap's streams; returns the unsubscribe. */
  attach(platform: ChatPlatform, tap: ModelTap): () => void {
    const offWrite = platform.onWrite((write) => this.#onWrite(write));
    const offTap = tap.onEvent((event) => this.#onTap(event));
    return () => {
      offWrite();
      offTap();
    };
  }

  /** Records a user message as sent now. */
  recordSent(message: SentMessage): void {
    this.sent.push(message);
    this.#changed(this.#now());
  }

  /** Calls `listener` after every change (a message sent, a bot write, a model stream event). */
  onChange(listener: () => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  /** When a write or a model request last happened (driver clock). */
  get lastChangeMs(): number {
    return this.#lastChangeMs;
  }

  /** Sent messages with a complete answer in their own chat. */
  get answered(): number {
    return this.sent.filter((m) => this.#completed.has(`${m.chat}:${m.seq}`)).length;
  }

  /** True once every sent message has a complete answer in its chat. */
  get allAnswered(): boolean {
    return this.answered === this.sent.length;
  }

  /** True once every chat's first message, if sent, has its complete answer. */
  firstRoundAnswered(chats: number): boolean {
    for (let chat = 1; chat <= chats; chat++) if (!this.#completed.has(`${chat}:1`)) return false;
    return true;
  }

  /** Chats with a turn in flight: a model request seen for a message not yet completely answered. */
  chatsMidTurn(): number[] {
    const chats = new Set<number>();
    for (const [key, tag] of this.#started) if (!this.#completed.has(key)) chats.add(tag.chat);
    return [...chats].sort((a, b) => a - b);
  }

  #onWrite(write: BotWrite): void {
    this.#record(write);
    this.#changed(write.atMs);
  }

  #record(write: BotWrite): void {
    if (write.kind === "delete") return;
    const shape = classify(write.text);
    if (shape?.shape !== "complete") return;
    const key = keyOf(shape.tag);
    if (write.chat !== shape.tag.chat || this.#completed.has(key)) return;
    this.#completed.add(key);
    this.completions.push({ chat: write.chat, tag: shape.tag, atMs: write.atMs });
  }

  #onTap(event: TapEvent): void {
    if (event.type === "start" && event.tag) this.#started.set(keyOf(event.tag), event.tag);
    this.#changed(event.atMs);
  }

  #changed(atMs: number): void {
    this.#lastChangeMs = atMs;
    for (const listener of [...this.#changeListeners]) listener();
  }
}
