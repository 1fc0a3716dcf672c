/**
 * The sessions' contract: which session id a session key is on (`/new` starts another), the
 * chat it last answered directly, and the summaries `switchyard sessions` lists.
 */
import type { ChatTarget } from "../../channels/types.js";

/**
 * How a session's turns work. `normal`: every tool the policy allows. `plan`: only read-only
 * tools and write_file to the session's PLAN.md are offered and run (harness/modes/). `execute`:
 * following an approved plan (PLAN.md rides in each turn's context), every tool again.
 */
export type SessionMode = "normal" | "plan" | "execute";

/** One session key and its current session id. */
export interface SessionRecord {
  sessionKey: string;
  /** Current session id; `/new` starts a fresh one under the same key. */
  sessionId: string;
  lastTarget: ChatTarget | null;
  /** The model a person chose with `/model <ref>` (strict: no fallback); null for the configured chain. */
  model: string | null;
  /** The session's mode (`/plan`, `/execute`, `/mode normal`); a new session is `normal`. */
  mode: SessionMode;
  createdAt: number;
  updatedAt: number;
}

/**
 * One session key and what happened in it lately, as `switchyard sessions` lists it. Only keys
 * with a session row are listed (the gateway creates one when a key's first run starts).
 */
export interface SessionSummary {
  sessionKey: string;
  /** The key's current session id (what `/new` replaced last). */
  sessionId: string;
  /**
   * The session's `lastTarget` channel if set, else the key's channel segment
   * (`agent:<agentId>:<channel>:…`, so `agent:main:heartbeat` → "heartbeat" and
   * `agent:main:main` → "main"); a key not shaped like that gives its last segment.
   */
  channel: string;
  lastTarget: ChatTarget | null;
  /**
   * Epoch ms of the newest transcript event of the current session id or the newest inbox row
   * of the key (its last update), whichever is later; the session's `updatedAt` if neither exists.
   */
  lastActivityAt: number;
  /** Transcript events of type `user` and `assistant` in the current session id. */
  messages: number;
  /** True while the key has an inbox row in state `running` (a turn is in progress). */
  running: boolean;
}

/** The sessions repository (see the file header). */
export interface SessionRepo {
  /** Returns the session, creating it with `newSessionId` if absent. */
  ensure(
    sessionKey: string,
    newSessionId: string,
    target: ChatTarget | null,
    now: number,
  ): Promise<SessionRecord>;
  get(sessionKey: string): Promise<SessionRecord | undefined>;
  /** Starts a fresh session id under the key (`/new`); keeps its `lastTarget`, `model` and `mode`. */
  reset(sessionKey: string, newSessionId: string, now: number): Promise<SessionRecord>;
  count(): Promise<number>;
  /** Sets (a model reference) or clears (null) the session's chosen model; creates no session. Returns false when the key has no session. */
  setModel(sessionKey: string, model: string | null, now: number): Promise<boolean>;
  /** Sets the session's mode; creates no session. Returns false when the key has no session. */
  setMode(sessionKey: string, mode: SessionMode, now: number): Promise<boolean>;
  /**
   * The chat the agent was most recently addressed from directly (the newest `lastTarget` of
   * any session), where scheduled work (heartbeats) reports; undefined before any.
   */
  latestTarget(): Promise<ChatTarget | undefined>;
  /** The session most recently addressed from `target` (its `lastTarget`), if any. */
  keyForTarget(target: ChatTarget): Promise<string | undefined>;
  /**
   * Up to `limit` sessions, most recent `lastActivityAt` first (ties by key), each summarised in
   * one consistent read. `limit` <= 0 gives none.
   */
  list(limit: number): Promise<SessionSummary[]>;
}
