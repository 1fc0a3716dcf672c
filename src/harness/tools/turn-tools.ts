/** The slice of a ToolRegistry a turn uses, so a view (plan mode, a helper's subset) can stand in for it. */
import type { ToolRegistry } from "./registry.js";

/** What a turn uses of its tools: get sources ready, offer specs, run calls, say what is withheld. */
export type TurnTools = Pick<ToolRegistry, "prepare" | "specs" | "execute" | "decisions">;
