/**
 * The pairing contract: unknown senders ask for access with a short code the owner approves;
 * approved senders are kept per channel.
 */

/** An unknown sender's request to talk to the agent, approved by the owner with its code. */
export interface PairingRequest {
  channel: string;
  accountId: string;
  senderId: string;
  senderName: string;
  /** 8 characters, upper case, no ambiguous characters. */
  code: string;
  createdAt: number;
  expiresAt: number;
}

/** A sender the owner approved (by its pairing code): the access policy lets it in. */
export interface ApprovedSender {
  channel: string;
  senderId: string;
  senderName: string;
  approvedAt: number;
  /** The code that approved it. */
  code: string;
}

/** Pairing requests and approved senders, per channel. */
export interface PairingRepo {
  /**
   * The sender's unexpired request if there is one (`existing`), else a new one with `code`
   * (`created`) — unless the channel already has `maxPending` unexpired requests (`full`).
   * Expired requests are dropped in the same step.
   */
  request(
    input: { channel: string; accountId: string; senderId: string; senderName: string; code: string },
    options: { ttlMs: number; maxPending: number },
    now: number,
  ): Promise<{ status: "created" | "existing"; request: PairingRequest } | { status: "full" }>;
  /** Approves the unexpired request with this code (case-insensitive) on `channel`; removes it. */
  approve(channel: string, code: string, now: number): Promise<ApprovedSender | undefined>;
  isApproved(channel: string, senderId: string): Promise<boolean>;
  listPending(now: number): Promise<PairingRequest[]>;
  listApproved(): Promise<ApprovedSender[]>;
  /** Removes an approval; returns whether there was one. */
  revoke(channel: string, senderId: string): Promise<boolean>;
  /** Drops a pending request by its code without approving it; returns whether there was one. */
  deny(channel: string, code: string): Promise<boolean>;
}
