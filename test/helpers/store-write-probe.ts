/**
 * Opens the store at argv[2] and receives one message into it; prints the StoreError's code (or
 * "ok"). Run as another user by tests that need file permissions to hold, which root ignores.
 */
import { StoreError } from "../../src/store/store-error.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";

const path = process.argv[2];
if (!path) throw new Error("usage: store-write-probe <database path>");
let outcome = "ok";
try {
  const store = openSqliteStore({ path });
  try {
    await store.inbox.receive(
      {
        channel: "console",
        accountId: "default",
        chatId: "local",
        senderId: "me",
        senderName: "Me",
        isDirect: true,
        mentionsBot: true,
        text: "probe",
        attachments: [],
        platformMessageId: "probe",
        receivedAt: 1,
      },
      "probe",
      1,
    );
  } finally {
    store.close();
  }
} catch (err) {
  outcome = err instanceof StoreError ? err.code : `not a StoreError: ${String(err)}`;
}
process.stdout.write(`${outcome}\n`);
