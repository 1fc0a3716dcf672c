/** The usage contract: token totals per day, provider and model. */
import type { TokenUsage } from "../../harness/providers/types.js";

/** Token usage of one UTC day (`YYYY-MM-DD`), provider and model, added up over its runs. */
export interface UsageDay {
  day: string;
  provider: string;
  model: string;
  usage: TokenUsage;
  runs: number;
}

/** Token usage totals (commitTurn adds each run to them). */
export interface UsageRepo {
  /** Totals per day, provider and model, newest day first. */
  byDay(limit: number): Promise<UsageDay[]>;
}
