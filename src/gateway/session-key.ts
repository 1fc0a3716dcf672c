/**
 * Session keys: which conversation an inbound message belongs to. Direct messages follow the
 * `dmScope` policy; groups and threads always get keys of their own, per bot account, so two
 * bots in one group keep two conversations.
 */
import type { InboundMessage } from "../channels/types.js";

/** How direct messages map to sessions. `per-channel-peer` (default) keeps each person's DMs apart per channel. */
export type DmScope = "per-channel-peer" | "per-peer" | "per-account-channel-peer" | "main";

/**
 * Builds the session key, e.g. `agent:main:telegram:dm:42` (DM, default scope),
 * `agent:main:telegram:work:dm:42` (DM, `per-account-channel-peer`) or
 * `agent:main:slack:default:group:C1:thread:17.1` (group thread of the account "default").
 */
export function sessionKeyFor(message: InboundMessage, agentId: string, dmScope: DmScope): string {
  const base = `agent:${agentId}`;
  if (message.isDirect) {
    const peer = clean(message.senderId);
    switch (dmScope) {
      case "main":
        return `${base}:main`;
      case "per-peer":
        return `${base}:dm:${peer}`;
      case "per-account-channel-peer":
        return `${base}:${message.channel}:${clean(message.accountId)}:dm:${peer}`;
      case "per-channel-peer":
        return `${base}:${message.channel}:dm:${peer}`;
    }
  }
  return groupSessionKey(agentId, message);
}

/** The session of a group chat (or one of its threads), per bot account. */
export function groupSessionKey(
  agentId: string,
  chat: { channel: string; accountId: string; chatId: string; threadId?: string | undefined },
): string {
  const group = `agent:${agentId}:${chat.channel}:${clean(chat.accountId)}:group:${clean(chat.chatId)}`;
  return chat.threadId ? `${group}:thread:${clean(chat.threadId)}` : group;
}

/** Key segments may not contain ':' (it separates segments) or whitespace. */
function clean(part: string): string {
  return part.replace(/[:\s]/g, "_");
}
