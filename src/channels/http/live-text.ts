/**
 * The live text of one streaming HTTP request. SSE is append-only: when a model call fails
 * part-way and its text is discarded (`Channel.streamReset`), the client keeps what it was sent.
 * So the replacement is matched against it: text the client already has is not written again,
 * only what goes beyond it; text that goes a different way stops the live text, and the request
 * ends with a notice and the full answer instead.
 */

/** Written before the full answer when a request's live text went a different way than the answer. */
export const RETOLD_NOTICE =
  "\n\n[the model call failed part-way and was retried; the full answer follows]\n\n";

/** What a request writes after its live text once the answer is known. */
export interface LiveTextEnding {
  /** The text to write ("" for nothing). */
  text: string;
  /** True when `text` is RETOLD_NOTICE and the full answer: the live text cannot be completed. */
  retold: boolean;
}

/**
 * Tracks what one request was sent and what the turn's text is now. Invariant until it
 * diverges: the turn's text is a prefix of what was sent (equal to it, except while a
 * replacement is still repeating discarded text), so only a length is kept for it.
 */
export class LiveText {
  readonly #write: (text: string) => void;
  /** Everything written to the client as live text. */
  #sent = "";
  /** Length of the turn's text as it stands (after resets); a prefix of `#sent`. */
  #at = 0;
  #diverged = false;

  /** `write` sends one piece of live text to the client. */
  constructor(write: (text: string) => void) {
    this.#write = write;
  }

  /** True once the turn's text went a different way than what the client was sent. */
  get diverged(): boolean {
    return this.#diverged;
  }

  /**
   * Streamed text of the turn: writes the part the client does not have yet. While it repeats
   * discarded text nothing is written; once it differs, nothing more is written at all.
   */
  append(delta: string): void {
    if (this.#diverged || delta === "") return;
    const overlap = Math.min(delta.length, this.#sent.length - this.#at);
    if (!this.#sent.startsWith(delta.slice(0, overlap), this.#at)) {
      this.#diverged = true;
      return;
    }
    this.#at += delta.length;
    if (overlap === delta.length) return;
    const extension = delta.slice(overlap);
    this.#sent += extension;
    this.#write(extension);
  }

  /**
   * The last `discardedChars` characters of the turn's text were discarded (a failed model
   * call); the text that follows replaces them. Writes nothing. More than was streamed here (a
   * delta this request missed) discards everything, so the replacement is matched from the start.
   */
  reset(discardedChars: number): void {
    if (!(discardedChars > 0)) return;
    this.#at = Math.max(0, this.#at - discardedChars);
  }

  /**
   * What completes the live text once the turn ended with `reply` (its replies, joined).
   * `answered` false (a failure notice): the reply, as is. Otherwise the part of the reply not
   * streamed yet; "" when the live text held more than the reply (text before tool calls) and
   * ended as the turn's text did; RETOLD_NOTICE and the whole reply when the client was sent
   * text the turn discarded and never repeated.
   */
  finish(reply: string, answered: boolean): LiveTextEnding {
    if (!answered) return { text: reply, retold: false };
    if (!this.#diverged && reply.startsWith(this.#sent))
      return { text: reply.slice(this.#sent.length), retold: false };
    // Discarded text that was never repeated is still on the client's screen.
    if (this.#diverged || this.#at < this.#sent.length) return { text: RETOLD_NOTICE + reply, retold: true };
    return { text: "", retold: false }; // the live text began before tool calls: it holds the reply
  }
}
