import { randomBytes } from "node:crypto";

/** A short, sortable, unique id: `<prefix>_<time base36><random hex>`. */
export function newId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${randomBytes(5).toString("hex")}`;
}
