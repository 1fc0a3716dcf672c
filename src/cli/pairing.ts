/**
 * `switchyard pairing list|approve|revoke`: the owner's side of DM pairing. `list` shows the
 * pending codes and the approved senders (read-only; `--json` for scripts). Works whether or not
 * the gateway is running (the database is shared, WAL).
 */
import { existsSync } from "node:fs";
import { resolveHome } from "../config/home.js";
import type { ApprovedSender, PairingRequest } from "../store/repos/pairing-repo.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import type { CliOptions } from "./main.js";
import { databasePath, openForReading } from "./open-database.js";
import { UnknownIdError } from "./subcommand.js";

/** Runs `pairing list` (the default), `approve <channel> <CODE>` or `revoke <channel> <SENDER_ID>`. */
export async function runPairing(options: CliOptions, args: string[]): Promise<number> {
  const [action = "list", channel, code] = args;
  const home = resolveHome(options.home, process.env, process.cwd());
  const path = databasePath(home);
  const now = Date.now();
  if (action === "list") {
    if (channel !== undefined) {
      process.stderr.write(`switchyard pairing list: unexpected argument "${channel}"\n`);
      return 2;
    }
    // Read-only: no database yet means nothing pending and no one approved.
    let pending: PairingRequest[] = [];
    let approved: ApprovedSender[] = [];
    if (existsSync(path)) {
      const store = openForReading(path);
      try {
        pending = await store.pairing.listPending(now);
        approved = await store.pairing.listApproved();
      } finally {
        await store.close();
      }
    }
    if (options.json) process.stdout.write(`${JSON.stringify({ pending, approved }, null, 2)}\n`);
    else process.stdout.write(formatPairing(pending, approved, now));
    return 0;
  }
  if (action !== "approve" && action !== "revoke") {
    process.stderr.write(`switchyard pairing: unknown action "${action}" (list, approve, revoke)\n`);
    return 2;
  }
  if (!channel || !code) {
    const what = action === "approve" ? "<CODE>" : "<SENDER_ID>";
    process.stderr.write(`usage: switchyard pairing ${action} <channel> ${what}\n`);
    return 2;
  }
  const store = openSqliteStore({ path });
  try {
    if (action === "approve") {
      const approved = await store.pairing.approve(channel, code, now);
      if (!approved)
        throw new UnknownIdError(
          code,
          `no pending ${channel} request with code ${code.toUpperCase()} (codes expire after one hour; see switchyard pairing list)`,
        );
      process.stdout.write(
        `approved ${approved.senderName} (id ${approved.senderId}) on ${channel}; their next message will be answered\n`,
      );
      return 0;
    }
    if (!(await store.pairing.revoke(channel, code)))
      throw new UnknownIdError(
        code,
        `no approved ${channel} sender with id ${code} (see switchyard pairing list)`,
      );
    process.stdout.write(`revoked ${code} on ${channel}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** The lines of `pairing list`: pending codes (with how to approve), then approved senders (with how to revoke). */
export function formatPairing(
  pending: readonly PairingRequest[],
  approved: readonly ApprovedSender[],
  now: number,
): string {
  const lines: string[] = [];
  if (pending.length === 0) lines.push("no pending pairing requests");
  for (const p of pending) {
    const minutes = Math.max(1, Math.round((p.expiresAt - now) / 60_000));
    lines.push(
      `pending   ${p.channel} ${p.code}  ${p.senderName} (id ${p.senderId}), expires in ${minutes} min — approve: switchyard pairing approve ${p.channel} ${p.code}`,
    );
  }
  if (approved.length === 0) lines.push("no approved senders yet");
  for (const a of approved) {
    lines.push(
      `approved  ${a.channel} ${a.senderName} (id ${a.senderId}) on ${new Date(a.approvedAt).toISOString()} — revoke: switchyard pairing revoke ${a.channel} ${a.senderId}`,
    );
  }
  return `${lines.join("\n")}\n`;
}
