/**
 * `switchyard chat`: an interactive terminal chat with the running gateway, over the console
 * channel (`POST /v1/console`, streamed). Replies print as they are generated; what reaches the
 * sender's mailbox in the background (cron, heartbeat, assignments) prints on its own line as it
 * arrives (see mailbox-follower.ts). The gateway is found like `status` finds it, and the
 * configured token goes along.
 */
import { randomUUID } from "node:crypto";
import { userInfo } from "node:os";
import { type Interface, createInterface } from "node:readline/promises";
import { normalizeSender, senderProblem } from "../channels/http/sender.js";
import { type FoundGateway, findGateway } from "./find-gateway.js";
import { GatewayRequestError, requestGateway } from "./gateway-client.js";
import type { CliOptions } from "./main.js";
import { ChatCursors } from "./chat-cursors.js";
import { type FollowedReply, MailboxFollower } from "./mailbox-follower.js";
import { readSseFrames } from "./sse-frames.js";

/** How long the gateway may take to answer the readiness and status checks. */
const CHECK_TIMEOUT_MS = 3_000;

/** The sender name used when neither --sender nor the user name is a valid one. */
const FALLBACK_SENDER = "console";

/** Who the person at the terminal is: the name, or why --sender was refused; `note` says what was chosen instead. */
export type SenderChoice =
  | { type: "ok"; sender: string; note?: string }
  | { type: "invalid"; problem: string };

/**
 * The sender name for a chat: `--sender` if valid (any script; NFC), refused otherwise; else the
 * user name ($USER, then the account's) if valid; else "console", with a note saying why. A name
 * is never rewritten: a rewritten name would silently merge two people into one session.
 */
export function chooseSender(flag: string | undefined, user: string | undefined): SenderChoice {
  if (flag !== undefined) {
    const problem = senderProblem(flag, "--sender");
    return problem ? { type: "invalid", problem } : { type: "ok", sender: normalizeSender(flag) };
  }
  if (user !== undefined && user !== "") {
    if (senderProblem(user) === undefined) return { type: "ok", sender: normalizeSender(user) };
    return {
      type: "ok",
      sender: FALLBACK_SENDER,
      note: `your user name ${JSON.stringify(user)} is not a valid sender name (letters or digits of any script, or . @ + - _), so you chat as "${FALLBACK_SENDER}"; pass --sender NAME to choose one`,
    };
  }
  return { type: "ok", sender: FALLBACK_SENDER };
}

/** Runs `switchyard chat` until end of input; resolves with the exit code (2: invalid --sender). */
export async function runChat(options: CliOptions): Promise<number> {
  const choice = chooseSender(options.sender, process.env.USER || accountName());
  if (choice.type === "invalid") {
    process.stderr.write(`switchyard chat: ${choice.problem}\n`);
    return 2;
  }
  const { sender } = choice;
  if (choice.note) process.stderr.write(`note: ${choice.note}\n`);
  const found = findGateway(options);
  let status: { model?: string; simulated?: boolean };
  try {
    const health = await requestGateway(found, "/readyz", { timeoutMs: CHECK_TIMEOUT_MS });
    const body = (await health.json().catch(() => ({}))) as { ready?: boolean };
    if (!body.ready)
      process.stderr.write("note: the gateway is still starting; messages will wait until it is ready\n");
    const res = await requestGateway(found, "/v1/status", { timeoutMs: CHECK_TIMEOUT_MS });
    status = (await res.json().catch(() => ({}))) as typeof status;
  } catch (err) {
    if (!(err instanceof GatewayRequestError)) throw err;
    const hint = err.kind === "unreachable" ? "; start one with `npm start` (or switchyard gateway)" : "";
    process.stderr.write(`switchyard chat: ${err.message}${hint}\n`);
    return 1;
  }
  const tty = process.stdin.isTTY === true;
  /** Set while the prompt waits for input: a background line must redraw it. */
  let atPrompt: Interface | undefined;
  const background = (line: string) => {
    const rl = atPrompt;
    if (!rl) return void process.stdout.write(`${line}\n`);
    // Clear the prompt line (a TTY) or end it (a pipe), print, then redraw the prompt and what was typed.
    process.stdout.write(tty ? `\r\x1b[2K${line}\n` : `\n${line}\n`);
    rl.prompt(true);
  };
  const cursors = new ChatCursors(found.home);
  const saved = cursors.get(found.url, sender);
  const follower = new MailboxFollower({
    found,
    path: "/v1/console/events",
    sender,
    // What arrived since the last chat closed prints first; a first chat starts at the end.
    ...(saved !== undefined ? { after: saved } : {}),
    onCursor: (after) => cursors.set(found.url, sender, after),
    print: (reply) => background(formatBackground(reply)),
    note: (line) => background(`(${line})`),
  });
  // Held until the greeting is printed: what came while no chat was open follows it.
  follower.hold();
  await follower.start(CHECK_TIMEOUT_MS);
  // Created after every wait: lines (and the end of a piped input) that came before it would be lost.
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: tty });
  rl.setPrompt("you> ");
  // Ctrl-C ends the chat, also while an answer streams (the gateway still finishes the turn,
  // and its answer goes to the mailbox).
  const quit = new AbortController();
  rl.on("SIGINT", () => {
    quit.abort(new Error("chat ended"));
    rl.close();
  });
  process.stdout.write(
    `Connected to ${found.url} as "${sender}" — model ${status.model ?? "?"}${status.simulated ? " (SIMULATED replies: no API key configured)" : ""}.\nType a message; /help for commands, Ctrl-D to quit.\n`,
  );
  follower.release("", false);
  try {
    rl.prompt();
    atPrompt = rl;
    for await (const line of rl) {
      atPrompt = undefined;
      const text = line.trim();
      if (text.length > 0) {
        const id = randomUUID();
        follower.hold();
        let printed = false;
        try {
          printed = await sendAndStream(found, sender, text, id, quit.signal);
        } catch (err) {
          if (!quit.signal.aborted) process.stdout.write(`\n(error: ${(err as Error).message})\n`);
        } finally {
          follower.release(id, printed);
        }
      }
      if (quit.signal.aborted) break;
      rl.prompt();
      atPrompt = rl;
    }
  } finally {
    atPrompt = undefined;
    await follower.stop();
  }
  process.stdout.write("\n");
  return 0;
}

/** A background reply's line: its origin in brackets ("[cron] agent> …"). */
export function formatBackground(reply: Pick<FollowedReply, "origin" | "text">): string {
  const origin = reply.origin === "user" ? "reply" : reply.origin === "gateway" ? "notice" : reply.origin;
  return `[${origin}] agent> ${reply.text}`;
}

/**
 * Sends one message (client id `id`) and prints its streamed answer; true once the answer
 * (`done`, or the refusal) was printed, so the same replies in the mailbox are not shown again.
 */
async function sendAndStream(
  found: FoundGateway,
  sender: string,
  text: string,
  id: string,
  signal: AbortSignal,
): Promise<boolean> {
  // No time limit: the gateway's progress watchdog bounds a turn, and Ctrl-C ends the chat.
  const res = await requestGateway(found, "/v1/console", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ sender, text, id }),
    signal,
  });
  if (!res.ok || !res.body) {
    const body = await res.text();
    throw new Error(`gateway answered ${res.status}: ${body.slice(0, 200)}`);
  }
  process.stdout.write("agent> ");
  let streamed = false;
  let done = false;
  for await (const frame of readSseFrames(res.body as AsyncIterable<Uint8Array>)) {
    const payload = JSON.parse(frame.data) as {
      text?: string;
      replies?: Array<{ text: string }>;
      error?: { message: string };
    };
    if (frame.event === "delta" && payload.text) {
      streamed = true;
      process.stdout.write(payload.text);
    } else if (frame.event === "done") {
      done = true;
      if (!streamed) process.stdout.write((payload.replies ?? []).map((r) => r.text).join("\n\n"));
      else if (payload.replies?.length === 0) process.stdout.write("(no reply)");
    } else if (frame.event === "error") {
      done = true;
      process.stdout.write(`(rejected: ${payload.error?.message ?? "unknown"})`);
    }
  }
  process.stdout.write("\n");
  return done;
}

/** The account's user name, when $USER is not set. */
function accountName(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}
