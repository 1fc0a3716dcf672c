/**
 * The benchmarks, in the order they run and print. Each is loaded only when selected, so a
 * benchmark of one area runs even while another area's modules do not load. To add rows (e.g.
 * Telegram), write a `Benchmark` in its own file and append an entry here.
 */
import type { Benchmark } from "./types.js";

/** A benchmark the runner can select by id and load on demand. */
export interface BenchmarkEntry {
  id: string;
  load(): Promise<Benchmark>;
}

/** Every benchmark `bench/run.ts` knows. */
export const benchmarks: readonly BenchmarkEntry[] = [
  { id: "lane-overhead", load: async () => (await import("./lane-overhead.js")).laneOverhead },
  { id: "chat-overhead", load: async () => (await import("./chat-overhead.js")).chatOverhead },
  { id: "chat-throughput", load: async () => (await import("./chat-throughput.js")).chatThroughput },
  {
    id: "telegram-throughput",
    load: async () => (await import("./telegram-throughput.js")).telegramThroughput,
  },
  { id: "slack-throughput", load: async () => (await import("./slack-throughput.js")).slackThroughput },
  { id: "discord-throughput", load: async () => (await import("./discord-throughput.js")).discordThroughput },
  { id: "failover", load: async () => (await import("./failover.js")).failover },
  { id: "context", load: async () => (await import("./context.js")).contextBench },
  { id: "human-wait", load: async () => (await import("./human-wait.js")).humanWait },
  { id: "cron", load: async () => (await import("./cron.js")).cronBench },
  { id: "cron-next", load: async () => (await import("./cron-next.js")).cronNext },
  { id: "assignment", load: async () => (await import("./assignment.js")).assignmentBench },
  { id: "daemon-footprint", load: async () => (await import("./daemon-footprint.js")).daemonFootprint },
  { id: "discord-footprint", load: async () => (await import("./discord-footprint.js")).discordFootprint },
  { id: "cron-idle", load: async () => (await import("./cron-idle.js")).cronIdle },
  { id: "npm-start", load: async () => (await import("./npm-start.js")).npmStart },
  { id: "mcp-round-trip", load: async () => (await import("./mcp-round-trip.js")).mcpRoundTrip },
  { id: "restart-answer", load: async () => (await import("./restart-answer.js")).restartAnswer },
  { id: "tool-guards", load: async () => (await import("./tool-guards.js")).toolGuards },
  { id: "web-fetch", load: async () => (await import("./web-fetch.js")).webFetchBench },
  { id: "jit", load: async () => (await import("./jit.js")).jitBench },
  { id: "hooks", load: async () => (await import("./hooks.js")).hooksBench },
  { id: "parallel-tools", load: async () => (await import("./parallel-tools.js")).parallelTools },
  { id: "subagent-fanout", load: async () => (await import("./subagent-fanout.js")).subagentFanout },
  { id: "pg-store", load: async () => (await import("./pg-store.js")).pgStore },
  { id: "cluster-permits", load: async () => (await import("./cluster-permits.js")).clusterPermitsBench },
  { id: "pg-nodes", load: async () => (await import("./pg-nodes.js")).pgNodes },
  { id: "pg-takeover", load: async () => (await import("./pg-nodes.js")).pgTakeover },
  { id: "ui-first-load", load: async () => (await import("./control-page.js")).uiFirstLoad },
  { id: "admin-stream", load: async () => (await import("./control-page.js")).adminStream },
  { id: "admin-sessions", load: async () => (await import("./control-page.js")).adminSessions },
];
