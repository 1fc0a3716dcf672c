/**
 * Pairing on PostgreSQL: pending requests (one per sender and channel, expiring) and the senders
 * the owner approved, shared by every node. A request's checks and insert, and an approval's
 * lookup, delete and insert, are one transaction each.
 */
import type { ApprovedSender, PairingRepo, PairingRequest } from "../repos/pairing-repo.js";
import type { PgDb, PgRunner } from "./pg-db.js";

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

/** The PairingRepo on PostgreSQL: owns the pairing_requests and approved_senders tables. */
export class PgPairingRepo implements PairingRepo {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  /** The pool this repository runs on. */
  get db(): PgDb {
    return this.#db;
  }

  async request(
    input: RequestInput,
    options: { ttlMs: number; maxPending: number },
    now: number,
  ): Promise<RequestResult> {
    return this.#db.tx(async (tx): Promise<RequestResult> => {
      await dropExpired(tx, now);
      const existing = await tx.row<RequestRow>(
        "SELECT * FROM pairing_requests WHERE channel = $1 AND sender_id = $2",
        [input.channel, input.senderId],
      );
      if (existing) return { status: "existing", request: toRequest(existing) };
      const count = await tx.row<{ n: number }>(
        "SELECT COUNT(*) AS n FROM pairing_requests WHERE channel = $1",
        [input.channel],
      );
      if ((count?.n ?? 0) >= options.maxPending) return { status: "full" };
      const row: RequestRow = {
        channel: input.channel,
        account_id: input.accountId,
        sender_id: input.senderId,
        sender_name: input.senderName,
        code: input.code.toUpperCase(),
        created_at: now,
        expires_at: now + options.ttlMs,
      };
      await tx.run(
        `INSERT INTO pairing_requests (channel, account_id, sender_id, sender_name, code, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          row.channel,
          row.account_id,
          row.sender_id,
          row.sender_name,
          row.code,
          row.created_at,
          row.expires_at,
        ],
      );
      return { status: "created", request: toRequest(row) };
    });
  }

  async approve(channel: string, code: string, now: number): Promise<ApprovedSender | undefined> {
    return this.#db.tx(async (tx) => {
      await dropExpired(tx, now);
      const row = await tx.row<RequestRow>(
        "SELECT * FROM pairing_requests WHERE channel = $1 AND code = $2",
        [channel, code.trim().toUpperCase()],
      );
      if (!row) return undefined;
      await tx.run("DELETE FROM pairing_requests WHERE channel = $1 AND sender_id = $2", [
        channel,
        row.sender_id,
      ]);
      const approved: ApprovedRow = {
        channel,
        sender_id: row.sender_id,
        sender_name: row.sender_name,
        code: row.code,
        approved_at: now,
      };
      await tx.run(
        `INSERT INTO approved_senders (channel, sender_id, sender_name, code, approved_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (channel, sender_id) DO UPDATE SET
           sender_name = excluded.sender_name, code = excluded.code, approved_at = excluded.approved_at`,
        [approved.channel, approved.sender_id, approved.sender_name, approved.code, approved.approved_at],
      );
      return toApproved(approved);
    });
  }

  async isApproved(channel: string, senderId: string): Promise<boolean> {
    const row = await this.#db.row("SELECT 1 FROM approved_senders WHERE channel = $1 AND sender_id = $2", [
      channel,
      senderId,
    ]);
    return row !== undefined;
  }

  async listPending(now: number): Promise<PairingRequest[]> {
    const rows = await this.#db.rows<RequestRow>(
      "SELECT * FROM pairing_requests WHERE expires_at > $1 ORDER BY created_at, channel, sender_id",
      [now],
    );
    return rows.map(toRequest);
  }

  async listApproved(): Promise<ApprovedSender[]> {
    const rows = await this.#db.rows<ApprovedRow>(
      "SELECT * FROM approved_senders ORDER BY approved_at, channel, sender_id",
    );
    return rows.map(toApproved);
  }

  async revoke(channel: string, senderId: string): Promise<boolean> {
    const removed = await this.#db.run("DELETE FROM approved_senders WHERE channel = $1 AND sender_id = $2", [
      channel,
      senderId,
    ]);
    return removed > 0;
  }

  async deny(channel: string, code: string): Promise<boolean> {
    const removed = await this.#db.run("DELETE FROM pairing_requests WHERE channel = $1 AND code = $2", [
      channel,
      code.trim().toUpperCase(),
    ]);
    return removed > 0;
  }
}

/** Drops the requests that expired by `now`. */
async function dropExpired(tx: PgRunner, now: number): Promise<void> {
  await tx.run("DELETE FROM pairing_requests WHERE expires_at <= $1", [now]);
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
