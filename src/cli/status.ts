/**
 * `switchyard status`: what the running gateway is doing — readiness, model (and whether it is
 * simulated), queues, runs, and replies that could not be delivered. If no gateway answers,
 * the database in the home folder is read directly.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../config/load.js";
import { chooseProvider, resolveHome } from "../main.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import { gatewayUrl } from "./gateway-url.js";
import type { CliOptions } from "./main.js";

interface StatusBody {
  ready: boolean;
  uptimeMs: number;
  model: string;
  simulated: boolean;
  lanes: {
    running: number;
    lanes: number;
    slotsInUse: number;
    maxConcurrent: number;
    pending: Record<string, number>;
  };
  inbox: Record<string, number>;
  outbox: Record<string, number>;
  runs: Record<string, number>;
  sessions: number;
  deadReplies: Array<{
    id: number;
    channel: string;
    chatId: string;
    attempts: number;
    error: string | null;
    text: string;
  }>;
}

export async function runStatus(options: CliOptions): Promise<number> {
  const url = gatewayUrl(options);
  let body: StatusBody | undefined;
  try {
    const res = await fetch(`${url}/v1/status`, { signal: AbortSignal.timeout(3_000) });
    body = (await res.json()) as StatusBody;
  } catch {
    return offlineStatus(options, url);
  }
  if (options.json) {
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  const b = body;
  const lines = [
    `gateway   ${url} — ${b.ready ? "ready" : "NOT ready"}, up ${Math.round(b.uptimeMs / 1000)} s`,
    `model     ${b.model}${b.simulated ? "  ** SIMULATED replies: no API key configured **" : ""}`,
    `lanes     ${b.lanes.running} running, waiting: ${b.lanes.pending.human ?? 0} human / ${b.lanes.pending.normal ?? 0} normal / ${b.lanes.pending.background ?? 0} background; model slots ${b.lanes.slotsInUse}/${b.lanes.maxConcurrent}`,
    `inbox     ${fmt(b.inbox)}`,
    `outbox    ${fmt(b.outbox)}`,
    `runs      ${fmt(b.runs)}; ${b.sessions} sessions`,
  ];
  if (b.deadReplies.length > 0) {
    lines.push("undelivered replies (dead):");
    for (const d of b.deadReplies) {
      lines.push(
        `  #${d.id} ${d.channel}:${d.chatId} after ${d.attempts} attempts — ${d.error ?? "?"} — "${d.text}"`,
      );
    }
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

async function offlineStatus(options: CliOptions, url: string): Promise<number> {
  const home = resolveHome(options.home, process.env, process.cwd());
  const dbPath = join(home, "switchyard.db");
  process.stdout.write(`no gateway answers at ${url}\n`);
  if (!existsSync(dbPath)) {
    process.stdout.write(`no database at ${dbPath} either: the gateway has not run with this home folder\n`);
    return 1;
  }
  const store = openSqliteStore({ path: dbPath, readonly: true });
  try {
    const [inbox, outbox, dead] = await Promise.all([
      store.inbox.countByState(),
      store.outbox.countByState(),
      store.outbox.listByState("dead", 20),
    ]);
    process.stdout.write(
      `database ${dbPath} (gateway stopped)\n${offlineModelLine(options)}\ninbox     ${fmt(inbox)}\noutbox    ${fmt(outbox)}\n`,
    );
    if (dead.length > 0) process.stdout.write("undelivered replies (dead):\n");
    for (const d of dead) {
      process.stdout.write(
        `  #${d.id} ${d.target.channel}:${d.target.chatId} after ${d.attempts} attempts — ${d.lastError ?? "?"} — "${d.text.slice(0, 80)}"\n`,
      );
    }
  } finally {
    await store.close();
  }
  return 1;
}

/** The model a gateway started now would use, and whether its replies would be simulated. */
function offlineModelLine(options: CliOptions): string {
  try {
    const { config } = loadConfig({
      ...(options.config ? { path: options.config } : {}),
      cwd: process.cwd(),
      env: process.env,
    });
    const choice = chooseProvider(config, process.env);
    return `model     ${config.agent.model}${choice.simulated ? "  ** replies would be SIMULATED: no API key configured **" : ""}`;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return `model     unknown: ${err.message} (see switchyard doctor)`;
  }
}

function fmt(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
}
