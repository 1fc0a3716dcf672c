/**
 * Slack for the chaos run: FakeSlack over Socket Mode with C users, each in a DM (D1…) with the
 * bot. The bot's writes are read as the fake carries them out (chat.postMessage, chat.update,
 * chat.delete); a reply is held with a `hangAfter` fault for posts or updates carrying a
 * complete answer. An envelope not acked when its socket dies is sent again on the next
 * connection, as on Slack (the fake's SocketHub does this; Slack gives up after 3 retries).
 */
import { FakeSlack } from "../../fakes/slack-api.js";
import type { BotWrite, ChatPlatform, ChatView, HeldReply, KillMoment } from "../types.js";
import { firstEvent } from "../waits.js";

const WRITES: Record<string, BotWrite["kind"]> = {
  "chat.postMessage": "post",
  "chat.update": "edit",
  "chat.delete": "delete",
};

/** Creates the Slack platform; `now` is the driver's clock. */
export function slackPlatform(now: () => number): ChatPlatform {
  const fake = new FakeSlack();
  const listeners = new Set<(write: BotWrite) => void>();
  /** Envelopes of user messages, told once written to a socket: id and the message text. */
  const written = new Set<(envelope: { id: string; text: string }) => void>();
  let chats = 0;
  /** Socket Mode connections opened before the last spawn (the dead process's). */
  let openedAtSpawn = 0;

  const chatOf = (channel: unknown): number => Number(String(channel).replace(/^D/, ""));

  return {
    channel: "slack",
    ownMoments: ["envelope-unacked"] as KillMoment[],
    async start(count) {
      chats = count;
      await fake.start();
      for (let i = 1; i <= count; i++) {
        fake.addUser({ id: `U${i}`, name: `user${i}` });
        fake.addChannel({ id: `D${i}`, name: "", kind: "im", user: `U${i}` });
      }
      fake.onCarriedOut((method, params, result) => {
        const kind = WRITES[method];
        if (!kind) return;
        const chat = chatOf(result.channel ?? params.channel);
        const messageId = String(result.ts ?? params.ts);
        const text = kind === "delete" ? "" : String(params.text ?? "");
        const atMs = now();
        for (const listener of [...listeners]) listener({ chat, messageId, kind, text, atMs });
      });
    },
    configLines: () => [
      "  slack:",
      `    botToken: ${fake.botToken}`,
      `    appToken: ${fake.appToken}`,
      `    apiUrl: ${fake.apiUrl}`,
      `    allowFrom: [${Array.from({ length: chats }, (_, i) => `U${i + 1}`).join(", ")}]`,
      "    streaming: edit",
      "    workingStatus: off",
    ],
    send(chat, text) {
      // With no socket open the fake waits for the next connection: never awaited here.
      fake.userMessage({ channel: `D${chat}`, user: `U${chat}`, text }).then(
        (sent) => {
          for (const listener of [...written]) listener({ id: sent.envelopeId, text });
        },
        () => {}, // the fake closed first
      );
    },
    onWrite(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    holdNextReply(test): HeldReply {
      let armed = true;
      let caught = false;
      // Disarmed faults stay queued but never match again.
      const when = (params: Record<string, unknown>) => {
        if (!armed || typeof params.text !== "string" || !test(params.text)) return false;
        armed = false;
        caught = true;
        return true;
      };
      fake.failNext("chat.postMessage", { hangAfter: true }, 1, when);
      fake.failNext("chat.update", { hangAfter: true }, 1, when);
      return {
        caught: () => caught,
        disarm: () => {
          armed = false;
        },
      };
    },
    spawned() {
      openedAtSpawn = fake.connectionsOpened();
    },
    watchOwn(moment, signal) {
      if (moment !== "envelope-unacked") return Promise.reject(new Error(`slack has no moment ${moment}`));
      return firstEvent<{ id: string; text: string }, string>(
        (listener) => {
          written.add(listener);
          return () => written.delete(listener);
        },
        // Written after the new process opened its socket: not into the dead one's before it closed.
        (envelope) =>
          fake.connectionsOpened() > openedAtSpawn && fake.ackOf(envelope.id) === undefined
            ? `"${envelope.text}" delivered, not acked`
            : undefined,
        signal,
      );
    },
    view(): ChatView[] {
      return Array.from({ length: chats }, (_, i) => {
        const chat = i + 1;
        const messages = fake
          .history(`D${chat}`)
          .filter((m) => m.bot_id === fake.botId)
          .map((m) => {
            return { messageId: m.ts, text: m.text };
          });
        return { chat, messages };
      });
    },
    close: () => fake.close(),
  };
}
