/**
 * `switchyard chat`: an interactive terminal chat with the running gateway, over the console
 * channel (`POST /v1/console`, streamed). Replies print as they are generated.
 */
import { userInfo } from "node:os";
import { createInterface } from "node:readline/promises";
import { gatewayUrl } from "./gateway-url.js";
import type { CliOptions } from "./main.js";

export async function runChat(options: CliOptions): Promise<number> {
  const url = gatewayUrl(options);
  const sender = (options.sender ?? process.env.USER ?? safeUser()).replace(/[^\w.@+-]/g, "_") || "console";
  try {
    const health = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3_000) });
    const body = (await health.json()) as { ready?: boolean };
    if (!body.ready)
      process.stderr.write("note: the gateway is still starting; messages will wait until it is ready\n");
  } catch {
    process.stderr.write(
      `switchyard chat: no gateway answers at ${url}; start one with \`npm start\` (or switchyard gateway)\n`,
    );
    return 1;
  }
  const status = (await (await fetch(`${url}/v1/status`)).json()) as { model?: string; simulated?: boolean };
  process.stdout.write(
    `Connected to ${url} as "${sender}" — model ${status.model ?? "?"}${status.simulated ? " (SIMULATED replies: no API key configured)" : ""}.\nType a message; /help for commands, Ctrl-D to quit.\n`,
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
        await sendAndStream(url, sender, text);
      } catch (err) {
        process.stdout.write(`\n(error: ${(err as Error).message})\n`);
      }
    }
    rl.prompt();
  }
  process.stdout.write("\n");
  return 0;
}

async function sendAndStream(url: string, sender: string, text: string): Promise<void> {
  const res = await fetch(`${url}/v1/console`, {
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

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return "console";
  }
}
