/**
 * Where `switchyard chat` keeps what it last showed of each mailbox, so the next chat starts by
 * printing what arrived while none was open (a heartbeat alert at night, a cron answer): one
 * small JSON file in the home folder, `chat-cursors.json`, keyed by gateway URL and sender.
 * Best effort: an unreadable file starts at the mailbox's end, a failed write is ignored, and a
 * home folder that does not exist is not created for it.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const FILE = "chat-cursors.json";

/** The saved cursors of one home folder. */
export class ChatCursors {
  readonly #path: string;
  readonly #home: string;

  constructor(home: string) {
    this.#home = home;
    this.#path = join(home, FILE);
  }

  /** The cursor a chat of `sender` on `url` last showed, or undefined. */
  get(url: string, sender: string): number | undefined {
    const value = this.#read()[key(url, sender)];
    return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  }

  /** Saves `after` for `sender` on `url` (atomically: a temp file renamed over the old one). */
  set(url: string, sender: string, after: number): void {
    if (!existsSync(this.#home)) return;
    try {
      const all = this.#read();
      all[key(url, sender)] = after;
      const tmp = `${this.#path}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
      renameSync(tmp, this.#path);
    } catch {
      // Best effort: the next chat starts at the mailbox's end instead.
    }
  }

  #read(): Record<string, unknown> {
    try {
      const parsed: unknown = JSON.parse(readFileSync(this.#path, "utf8"));
      return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : {};
    } catch {
      return {};
    }
  }
}

function key(url: string, sender: string): string {
  return `${url} ${sender}`;
}
