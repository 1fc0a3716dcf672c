/**
 * `sessions list` as a tree: a helper's session (a sub-agent, `agent:<id>:sub:…`) right under
 * its parent's, indented, named by its label and state from the subagents table.
 */
import type { SessionSummary } from "../store/repos/session-repo.js";
import type { Subagent } from "../store/repos/subagent-repo.js";
import type { Store } from "../store/types.js";

/** A child session's key: `agent:<agentId>:sub:<parent key>:<n>`. */
const CHILD_KEY = /^agent:[^:]+:sub:/;

/** One row of the tree: a session, how deep it sits under the rows above, and its helper row. */
export interface SessionTreeRow {
  session: SessionSummary;
  /** 0 for a session shown at the top level. */
  depth: number;
  /** Its row in the subagents table, when it is a helper's session. */
  helper?: Subagent;
}

/** The helper rows of the child sessions among `sessions`, by session key. */
export async function helpersOf(
  store: Store,
  sessions: readonly SessionSummary[],
): Promise<Map<string, Subagent>> {
  const found = new Map<string, Subagent>();
  for (const s of sessions) {
    if (!CHILD_KEY.test(s.sessionKey)) continue;
    const row = await store.subagents.byChildSession(s.sessionKey);
    if (row) found.set(s.sessionKey, row);
  }
  return found;
}

/**
 * `sessions` in their order, each helper's session moved right under its parent's (children
 * in the order they were spawned); a helper whose parent is not in the list stays where it was.
 */
export function sessionTree(
  sessions: readonly SessionSummary[],
  helpers: ReadonlyMap<string, Subagent>,
): SessionTreeRow[] {
  const listed = new Set(sessions.map((s) => s.sessionKey));
  const children = new Map<string, SessionSummary[]>();
  for (const s of sessions) {
    const parent = helpers.get(s.sessionKey)?.parentSessionKey;
    if (parent === undefined || !listed.has(parent) || parent === s.sessionKey) continue;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  for (const list of children.values())
    list.sort(
      (a, b) => (helpers.get(a.sessionKey)?.createdAt ?? 0) - (helpers.get(b.sessionKey)?.createdAt ?? 0),
    );
  const nested = new Set([...children.values()].flat().map((s) => s.sessionKey));
  const rows: SessionTreeRow[] = [];
  const seen = new Set<string>();
  const add = (s: SessionSummary, depth: number) => {
    if (seen.has(s.sessionKey)) return; // a cycle in broken data: each session once
    seen.add(s.sessionKey);
    const helper = helpers.get(s.sessionKey);
    rows.push({ session: s, depth, ...(helper ? { helper } : {}) });
    for (const c of children.get(s.sessionKey) ?? []) add(c, depth + 1);
  };
  for (const s of sessions) if (!nested.has(s.sessionKey)) add(s, 0);
  for (const s of sessions) add(s, 0); // anything a cycle left out
  return rows;
}

/** The KEY cell of a row: the key, or for a helper `└ <label> (<state>) <key>`, indented by depth. */
export function treeKeyCell(row: SessionTreeRow): string {
  if (!row.helper) return row.session.sessionKey;
  const indent = "  ".repeat(Math.max(0, row.depth - 1));
  const mark = row.depth > 0 ? `${indent}└ ` : "";
  return `${mark}${row.helper.label} (${row.helper.state}) ${row.session.sessionKey}`;
}
