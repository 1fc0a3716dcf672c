/**
 * Pairing in SQLite: pending requests (one per sender and channel, expiring) and the senders
 * the owner approved. Written by the gateway and by `switchyard pairing approve` in another
 * process; WAL lets both work at once.
 */
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { ApprovedSender, PairingRepo, PairingRequest } from "../repos/pairing-repo.js";
import { guard } from "./errors.js";

interface RequestRow {
  channel: string;
  account_id: string;
  sender_id: string;
  sender_name: string;
  code: string;
  created_at: number;
  expires_at: number;
}

interface ApprovedRow {
  channel: string;
  sender_id: string;
  sender_name: string;
  code: string;
  approved_at: number;
}

type RequestInput = Parameters<PairingRepo["request"]>[0];
type RequestResult = Awaited<ReturnType<PairingRepo["request"]>>;

export class SqlitePairingRepo implements PairingRepo {
  readonly #path: string;
  readonly #dropExpired: Statement<[number]>;
  readonly #bySender: Statement<[string, string], RequestRow>;
  readonly #byCode: Statement<[string, string], RequestRow>;
  readonly #countPending: Statement<[string], { n: number }>;
  readonly #insert: Statement<[RequestRow]>;
  readonly #deleteRequest: Statement<[string, string]>;
  readonly #approveRow: Statement<[ApprovedRow]>;
  readonly #approved: Statement<[string, string], { n: number }>;
  readonly #pending: Statement<[], RequestRow>;
  readonly #allApproved: Statement<[], ApprovedRow>;
  readonly #revoke: Statement<[string, string]>;
  readonly #deny: Statement<[string, string]>;
  readonly #requestTx: Transaction<
    (input: RequestInput, ttlMs: number, maxPending: number, now: number) => RequestResult
  >;
  readonly #approveTx: Transaction<
    (channel: string, code: string, now: number) => ApprovedSender | undefined
  >;

  constructor(db: Database, path: string) {
    this.#path = path;
    this.#dropExpired = db.prepare("DELETE FROM pairing_requests WHERE expires_at <= ?");
    this.#bySender = db.prepare("SELECT * FROM pairing_requests WHERE channel = ? AND sender_id = ?");
    this.#byCode = db.prepare("SELECT * FROM pairing_requests WHERE channel = ? AND code = ?");
    this.#countPending = db.prepare("SELECT COUNT(*) AS n FROM pairing_requests WHERE channel = ?");
    this.#insert = db.prepare(
      `INSERT INTO pairing_requests (channel, account_id, sender_id, sender_name, code, created_at, expires_at)
       VALUES (@channel, @account_id, @sender_id, @sender_name, @code, @created_at, @expires_at)`,
    );
    this.#deleteRequest = db.prepare("DELETE FROM pairing_requests WHERE channel = ? AND sender_id = ?");
    this.#approveRow = db.prepare(
      `INSERT OR REPLACE INTO approved_senders (channel, sender_id, sender_name, code, approved_at)
       VALUES (@channel, @sender_id, @sender_name, @code, @approved_at)`,
    );
    this.#approved = db.prepare(
      "SELECT COUNT(*) AS n FROM approved_senders WHERE channel = ? AND sender_id = ?",
    );
    this.#pending = db.prepare("SELECT * FROM pairing_requests ORDER BY created_at, channel, sender_id");
    this.#allApproved = db.prepare("SELECT * FROM approved_senders ORDER BY approved_at, channel, sender_id");
    this.#revoke = db.prepare("DELETE FROM approved_senders WHERE channel = ? AND sender_id = ?");
    this.#deny = db.prepare("DELETE FROM pairing_requests WHERE channel = ? AND code = ?");

    this.#requestTx = db.transaction((input, ttlMs, maxPending, now) => {
      this.#dropExpired.run(now);
      const existing = this.#bySender.get(input.channel, input.senderId);
      if (existing) return { status: "existing" as const, request: toRequest(existing) };
      if ((this.#countPending.get(input.channel)?.n ?? 0) >= maxPending) return { status: "full" as const };
      const row: RequestRow = {
        channel: input.channel,
        account_id: input.accountId,
        sender_id: input.senderId,
        sender_name: input.senderName,
        code: input.code.toUpperCase(),
        created_at: now,
        expires_at: now + ttlMs,
      };
      this.#insert.run(row);
      return { status: "created" as const, request: toRequest(row) };
    });
    this.#approveTx = db.transaction((channel, code, now) => {
      this.#dropExpired.run(now);
      const row = this.#byCode.get(channel, code.trim().toUpperCase());
      if (!row) return undefined;
      this.#deleteRequest.run(channel, row.sender_id);
      const approved: ApprovedRow = {
        channel,
        sender_id: row.sender_id,
        sender_name: row.sender_name,
        code: row.code,
        approved_at: now,
      };
      this.#approveRow.run(approved);
      return toApproved(approved);
    });
  }

  async request(
    input: RequestInput,
    options: { ttlMs: number; maxPending: number },
    now: number,
  ): Promise<RequestResult> {
    return guard(this.#path, () => this.#requestTx.immediate(input, options.ttlMs, options.maxPending, now));
  }

  async approve(channel: string, code: string, now: number): Promise<ApprovedSender | undefined> {
    return guard(this.#path, () => this.#approveTx.immediate(channel, code, now));
  }

  async isApproved(channel: string, senderId: string): Promise<boolean> {
    return guard(this.#path, () => (this.#approved.get(channel, senderId)?.n ?? 0) > 0);
  }

  async listPending(now: number): Promise<PairingRequest[]> {
    return guard(this.#path, () =>
      this.#pending
        .all()
        .filter((r) => r.expires_at > now)
        .map(toRequest),
    );
  }

  async listApproved(): Promise<ApprovedSender[]> {
    return guard(this.#path, () => this.#allApproved.all().map(toApproved));
  }

  async revoke(channel: string, senderId: string): Promise<boolean> {
    return guard(this.#path, () => this.#revoke.run(channel, senderId).changes > 0);
  }

  async deny(channel: string, code: string): Promise<boolean> {
    return guard(this.#path, () => this.#deny.run(channel, code.trim().toUpperCase()).changes > 0);
  }
}

function toRequest(row: RequestRow): PairingRequest {
  return {
    channel: row.channel,
    accountId: row.account_id,
    senderId: row.sender_id,
    senderName: row.sender_name,
    code: row.code,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

function toApproved(row: ApprovedRow): ApprovedSender {
  return {
    channel: row.channel,
    senderId: row.sender_id,
    senderName: row.sender_name,
    code: row.code,
    approvedAt: row.approved_at,
  };
}
