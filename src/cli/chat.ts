/**
 * `switchyard chat`: an interactive terminal chat with the running gateway, over the console
 * channel (`POST /v1/console`, streamed). Replies print as they are generated. The gateway is
 * found like `status` finds it, and the configured token goes along.
 */
import { userInfo } from "node:os";
import { createInterface } from "node:readline/promises";
import { normalizeSender, senderProblem } from "../channels/http/sender.js";
import { type FoundGateway, findGateway } from "./find-gateway.js";
import { GatewayRequestError, requestGateway } from "./gateway-client.js";
import type { CliOptions } from "./main.js";

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
  process.stdout.write(
    `Connected to ${found.url} as "${sender}" — model ${status.model ?? "?"}${status.simulated ? " (SIMULATED replies: no API key configured)" : ""}.\nType a message; /help for commands, Ctrl-D to quit.\n`,
  );
  const rl = createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal: process.stdin.isTTY === true,
  });
  rl.setPrompt("you> ");
  rl.prompt();
  for await (const line of rl) {
    const text = line.trim();
    if (text.length > 0) {
      try {
        await sendAndStream(found, sender, text);
      } catch (err) {
        process.stdout.write(`\n(error: ${(err as Error).message})\n`);
      }
    }
    rl.prompt();
  }
  process.stdout.write("\n");
  return 0;
}

async function sendAndStream(found: FoundGateway, sender: string, text: string): Promise<void> {
  // No time limit: the gateway's progress watchdog bounds a turn, and Ctrl-C ends the chat.
  const res = await requestGateway(found, "/v1/console", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ sender, text }),
  });
  if (!res.ok || !res.body) {
    const body = await res.text();
    throw new Error(`gateway answered ${res.status}: ${body.slice(0, 200)}`);
  }
  process.stdout.write("agent> ");
  let streamed = false;
  let buffer = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (!event || !data) continue;
      const payload = JSON.parse(data) as {
        text?: string;
        replies?: Array<{ text: string }>;
        error?: { message: string };
      };
      if (event === "delta" && payload.text) {
        streamed = true;
        process.stdout.write(payload.text);
      } else if (event === "done") {
        if (!streamed) process.stdout.write((payload.replies ?? []).map((r) => r.text).join("\n\n"));
        else if (payload.replies?.length === 0) process.stdout.write("(no reply)");
      } else if (event === "error") {
        process.stdout.write(`(rejected: ${payload.error?.message ?? "unknown"})`);
      }
    }
  }
  process.stdout.write("\n");
}

/** The account's user name, when $USER is not set. */
function accountName(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}
