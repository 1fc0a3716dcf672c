/**
 * Who may reach the agent, shared by every channel module: the settings fragment each platform's
 * section is built from (dmPolicy, allowFrom, groupPolicy, groups, requireMention,
 * mentionPatterns, groupHistoryLimit, streaming, mediaMaxMb), and the policy it configures —
 * direct-message policy with pairing, group allowlist, and mention gating. Nobody outside the
 * policy ever reaches the model or a tool: the router rejects before anything is queued.
 */
import { randomInt } from "node:crypto";
import { z } from "zod";
import type { PairingRepo } from "../store/repos/pairing-repo.js";
import { NOT_MENTIONED } from "../store/reasons.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { idList, regexList } from "../util/zod-sections.js";
import type { AccessPolicy, AccessVerdict, InboundMessage } from "./types.js";

/** The access keys every platform section has, with the same meaning and defaults. */
export const accessSettingsShape = {
  /** Unknown senders in DMs: a pairing code the owner approves (default), or allowlist, open, disabled. */
  dmPolicy: z.enum(["pairing", "allowlist", "open", "disabled"]).default("pairing"),
  /** Sender ids always allowed in DMs. */
  allowFrom: idList,
  /** Groups: only those in `groups` (default), any, or none. */
  groupPolicy: z.enum(["allowlist", "open", "disabled"]).default("allowlist"),
  /** Group (channel) ids allowed under groupPolicy allowlist. */
  groups: idList,
  /** In groups, answer only when addressed. */
  requireMention: z.boolean().default(true),
  /** Extra regular expressions (case-insensitive) that count as addressing the bot in groups. */
  mentionPatterns: regexList,
  /** Unaddressed group messages a mentioned run sees as context. */
  groupHistoryLimit: z.number().int().min(0).max(500).default(50),
  /** "edit": one message edited as the reply streams (at most once a second). */
  streaming: z.enum(["off", "edit"]).default("off"),
  /** Largest attachment downloaded into the workspace. */
  mediaMaxMb: z.number().positive().max(2000).default(20),
};

/** The access settings as parsed. */
export type AccessSettings = z.output<z.ZodObject<typeof accessSettingsShape>>;

/**
 * Everyone may talk: declared explicitly by local channels (console, HTTP: the owner's own, on
 * loopback or behind `gateway.auth.token`).
 */
export const allowAll: AccessPolicy = {
  check: async () => ({ allowed: true }),
  admits: async () => true,
  groupHistoryLimit: 0,
};

/** A platform's verdict on one group chat under groupPolicy allowlist (see groupRule). */
export type GroupRule = { listed: true; requireMention?: boolean } | { listed: false; reason: string };

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
  /**
   * The group rule of platforms that scope groups more finely than a flat id list (Discord:
   * servers, then channels, each with its own requireMention): replaces `groups` and, where it
   * says, `requireMention`.
   */
  groupRule?(message: InboundMessage): GroupRule;
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
    const { groupPolicy } = this.#o;
    if (groupPolicy === "disabled")
      return { allowed: false, reason: "groups are disabled (groupPolicy: disabled)" };
    const rule = this.#o.groupRule?.(message);
    if (groupPolicy === "allowlist") {
      if (rule?.listed === false)
        return { allowed: false, reason: `${rule.reason} (groupPolicy: allowlist)` };
      if (!rule && !this.#groups.has(message.chatId))
        return {
          allowed: false,
          reason: `group ${message.chatId} is not in groups (groupPolicy: allowlist)`,
        };
    }
    const requireMention = (rule?.listed ? rule.requireMention : undefined) ?? this.#o.requireMention;
    if (requireMention && !message.mentionsBot) return { allowed: false, reason: NOT_MENTIONED };
    return { allowed: true };
  }
}
