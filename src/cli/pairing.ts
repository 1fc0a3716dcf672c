/**
 * `switchyard pairing list` and `switchyard pairing approve <channel> <CODE>`: the owner's side
 * of DM pairing. Works whether or not the gateway is running (the database is shared, WAL).
 */
import { join } from "node:path";
import { resolveHome } from "../config/home.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import type { CliOptions } from "./main.js";
import { UnknownIdError } from "./subcommand.js";

export async function runPairing(options: CliOptions, args: string[]): Promise<number> {
  const [action, channel, code] = args;
  const home = resolveHome(options.home, process.env, process.cwd());
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  try {
    const now = Date.now();
    if (action === "list" || action === undefined) {
      const pending = await store.pairing.listPending(now);
      const approved = await store.pairing.listApproved();
      if (pending.length === 0) process.stdout.write("no pending pairing requests\n");
      for (const p of pending) {
        const minutes = Math.max(1, Math.round((p.expiresAt - now) / 60_000));
        process.stdout.write(
          `pending   ${p.channel} ${p.code}  ${p.senderName} (id ${p.senderId}), expires in ${minutes} min — approve: switchyard pairing approve ${p.channel} ${p.code}\n`,
        );
      }
      for (const a of approved) {
        process.stdout.write(
          `approved  ${a.channel} ${a.senderName} (id ${a.senderId}) on ${new Date(a.approvedAt).toISOString()}\n`,
        );
      }
      return 0;
    }
    if (action === "approve") {
      if (!channel || !code) {
        process.stderr.write("usage: switchyard pairing approve <channel> <CODE>\n");
        return 2;
      }
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
    if (action === "revoke") {
      if (!channel || !code) {
        process.stderr.write("usage: switchyard pairing revoke <channel> <SENDER_ID>\n");
        return 2;
      }
      if (!(await store.pairing.revoke(channel, code)))
        throw new UnknownIdError(
          code,
          `no approved ${channel} sender with id ${code} (see switchyard pairing list)`,
        );
      process.stdout.write(`revoked ${code} on ${channel}\n`);
      return 0;
    }
    process.stderr.write(`switchyard pairing: unknown action "${action}" (list, approve, revoke)\n`);
    return 2;
  } finally {
    await store.close();
  }
}
