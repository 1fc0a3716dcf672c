/**
 * StreamingPreviews on its own, on a ManualClock with an in-test platform seam and ledger: a
 * reset (a model call failed part-way) drops the discarded text, and the preview message — never
 * a second one — is edited to the text that replaces it, no sooner than the edit interval
 * allows; and a preview outlives its process: recorded once when posted, adopted by a redone
 * turn or taken by a reply committed before the restart, found on the platform when it was
 * never recorded, deleted when nothing will take it.
 */
import { describe, expect, it } from "vitest";
import { type PreviewApi, type PreviewTarget, StreamingPreviews } from "../../src/channels/preview.js";
import type { PreviewLedger } from "../../src/channels/preview-ledger.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";

/** Records calls; `hold()` keeps the next call pending until its release is called. */
class RecordingApi implements PreviewApi {
  readonly sent: string[] = [];
  readonly edits: string[] = [];
  /** `${messageId}:${text}` of edits, and deleted message ids. */
  readonly editsOf: string[] = [];
  readonly removed: string[] = [];
  /** What `find` answers, when set (a platform that can look messages up). */
  found: string | undefined;
  finds = 0;
  find?: (target: PreviewTarget) => Promise<string | undefined>;
  #held: Promise<void> | undefined;

  withFind(found: string | undefined): this {
    this.found = found;
    this.find = async () => {
      this.finds++;
      return this.found;
    };
    return this;
  }

  async remove(_target: unknown, messageId: string): Promise<unknown> {
    this.removed.push(messageId);
    return true;
  }

  hold(): () => void {
    let release = () => {};
    this.#held = new Promise((resolve) => {
      release = resolve;
    });
    return release;
  }

  async post(_target: unknown, text: string): Promise<string> {
    this.sent.push(text);
    await this.#take();
    return "7";
  }

  async update(_target: unknown, messageId: string, text: string): Promise<unknown> {
    this.edits.push(text);
    this.editsOf.push(`${messageId}:${text}`);
    await this.#take();
    return true;
  }

  async #take(): Promise<void> {
    const held = this.#held;
    this.#held = undefined;
    await held;
  }
}

const INTERVAL_MS = 30;
const TURN = { chatId: "42", replyTo: "42:5" };

function setup(enabled = true) {
  const clock = new ManualClock();
  const api = new RecordingApi();
  const previews = new StreamingPreviews({
    api: () => api,
    enabled,
    editIntervalMs: INTERVAL_MS,
    clock,
    logger: silentLogger(),
  });
  return { clock, api, previews };
}

describe("StreamingPreviews.reset", () => {
  it("drops the discarded text; the next edit of the same message shows its replacement", async () => {
    const { clock, api, previews } = setup();
    previews.delta(TURN, "Hel");
    await clock.advanceAsync(0); // the preview message is sent
    previews.delta(TURN, "lo wor");
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.edits).toEqual(["Hello wor"]);
    previews.reset(TURN, 9);
    previews.delta(TURN, "Hello world");
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.sent).toEqual(["Hel"]);
    expect(api.edits).toEqual(["Hello wor", "Hello world"]);
  });

  it("replaces only the discarded tail with different text", async () => {
    const { clock, api, previews } = setup();
    previews.delta(TURN, "Looking it up. The ans");
    await clock.advanceAsync(0);
    previews.reset(TURN, 7);
    previews.delta(TURN, "It is 42.");
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.edits).toEqual(["Looking it up. It is 42."]);
  });

  it("keeps the edit interval: a reset right after an edit waits for the next slot", async () => {
    const { clock, api, previews } = setup();
    previews.delta(TURN, "abc");
    await clock.advanceAsync(0);
    previews.delta(TURN, "def");
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.edits).toEqual(["abcdef"]);
    previews.reset(TURN, 3);
    await clock.advanceAsync(INTERVAL_MS - 1);
    expect(api.edits).toEqual(["abcdef"]);
    await clock.advanceAsync(1);
    expect(api.edits).toEqual(["abcdef", "abc"]);
  });

  it("shows an ellipsis, never an empty text, when everything was discarded", async () => {
    const { clock, api, previews } = setup();
    previews.delta(TURN, "gone");
    await clock.advanceAsync(0);
    previews.reset(TURN, 4);
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.edits).toEqual(["…"]);
  });

  it("a reset while the preview is being sent is applied once the message exists", async () => {
    const { clock, api, previews } = setup();
    const release = api.hold();
    previews.delta(TURN, "Hello");
    previews.reset(TURN, 5);
    previews.delta(TURN, "Bye");
    release();
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.sent).toEqual(["Hello"]);
    expect(api.edits).toEqual(["Bye"]);
  });

  it("a reset waits for the edit in flight, so edits never overlap or land out of order", async () => {
    const { clock, api, previews } = setup();
    previews.delta(TURN, "one");
    await clock.advanceAsync(0);
    previews.delta(TURN, " two");
    const release = api.hold();
    await clock.advanceAsync(INTERVAL_MS); // the edit "one two" is in flight
    previews.reset(TURN, 4);
    previews.delta(TURN, " three");
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.edits).toEqual(["one two"]); // the next edit is chained on the one in flight
    release();
    await clock.advanceAsync(0);
    expect(api.edits).toEqual(["one two", "one three"]);
  });

  it("does nothing to a turn without a preview, or to one taken for its final text", async () => {
    const { clock, api, previews } = setup();
    previews.reset(TURN, 3);
    expect(previews.size).toBe(0);
    previews.delta(TURN, "final soon");
    await clock.advanceAsync(0);
    const taken = await previews.take(TURN);
    previews.reset(TURN, 4);
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.edits).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
    taken?.done();
  });
});

/** A ledger over a map, as the store keeps it. */
class MapLedger implements PreviewLedger {
  readonly rows = new Map<string, { target: PreviewTarget; messageId: string; settled: boolean }>();
  writes = 0;
  static key(t: PreviewTarget): string {
    return `${t.chatId}:${t.threadId ?? ""}:${t.replyTo ?? ""}`;
  }
  async record(target: PreviewTarget, messageId: string): Promise<void> {
    this.writes++;
    this.rows.set(MapLedger.key(target), { target, messageId, settled: false });
  }
  async forget(target: PreviewTarget): Promise<void> {
    this.writes++;
    this.rows.delete(MapLedger.key(target));
  }
  async list() {
    return [...this.rows.values()];
  }
}

function durable(api = new RecordingApi(), ledger = new MapLedger()) {
  const clock = new ManualClock();
  const make = () =>
    new StreamingPreviews({
      api: () => api,
      ledger,
      editIntervalMs: INTERVAL_MS,
      clock,
      logger: silentLogger(),
    });
  return { clock, api, ledger, make };
}

describe("StreamingPreviews.status (helpers at work)", () => {
  const WAKE = { chatId: "42" }; // a parent's wake answers no message

  it("posts a status, edits it in place at most once per interval, and the turn's first delta replaces it", async () => {
    const { clock, api, previews } = setup();
    previews.status(WAKE, "↳ a: read_file x");
    await clock.advanceAsync(0);
    previews.status(WAKE, "↳ a: read_file y");
    previews.status(WAKE, "↳ a: read_file z");
    await clock.advanceAsync(INTERVAL_MS - 1);
    expect(api.edits).toEqual([]); // throttled
    await clock.advanceAsync(1);
    expect(api.edits).toEqual(["↳ a: read_file z"]); // only the latest
    previews.delta(WAKE, "The answer");
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.sent).toEqual(["↳ a: read_file x"]);
    expect(api.edits).toEqual(["↳ a: read_file z", "The answer"]); // never status and text together
  });

  it("with streaming off, a status still shows and the final text takes it; text deltas show nothing", async () => {
    const { clock, api, previews } = setup(false);
    previews.status(WAKE, "↳ a: read_file x");
    await clock.advanceAsync(0);
    previews.delta(WAKE, "Streamed");
    previews.status(WAKE, "✓ a done");
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.sent).toEqual(["↳ a: read_file x"]);
    expect(api.edits).toEqual(["✓ a done"]);
    const taken = await previews.take(WAKE);
    expect(taken?.messageId).toBe("7");
    previews.delta({ chatId: "9" }, "no preview for text");
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.sent).toEqual(["↳ a: read_file x"]);
  });

  it("never overwrites streamed text, nor a preview taken for its final text", async () => {
    const { clock, api, previews } = setup();
    previews.delta(WAKE, "Streaming");
    await clock.advanceAsync(0);
    previews.status(WAKE, "✓ a done");
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.edits).toEqual([]);
    const taken = await previews.take(WAKE);
    previews.status(WAKE, "✓ a done");
    await clock.advanceAsync(INTERVAL_MS);
    expect(taken?.messageId).toBe("7");
    expect(api.sent).toEqual(["Streaming"]);
    expect(api.edits).toEqual([]);
  });

  it("a status preview is taken by the final text, or deleted by a discard; a reset leaves it", async () => {
    const { clock, api, previews } = setup();
    previews.status(WAKE, "↳ a: web_fetch example.com");
    await clock.advanceAsync(0);
    previews.reset(WAKE, 5);
    await clock.advanceAsync(INTERVAL_MS);
    expect(api.edits).toEqual([]);
    expect((await previews.take(WAKE))?.messageId).toBe("7");
    const other = { chatId: "43" };
    previews.status(other, "↳ b: exec ls");
    await clock.advanceAsync(0);
    await previews.discard(other);
    expect(api.removed).toEqual(["7"]);
  });
});

describe("StreamingPreviews across a restart", () => {
  it("records a preview once when it is posted; edits write nothing", async () => {
    const { clock, ledger, make } = durable();
    const previews = make();
    await previews.restore();
    previews.delta(TURN, "one");
    await clock.advanceAsync(0);
    for (const more of [" two", " three", " four"]) {
      previews.delta(TURN, more);
      await clock.advanceAsync(INTERVAL_MS);
    }
    expect(ledger.writes).toBe(1);
    expect([...ledger.rows.values()]).toEqual([{ target: TURN, messageId: "7", settled: false }]);
  });

  it("a redone turn adopts the recorded preview: edited to its text, never posted again", async () => {
    const { clock, api, ledger, make } = durable();
    await ledger.record(TURN, "7");
    const previews = make(); // a new process
    await previews.restore();
    previews.delta({ ...TURN, recovered: true }, "Again from the start");
    await clock.advanceAsync(0);
    expect(api.sent).toEqual([]);
    expect(api.editsOf).toEqual(["7:Again from the start"]);
    expect(await previews.take(TURN)).toMatchObject({ messageId: "7" });
  });

  it("a reply committed before the restart takes the recorded preview with its first chunk only", async () => {
    const { ledger, make } = durable();
    await ledger.record(TURN, "7");
    const previews = make();
    await previews.restore();
    expect(await previews.take({ ...TURN, seq: 1, createdAt: 0 })).toBeUndefined();
    const taken = await previews.take({ ...TURN, seq: 0, createdAt: 0 });
    expect(taken?.messageId).toBe("7");
    taken?.done();
    expect(await previews.take({ ...TURN, seq: 0, createdAt: 0 })).toBeUndefined();
  });

  it("finds a preview that was posted but never recorded (the platform can look), only for work from before the restart", async () => {
    const { clock, api, make } = durable(new RecordingApi().withFind("9"));
    clock.advance(1_000);
    const previews = make();
    await previews.restore();
    // A reply this process committed: no lookup.
    expect(await previews.take({ ...TURN, createdAt: clock.now() })).toBeUndefined();
    expect(api.finds).toBe(0);
    // A reply committed before the restart: found and taken.
    expect(await previews.take({ ...TURN, createdAt: clock.now() - 500 })).toMatchObject({ messageId: "9" });
    // A redone turn: its first delta looks first and adopts what it finds.
    previews.delta({ ...TURN, replyTo: "42:6", recovered: true }, "redone");
    await clock.advanceAsync(0);
    expect(api.sent).toEqual([]);
    expect(api.editsOf).toEqual(["9:redone"]);
    // Nothing found: posted as usual.
    api.found = undefined;
    previews.delta({ ...TURN, replyTo: "42:8", recovered: true }, "fresh");
    await clock.advanceAsync(0);
    expect(api.sent).toEqual(["fresh"]);
  });

  it("a redone turn whose text all streamed before the channel was up has its reply look for the earlier preview", async () => {
    // A restart calls the model while its channels start: the deltas come before the API is up.
    const api = new RecordingApi().withFind("9");
    let up = false;
    const clock = new ManualClock(1_000);
    const previews = new StreamingPreviews({
      api: () => (up ? api : undefined),
      ledger: new MapLedger(),
      editIntervalMs: INTERVAL_MS,
      clock,
      logger: silentLogger(),
    });
    await previews.restore();
    clock.advance(100);
    previews.delta({ ...TURN, recovered: true }, "redone before the channel was up");
    previews.delta({ ...TURN, replyTo: "42:6" }, "a new turn's text, also early"); // not redone
    up = true;
    // Both replies committed after the restore: the redone turn's looks, the other does not.
    expect(await previews.take({ ...TURN, replyTo: "42:6", createdAt: clock.now() })).toBeUndefined();
    expect(api.finds).toBe(0);
    const taken = await previews.take({ ...TURN, createdAt: clock.now() });
    expect(taken).toMatchObject({ messageId: "9" });
    taken?.done();
    expect(api.finds).toBe(1);
    expect(api.sent).toEqual([]);
    // Taken once: a later chunk 0 of the same key (a retried send) does not look again.
    api.found = undefined;
    expect(await previews.take({ ...TURN, createdAt: clock.now() })).toBeUndefined();
    expect(api.finds).toBe(1);
  });

  it("with streaming off, shows nothing and looks nothing up, yet a recorded preview is still taken", async () => {
    const api = new RecordingApi().withFind("9");
    const ledger = new MapLedger();
    await ledger.record(TURN, "7");
    const clock = new ManualClock(1_000);
    const previews = new StreamingPreviews({
      api: () => api,
      ledger,
      enabled: false,
      clock,
      logger: silentLogger(),
    });
    await previews.restore();
    previews.delta({ ...TURN, replyTo: "42:9", recovered: true }, "hidden");
    await clock.advanceAsync(INTERVAL_MS);
    expect(await previews.take({ ...TURN, replyTo: "42:9", createdAt: 0 })).toBeUndefined();
    expect(api.sent).toEqual([]);
    expect(api.finds).toBe(0);
    expect(await previews.take({ ...TURN, createdAt: 0 })).toMatchObject({ messageId: "7" });
  });

  it("deletes a restored preview nothing will take, and one whose turn ended without a reply", async () => {
    const { clock, api, ledger, make } = durable();
    await ledger.record({ chatId: "1", replyTo: "1:1" }, "11");
    ledger.rows.set("1::1:1", { target: { chatId: "1", replyTo: "1:1" }, messageId: "11", settled: true });
    await ledger.record({ chatId: "2", replyTo: "2:1" }, "21");
    const previews = make();
    await previews.restore();
    expect(api.removed).toEqual([]); // not before the API is up
    await previews.removeOrphans();
    expect(api.removed).toEqual(["11"]);
    // A redone turn that ends without a reply: the preview it would have adopted goes.
    await previews.discard({ chatId: "2", replyTo: "2:1", recovered: true });
    // This process's own preview of a turn that ends without a reply goes too.
    previews.delta(TURN, "thinking");
    await clock.advanceAsync(0);
    await previews.discard(TURN);
    expect(api.removed).toEqual(["11", "21", "7"]);
    expect(ledger.rows.size).toBe(0);
    expect(previews.size).toBe(0);
  });
});
