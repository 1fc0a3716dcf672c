/**
 * The model-call baseline of bench/assignment.ts, run as its own process (`node --import tsx`):
 * reads an Anthropic Messages request body (as the gateway sent it) on stdin, turns it back into
 * a ModelRequest and streams it `warmup + calls` times, one after another, through the gateway's
 * own AnthropicProvider (the SDK over the gateway's node:http transport) to the simulator at
 * argv[2], consuming every event. Prints one JSON line: the CPU (user + system, all threads of
 * this process) per call of the last `calls` calls, and of their second half alone.
 *
 * Usage: model-call-child.ts <simulatorUrl> <apiKey> <warmup> <calls>
 */
import { AnthropicProvider } from "../src/harness/providers/anthropic.js";
import type { ModelRequest, ToolSpec } from "../src/harness/providers/types.js";

interface WireBody {
  model: string;
  max_tokens: number;
  system?: Array<{ text: string }>;
  tools?: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
  messages: Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>;
}

/** The ModelRequest the provider turns back into `body` (one user message: a run's handoff). */
function toModelRequest(body: WireBody): ModelRequest {
  const tools: ToolSpec[] = (body.tools ?? []).map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.input_schema,
  }));
  const messages = body.messages.map((m) => {
    if (m.role !== "user") throw new Error(`expected only user messages, got ${m.role}`);
    const content = typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("\n");
    return { role: "user" as const, content };
  });
  return {
    model: body.model,
    system: body.system?.map((s) => s.text).join("\n") ?? "",
    messages,
    tools,
    maxTokens: body.max_tokens,
  };
}

async function main(): Promise<void> {
  const [url, apiKey, warmupArg, callsArg] = process.argv.slice(2);
  if (!url || !apiKey) throw new Error("usage: model-call-child.ts <simulatorUrl> <apiKey> <warmup> <calls>");
  const warmup = Number(warmupArg);
  const calls = Number(callsArg);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const request = toModelRequest(JSON.parse(Buffer.concat(chunks).toString("utf8")) as WireBody);
  const provider = new AnthropicProvider({ apiKey, baseUrl: url });
  const once = async (): Promise<void> => {
    let stopped = false;
    for await (const event of provider.stream(request, new AbortController().signal)) {
      if (event.type === "error") throw new Error(`model call failed: ${event.error.message}`);
      if (event.type === "stop") stopped = true;
    }
    if (!stopped) throw new Error("the stream ended without a stop event");
  };
  for (let i = 0; i < warmup; i++) await once();
  const half = Math.floor(calls / 2);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < half; i++) await once();
  const cpuHalf = process.cpuUsage();
  for (let i = half; i < calls; i++) await once();
  const all = process.cpuUsage(cpu0);
  const second = process.cpuUsage(cpuHalf);
  const ms = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
  process.stdout.write(
    `${JSON.stringify({ cpuMsPerCall: ms(all) / calls, secondHalfMsPerCall: ms(second) / (calls - half), calls })}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(
      `model-call-child: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
