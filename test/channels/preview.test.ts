/**
 * StreamingPreviews on its own, on a ManualClock with an in-test platform seam: a reset (a model
 * call failed part-way) drops the discarded text, and the preview message — never a second one —
 * is edited to the text that replaces it, no sooner than the edit interval allows.
 */
import { describe, expect, it } from "vitest";
import { type PreviewApi, StreamingPreviews } from "../../src/channels/preview.js";
import { ManualClock } from "../../src/util/clock.js";
import { silentLogger } from "../../src/util/logger.js";

/** Records calls; `hold()` keeps the next call pending until its release is called. */
class RecordingApi implements PreviewApi {
  readonly sent: string[] = [];
  readonly edits: string[] = [];
  #held: Promise<void> | undefined;

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

  async update(_target: unknown, _messageId: string, text: string): Promise<unknown> {
    this.edits.push(text);
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

function setup() {
  const clock = new ManualClock();
  const api = new RecordingApi();
  const previews = new StreamingPreviews({
    api: () => api,
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
