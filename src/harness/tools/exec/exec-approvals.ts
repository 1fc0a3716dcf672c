/**
 * Commands waiting for a person's yes (`tools.exec.approval: ask`). When the guard flags a
 * command in a chat, the exec tool files it here and the model relays the id; the person answers
 * `/approve <id>` or `/deny <id>` in the same chat, and the exec capability's turn hook decides
 * it: the exact command filed runs once, in that session, if the same sender approves it before
 * it expires. In an assignment's run the request goes to the owner instead (the call pauses the
 * run like request_approval) and is decided by their answer when the run resumes. Kept in
 * memory: a restart forgets every pending request (nothing runs unasked).
 */
import { randomBytes } from "node:crypto";
import type { Clock } from "../../../util/clock.js";

/** Default `ttlMs`: how long a request can be approved in chat. */
export const DEFAULT_APPROVAL_TTL_MS = 10 * 60_000;
/** How long an owner's request can be approved: past the assignment question's own expiry. */
export const OWNER_APPROVAL_TTL_MS = 7 * 24 * 3_600_000;

/** An owner's answer that approves: it starts with yes, ok, approve(d), sure, go ahead or do it. */
const YES = /^\s*(?:yes|y|ok|okay|approved?|sure|go ahead|do it)\b/i;

/**
 * Whether an owner's answer approves: it starts with yes, ok, approve(d), sure, go ahead or do
 * it (case-insensitive); anything else, "no" or changes asked for, does not. One rule for every
 * approval an owner answers (exec commands, plans).
 */
export function isApproval(answer: string): boolean {
  return YES.test(answer);
}

/** One flagged command waiting for its person. */
export interface ApprovalRequest {
  /** `ap-` and 8 hex digits: short enough to type. */
  id: string;
  sessionKey: string;
  /** The only sender whose `/approve` counts; null: an assignment's owner, through its answer. */
  senderId: string | null;
  /** The tool call that filed it, for an owner's request (their answer becomes its result). */
  toolCallId?: string;
  command: string;
  /** Absolute folder it runs in. */
  cwd: string;
  /** The guard rule that flagged it. */
  rule: string;
  expiresAt: number;
}

/** A person's `/approve <id>` or `/deny <id>`, parsed. */
export interface ApprovalReply {
  verb: "approve" | "deny";
  id: string;
}

/** What a reply decided. `unknown`: no such request in this session (used, never filed, or another sender's). */
export type ApprovalDecision =
  | { type: "approved"; request: ApprovalRequest }
  | { type: "denied"; request: ApprovalRequest }
  | { type: "expired"; request: ApprovalRequest }
  | { type: "unknown"; id: string };

/** Options of ExecApprovals. */
export interface ExecApprovalsOptions {
  clock: Clock;
  /** How long a request can be approved. Default DEFAULT_APPROVAL_TTL_MS (10 min). */
  ttlMs?: number;
}

const REPLY = /^\/?(approve|deny)(?:@[\w.]+)?\s+(ap-[0-9a-f]{8})\s*$/i;

/**
 * `/approve ap-…` or `/deny ap-…` (the whole message, `@botname` allowed; the slash may be left
 * out, as in Slack, where a leading `/` starts a slash command of its own), else undefined.
 */
export function parseApprovalReply(text: string): ApprovalReply | undefined {
  const match = REPLY.exec(text.trim());
  if (!match?.[1] || !match[2]) return undefined;
  return { verb: match[1].toLowerCase() as ApprovalReply["verb"], id: match[2].toLowerCase() };
}

/** Owns the pending requests of one gateway (see the file header). */
export class ExecApprovals {
  readonly #pending = new Map<string, ApprovalRequest>();
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(options: ExecApprovalsOptions) {
    const ttlMs = options.ttlMs ?? DEFAULT_APPROVAL_TTL_MS;
    if (!Number.isInteger(ttlMs) || ttlMs <= 0)
      throw new RangeError(`ExecApprovalsOptions.ttlMs must be a positive integer, got ${String(ttlMs)}`);
    this.#clock = options.clock;
    this.#ttlMs = ttlMs;
  }

  /** Minutes a request stays open, for the text that asks. */
  get ttlMinutes(): number {
    return Math.max(1, Math.round(this.#ttlMs / 60_000));
  }

  /** Files a flagged command; returns the request with its id and expiry. */
  request(r: Omit<ApprovalRequest, "id" | "expiresAt">): ApprovalRequest {
    this.#dropExpired();
    const request = {
      ...r,
      id: `ap-${randomBytes(4).toString("hex")}`,
      expiresAt: this.#clock.now() + (r.senderId === null ? OWNER_APPROVAL_TTL_MS : this.#ttlMs),
    };
    this.#pending.set(request.id, request);
    return request;
  }

  /**
   * Decides `reply` from `senderId` in `sessionKey`: the request is removed (so it runs at most
   * once) when approved, denied or expired; a reply from another session or sender finds
   * nothing (`unknown`) and leaves it for its own person.
   */
  decide(reply: ApprovalReply, from: { sessionKey: string; senderId: string }): ApprovalDecision {
    this.#dropExpired();
    const request = this.#pending.get(reply.id);
    if (!request || request.sessionKey !== from.sessionKey || request.senderId !== from.senderId)
      return { type: "unknown", id: reply.id };
    this.#pending.delete(reply.id);
    if (this.#clock.now() > request.expiresAt) return { type: "expired", request };
    return reply.verb === "approve" ? { type: "approved", request } : { type: "denied", request };
  }

  /**
   * Decides an owner's request by their answer to it (the text after "The owner answered: "):
   * approved when it starts with yes/ok/approve/sure/go ahead/do it, denied otherwise, removed
   * either way. Undefined when tool call `toolCallId` of `sessionKey` filed no open request.
   */
  decideAnswer(sessionKey: string, toolCallId: string, answer: string): ApprovalDecision | undefined {
    this.#dropExpired();
    const found = [...this.#pending.values()].find(
      (r) => r.senderId === null && r.sessionKey === sessionKey && r.toolCallId === toolCallId,
    );
    if (!found) return undefined;
    this.#pending.delete(found.id);
    if (this.#clock.now() > found.expiresAt) return { type: "expired", request: found };
    return YES.test(answer) ? { type: "approved", request: found } : { type: "denied", request: found };
  }

  /** Requests still open (not decided, not expired). */
  get size(): number {
    this.#dropExpired();
    const now = this.#clock.now();
    return [...this.#pending.values()].filter((r) => now <= r.expiresAt).length;
  }

  /** Forgets requests expired for a whole TTL (until then a late reply is told it expired). */
  #dropExpired(): void {
    const now = this.#clock.now();
    for (const [id, r] of this.#pending) if (now > r.expiresAt + this.#ttlMs) this.#pending.delete(id);
  }
}
