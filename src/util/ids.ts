import { randomBytes } from "node:crypto";

/** Random per process: ids made by two processes in the same millisecond still differ. */
const PROCESS_TAG = randomBytes(4).toString("hex");
let counter = 0;

/**
 * A short, sortable, unique id: `<prefix>_<time base36><process tag><counter base36>`. Unique
 * within a process by the counter and across processes by the random tag, without a random
 * draw per id (this is on every turn's path).
 */
export function newId(prefix: string): string {
  counter = (counter + 1) % 1_679_616; // 36^4: four base36 digits
  return `${prefix}_${Date.now().toString(36)}${PROCESS_TAG}${counter.toString(36).padStart(4, "0")}`;
}
