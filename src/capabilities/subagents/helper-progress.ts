/**
 * What a parent's chat is shown of its helpers at work (#26 item 5): one display per root
 * parent session (the session whose chat it is), listing each helper's label and latest tool
 * call, handed to the chat's channel (`Channel.streamHelpers`) on every change — a helper's tool
 * call (the beforeToolCall hook of a child session) or its end (its last turn committed).
 *
 * The display is the preview of the parent's next turn (no message answered: the wake's key),
 * so the wake that brings the results takes it for its answer, like any streamed text. Once
 * that wake committed, the helpers that ended leave the display (none running: it is
 * forgotten). An end never creates a display, so nothing shows after its wake took it. Helpers
 * that were all stopped bring no wake: their display is discarded at once, and `/stop`
 * discards it.
 */
import type { ChatTarget, HelperStatus } from "../../channels/types.js";
import type { ChannelDirectory } from "../../gateway/channel-directory.js";
import type { GatewayEvent, GatewayEvents } from "../../gateway/events.js";
import type { TurnHooks } from "../../harness/hooks.js";
import type { ToolCall } from "../../harness/providers/types.js";
import type { Subagent } from "../../store/repos/subagent-repo.js";
import type { Store } from "../../store/types.js";
import type { Logger } from "../../util/logger.js";
import { callSummary } from "./call-summary.js";

/** What the tracker needs. */
export interface HelperProgressDeps {
  store: Store;
  channels: ChannelDirectory;
  /** `agent:<agentId>:sub:`: the prefix of every child's session key. */
  childPrefix: string;
  logger: Logger;
}

/** One chat's helpers, as shown. */
interface Display {
  target: ChatTarget;
  /** By child session key, in the order they were first shown. */
  helpers: Map<string, HelperStatus>;
  /** Wakes of the parent so far: an end read after a wake is not shown (that wake had it). */
  wakes: number;
}

/** Owns the helper displays of the gateway's chats (see the file header). */
export class HelperProgress {
  readonly #d: HelperProgressDeps;
  readonly #log: Logger;
  /** By root parent session key. */
  readonly #displays = new Map<string, Display>();

  constructor(deps: HelperProgressDeps) {
    this.#d = deps;
    this.#log = deps.logger.child({ name: "helper-progress" });
  }

  /** Displays alive now (tests). */
  get size(): number {
    return this.#displays.size;
  }

  /** The hook that sees a helper's tool calls; it never blocks one. */
  hooks(): TurnHooks {
    return {
      beforeToolCall: async (call, turn) => {
        if (!turn.sessionKey.startsWith(this.#d.childPrefix) || turn.signal.aborted) return undefined;
        try {
          await this.#called(turn.sessionKey, call);
        } catch (err) {
          this.#log.warn({ err, sessionKey: turn.sessionKey }, "could not show a helper's tool call");
        }
        return undefined;
      },
    };
  }

  /** Follows helpers' ends and parents' wakes on the event bus. */
  attach(events: GatewayEvents): void {
    events.on((e) => this.#onEvent(e));
  }

  /** `/stop` in `sessionKey`: its helpers were stopped; their display leaves the chat. */
  stopped(sessionKey: string): void {
    const display = this.#displays.get(sessionKey);
    if (!display) return;
    this.#displays.delete(sessionKey);
    this.#d.channels.channelFor(display.target)?.streamDiscard?.({ ...display.target, inboxIds: [] });
  }

  /** The root parent of a child session: its key, with each `<prefix>…:<n>` level taken off. */
  rootOf(sessionKey: string): string {
    let key = sessionKey;
    while (key.startsWith(this.#d.childPrefix))
      key = key.slice(this.#d.childPrefix.length).replace(/:\d+$/, "");
    return key;
  }

  async #called(childKey: string, call: ToolCall): Promise<void> {
    const root = this.rootOf(childKey);
    const known = this.#displays.get(root)?.helpers.get(childKey);
    const row = known ? undefined : await this.#d.store.subagents.byChildSession(childKey);
    let display = this.#displays.get(root); // again: the read may have raced another call's
    if (!display) {
      if (!row?.origin.target) return; // not a helper, or background work: no chat to show it in
      display = { target: row.origin.target, helpers: new Map(), wakes: 0 };
      this.#displays.set(root, display);
    }
    const base = display.helpers.get(childKey) ?? (row ? baseOf(row) : undefined);
    if (!base) return;
    const status: HelperStatus = { ...base, state: "running", lastCall: callSummary(call) };
    display.helpers.set(childKey, status);
    this.#show(display, status);
  }

  #onEvent(e: GatewayEvent): void {
    if (e.type === "turn_committed") {
      if (e.sessionKey.startsWith(this.#d.childPrefix)) {
        if (e.run.outcome === "yielded") return; // it waits for its own helpers: still running
        if (e.run.outcome === "answered") {
          this.#answered(e.sessionKey).catch((err: unknown) =>
            this.#log.warn({ err, sessionKey: e.sessionKey }, "could not look at a helper's answer"),
          );
          return;
        }
        this.#ended(e.sessionKey, e.run.outcome === "aborted" ? "stopped" : "failed");
      } else if (e.run.trigger === "subagent") this.#woken(e.sessionKey);
    } else if (e.type === "turn_ended" && e.sessionKey.startsWith(this.#d.childPrefix)) {
      // A turn that ended without a commit (a stop the store refused): its row says how it ended.
      const display = this.#displays.get(this.rootOf(e.sessionKey));
      if (display?.helpers.get(e.sessionKey)?.state !== "running") return;
      this.#endedFromRow(e.sessionKey, display).catch((err: unknown) =>
        this.#log.warn({ err, sessionKey: e.sessionKey }, "could not look at a helper's end"),
      );
    }
  }

  /**
   * A helper answered: done, unless its row still runs (it answered before its own helpers
   * ended: their results wake it, and its answer after them ends it).
   */
  async #answered(childKey: string): Promise<void> {
    const root = this.rootOf(childKey);
    const display = this.#displays.get(root);
    if (!display) return;
    const wakes = display.wakes;
    const row = await this.#d.store.subagents.byChildSession(childKey);
    // A wake that committed meanwhile took the display: nothing to update.
    if (row?.state === "running" || this.#displays.get(root) !== display || display.wakes !== wakes) return;
    this.#ended(childKey, "done");
  }

  /** A helper's run ended: its line says so; an end never creates a display. */
  #ended(childKey: string, state: HelperStatus["state"]): void {
    const root = this.rootOf(childKey);
    const display = this.#displays.get(root);
    if (!display) return;
    const known = display.helpers.get(childKey);
    if (known) {
      this.#update(root, display, childKey, { ...known, state });
      return;
    }
    // A helper that ended without a tool call: its line needs its row (a display may be gone by then).
    const wakes = display.wakes;
    this.#d.store.subagents
      .byChildSession(childKey)
      .then((row) => {
        if (row && this.#displays.get(root) === display && display.wakes === wakes)
          this.#update(root, display, childKey, { ...baseOf(row), state });
      })
      .catch((err: unknown) => this.#log.warn({ err, childKey }, "could not show a helper's end"));
  }

  async #endedFromRow(childKey: string, display: Display): Promise<void> {
    const wakes = display.wakes;
    const row = await this.#d.store.subagents.byChildSession(childKey);
    const state = row ? stateOf(row) : undefined;
    const known = display.helpers.get(childKey);
    const current = this.#displays.get(this.rootOf(childKey)) === display && display.wakes === wakes;
    if (!state || state === "running" || !known || !current) return;
    this.#update(this.rootOf(childKey), display, childKey, { ...known, state });
  }

  #update(root: string, display: Display, childKey: string, status: HelperStatus): void {
    display.helpers.set(childKey, status);
    // Every helper stopped: no wake will take the display.
    if ([...display.helpers.values()].every((h) => h.state === "stopped")) this.stopped(root);
    else this.#show(display, status);
  }

  /** The parent's wake committed: its answer took the display; the ended helpers leave it. */
  #woken(root: string): void {
    const display = this.#displays.get(root);
    if (!display) return;
    display.wakes++;
    for (const [key, h] of display.helpers) if (h.state !== "running") display.helpers.delete(key);
    if (display.helpers.size === 0) this.#displays.delete(root);
  }

  #show(display: Display, changed: HelperStatus): void {
    const channel = this.#d.channels.channelFor(display.target);
    channel?.streamHelpers?.(
      { ...display.target, inboxIds: [] },
      { helpers: [...display.helpers.values()], changed },
    );
  }
}

/** A helper's line without its state or call. */
function baseOf(row: Subagent): Pick<HelperStatus, "id" | "label" | "depth"> {
  return { id: row.id, label: row.label, depth: row.depth };
}

/** A row's state as a display shows it. */
function stateOf(row: Subagent): HelperStatus["state"] {
  if (row.state === "cancelled") return "stopped";
  if (row.state === "done" || row.state === "failed") return row.state;
  return "running";
}
