/**
 * Discord for the chaos run: FakeDiscord with C users, each in a DM with the bot. The bot's
 * writes are read as the fake stores them (POST, PATCH, DELETE of channel messages); a reply is
 * held with a `hangAfter` fault for a post or edit carrying a complete answer. Discord does not
 * redeliver: what a user sent while the gateway was down reaches it only through its catch-up
 * (the history read after READY), which the `after-ready` moment kills into.
 */
import { FakeDiscord } from "../../fakes/discord-api.js";
import type { BotWrite, ChatPlatform, ChatView, HeldReply, KillMoment } from "../types.js";
import { WaitAborted } from "../waits.js";

const TOKEN = "fake-discord-chaos-token-0123456789";
const KINDS = { MESSAGE_CREATE: "post", MESSAGE_UPDATE: "edit", MESSAGE_DELETE: "delete" } as const;

/** The user of chat `chat` (1-based). */
function userOf(chat: number): { id: string; username: string } {
  return { id: `4000000000000${String(chat).padStart(5, "0")}`, username: `user${chat}` };
}

/** Creates the Discord platform; `now` is the driver's clock. */
export function discordPlatform(now: () => number): ChatPlatform {
  const fake = new FakeDiscord({ token: TOKEN });
  const listeners = new Set<(write: BotWrite) => void>();
  /** DM channel id → chat. */
  const chatByChannel = new Map<string, number>();
  let chats = 0;
  let identifiesAtSpawn = 0;

  return {
    channel: "discord",
    ownMoments: ["after-ready"] as KillMoment[],
    async start(count) {
      chats = count;
      await fake.start();
      for (let chat = 1; chat <= count; chat++) {
        fake.addUser(userOf(chat));
        chatByChannel.set(fake.dmChannelOf(userOf(chat).id), chat);
      }
      fake.onMessage((t, message) => {
        const chat = chatByChannel.get(message.channel_id);
        if (chat === undefined || message.author.id !== fake.botUser.id) return;
        const kind = KINDS[t];
        const atMs = now();
        const text = kind === "delete" ? "" : message.content;
        for (const listener of [...listeners]) listener({ chat, messageId: message.id, kind, text, atMs });
      });
    },
    configLines: () => [
      "  discord:",
      `    token: ${TOKEN}`,
      `    apiUrl: ${fake.apiUrl}`,
      `    allowFrom: [${Array.from({ length: chats }, (_, i) => `"${userOf(i + 1).id}"`).join(", ")}]`,
      "    streaming: edit",
      "    slashCommands: off",
    ],
    send(chat, text) {
      fake.dm({ author: userOf(chat), content: text });
    },
    onWrite(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    holdNextReply(test): HeldReply {
      let armed = true;
      let caught = false;
      // Disarmed faults stay queued but never match again.
      const when = (body: unknown) => {
        const content = (body as { content?: unknown } | undefined)?.content;
        if (!armed || typeof content !== "string" || !test(content)) return false;
        armed = false;
        caught = true;
        return true;
      };
      fake.failNext({ method: "POST", route: "/channels/:channel/messages", when }, { hangAfter: true });
      fake.failNext(
        { method: "PATCH", route: "/channels/:channel/messages/:message", when },
        { hangAfter: true },
      );
      return {
        caught: () => caught,
        disarm: () => {
          armed = false;
        },
      };
    },
    spawned() {
      identifiesAtSpawn = fake.identifies;
    },
    watchOwn(moment, signal) {
      if (moment !== "after-ready") return Promise.reject(new Error(`discord has no moment ${moment}`));
      const count = identifiesAtSpawn + 1;
      return new Promise<string>((resolve, reject) => {
        const onAbort = () => reject(new WaitAborted(signal.reason));
        if (signal.aborted) return onAbort();
        signal.addEventListener("abort", onAbort, { once: true });
        // Re-checked on every gateway frame: resolves in the turn that dispatched READY.
        fake.waitForIdentify(count, 600_000).then(
          () => {
            signal.removeEventListener("abort", onAbort);
            resolve(`READY dispatched to session ${count}`);
          },
          () => {},
        );
      });
    },
    view(): ChatView[] {
      return Array.from({ length: chats }, (_, i) => {
        const chat = i + 1;
        const messages = fake
          .botMessages(fake.dmChannelOf(userOf(chat).id))
          .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
          .map((m) => {
            return {
              messageId: m.id,
              text: m.content,
            };
          });
        return { chat, messages };
      });
    },
    close: () => fake.close(),
  };
}
