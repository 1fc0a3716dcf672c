/**
 * A one-off look at MCP servers (`switchyard mcp list`, doctor): each is started, its tools
 * listed, and stopped again, all at once, each bounded by a timeout.
 */
import type { DroppedTool } from "./mcp-tools.js";
import type { McpToolSource } from "./mcp-tool-source.js";
import type { McpServerState } from "./server-connection.js";

/** How long `doctor` and `mcp list` give each server to start and list its tools. */
export const MCP_PROBE_TIMEOUT_MS = 15_000;

/** What a look at one server found. */
export interface McpServerReport {
  name: string;
  /** `running` when it started and listed its tools in time. */
  state: McpServerState;
  /** Why it is not running (`start failed: …`, `did not start within N ms`). */
  reason?: string;
  tools: Array<{ name: string; description: string }>;
  dropped: DroppedTool[];
}

/** Starts every source's server, reports it, stops it; at most `timeoutMs` per server. Never throws. */
export async function probeMcpServers(
  sources: readonly McpToolSource[],
  timeoutMs: number,
): Promise<McpServerReport[]> {
  return Promise.all(
    sources.map(async (source): Promise<McpServerReport> => {
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        await source.prepare(signal);
        const { state, reason } = source.connection;
        const late = state === "starting";
        return {
          name: source.name,
          state,
          ...(late ? { reason: `did not start within ${timeoutMs} ms` } : reason ? { reason } : {}),
          tools: source.tools().map((t) => ({ name: t.name, description: t.description })),
          dropped: [...source.dropped()],
        };
      } finally {
        await source.connection.stop();
      }
    }),
  );
}
