/**
 * Who may reach the agent, for channels with platform users (Telegram, Slack, Discord):
 * direct-message policy with pairing, group allowlist, and mention gating. Nobody outside
 * the policy ever reaches the model or a tool: the router rejects before anything is queued.
 */
import { randomInt } from "node:crypto";
import type { InboundMessage } from "../channels/types.js";
import { NOT_MENTIONED, type PairingRepo } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** Decides whether a sender may reach the agent. */
export interface AccessPolicy {
  check(message: InboundMessage): Promise<AccessVerdict>;
  /** Whether `check` would allow the message, without its side effects (no pairing code). */
  admits?(message: InboundMessage): Promise<boolean>;
  /** How many unaddressed group messages a mentioned run sees (0: none). */
  readonly groupHistoryLimit: number;
}

export type AccessVerdict = { allowed: true } | { allowed: false; reason: string; reply?: string };

/** Local channels (console, HTTP on loopback) are the owner's own. */
export const allowAll: AccessPolicy = { check: async () => ({ allowed: true }), groupHistoryLimit: 0 };

export type DmPolicy = "pairing" | "allowlist" | "open" | "disabled";
export type GroupPolicy = "allowlist" | "open" | "disabled";

export interface ChannelAccessOptions {
  channel: string;
  /** Default "pairing": unknown senders get a code the owner approves. */
  dmPolicy: DmPolicy;
  /** Sender ids always allowed in direct messages. */
  allowFrom: readonly string[];
  /** Default "allowlist": only the chats in `groups`. */
  groupPolicy: GroupPolicy;
  /** Group chat ids allowed under the allowlist policy. */
  groups: readonly string[];
  /** In groups, answer only when addressed (default true). */
  requireMention: boolean;
  /** Default 50. */
  groupHistoryLimit: number;
  pairing: PairingRepo;
  clock: Clock;
  logger: Logger;
  /** Pairing code lifetime (default 1 h) and pending cap per channel (default 3). */
  pairingTtlMs?: number;
  maxPendingPairings?: number;
}

/** Characters of pairing codes: upper case, no 0/O, 1/I/L. */
const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

export function newPairingCode(): string {
  let code = "";
  for (let i = 0; i < 8; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

export class ChannelAccessPolicy implements AccessPolicy {
  readonly #o: ChannelAccessOptions;
  readonly #allowFrom: Set<string>;
  readonly #groups: Set<string>;
  readonly groupHistoryLimit: number;

  constructor(options: ChannelAccessOptions) {
    this.#o = options;
    this.#allowFrom = new Set(options.allowFrom.map(String));
    this.#groups = new Set(options.groups.map(String));
    this.groupHistoryLimit = options.groupHistoryLimit;
  }

  async check(message: InboundMessage): Promise<AccessVerdict> {
    return message.isDirect ? this.#checkDirect(message) : this.#checkGroup(message);
  }

  async admits(message: InboundMessage): Promise<boolean> {
    const decision = message.isDirect ? await this.#decideDirect(message) : await this.#checkGroup(message);
    return decision.allowed === true;
  }

  /** The DM policy without side effects: allowed, refused, or a stranger who may ask to pair. */
  async #decideDirect(message: InboundMessage): Promise<AccessVerdict | { allowed: "pairing" }> {
    const { dmPolicy, pairing, channel } = this.#o;
    if (dmPolicy === "disabled")
      return { allowed: false, reason: "direct messages are disabled (dmPolicy: disabled)" };
    if (dmPolicy === "open" || this.#allowFrom.has(message.senderId)) return { allowed: true };
    if (dmPolicy === "allowlist")
      return { allowed: false, reason: "sender is not in allowFrom (dmPolicy: allowlist)" };
    if (await pairing.isApproved(channel, message.senderId)) return { allowed: true };
    return { allowed: "pairing" };
  }

  async #checkDirect(message: InboundMessage): Promise<AccessVerdict> {
    const decision = await this.#decideDirect(message);
    if (decision.allowed !== "pairing") return decision;
    const { pairing, clock, channel } = this.#o;
    const result = await pairing.request(
      {
        channel,
        accountId: message.accountId,
        senderId: message.senderId,
        senderName: message.senderName,
        code: newPairingCode(),
      },
      { ttlMs: this.#o.pairingTtlMs ?? 3_600_000, maxPending: this.#o.maxPendingPairings ?? 3 },
      clock.now(),
    );
    if (result.status === "full") {
      this.#o.logger.warn(
        { channel, senderId: message.senderId },
        "pairing request dropped: too many pending requests",
      );
      return { allowed: false, reason: "pairing: too many pending requests" };
    }
    if (result.status === "existing") return { allowed: false, reason: "pairing: awaiting approval" };
    const { code } = result.request;
    this.#o.logger.info(
      { channel, senderId: message.senderId, senderName: message.senderName, code },
      `pairing requested: approve with "switchyard pairing approve ${channel} ${code}"`,
    );
    return {
      allowed: false,
      reason: "pairing: code issued",
      reply: `Hi! I don't know you yet, so I can't answer. Your pairing code is ${code} (valid for one hour). Ask my owner to approve it with:\nswitchyard pairing approve ${channel} ${code}`,
    };
  }

  async #checkGroup(message: InboundMessage): Promise<AccessVerdict> {
    const { groupPolicy, requireMention } = this.#o;
    if (groupPolicy === "disabled")
      return { allowed: false, reason: "groups are disabled (groupPolicy: disabled)" };
    if (groupPolicy === "allowlist" && !this.#groups.has(message.chatId)) {
      return { allowed: false, reason: `group ${message.chatId} is not in groups (groupPolicy: allowlist)` };
    }
    if (requireMention && !message.mentionsBot) return { allowed: false, reason: NOT_MENTIONED };
    return { allowed: true };
  }
}
