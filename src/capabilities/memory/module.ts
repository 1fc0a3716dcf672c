/**
 * The memory capability: the memory index over MEMORY.md and memory/ (a SQLite file in the
 * gateway's home), the memory tools (memory_search, memory_get, memory_write), the `skill` tool,
 * and the recall lines a turn's prompt may carry (`agent.memoryRecall`).
 */
import path from "node:path";
import { MEMORY_INDEX_FILE, MemoryIndex } from "../../harness/memory/memory-index.js";
import { memoryTools } from "../../harness/memory/memory-tools.js";
import { skillTool } from "../../harness/memory/skills.js";
import type { Tool } from "../../harness/tools/types.js";
import { lazyTimeZone } from "../../util/time-zone.js";
import type { Capability, CapabilityModule } from "../types.js";

/** The built memory: its tools, the one that writes (compaction's flush uses it), and recall. */
export interface MemoryCapability extends Capability {
  readonly tools: readonly Tool[];
  /** `memory_write`: what compaction's memory flush may call before it summarizes. */
  readonly writeTool: Tool;
  /** Up to three memory lines for a query; the memory files are re-scanned at most every 10 s. */
  recall(query: string): Promise<string>;
}

/** The memory module. */
export const memoryModule: CapabilityModule<MemoryCapability> = {
  name: "memory",
  create({ config, workspaceDir, home, clock, logger }): MemoryCapability {
    const index = new MemoryIndex({
      workspaceDir,
      dbPath: path.join(home, MEMORY_INDEX_FILE),
      logger: logger.child({ name: "memory" }),
    });
    const tools = memoryTools(index, { clock, timeZone: lazyTimeZone(config.agent.timezone) });
    const writeTool = tools.find((t) => t.name === "memory_write");
    if (!writeTool) throw new Error("memoryTools offers no memory_write");
    return {
      tools: [...tools, skillTool(workspaceDir)],
      writeTool,
      recall: async (query) =>
        (await index.search(query, { limit: 3, maxStalenessMs: 10_000 }))
          .map((h) => `- ${h.path}:${h.startLine}-${h.endLine}: ${h.snippet}`)
          .join("\n"),
      stop: () => index.close(),
    };
  },
};
