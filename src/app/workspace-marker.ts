/**
 * The shared workspace check of a cluster (`store.engine: postgres`): every node must see the
 * same workspace folder (memory, notes, skills), or their agents drift apart unseen. The first
 * node to start records an id in the database (ClusterRepo, key "workspace") and writes it to
 * `<workspace>/.switchyard-workspace`; every node starting later reads that file and compares.
 * A folder without the file, or with another id, is not the shared one: the node refuses to
 * start, naming the folder and both ids.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../harness/memory/atomic-write.js";
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";

/** The marker's file name in the workspace. */
export const WORKSPACE_MARKER = ".switchyard-workspace";

/** How long a node that lost the race for the first id waits for the winner's file. */
const WINNER_WAIT_MS = 3_000;

/** The workspace is not the one the other nodes use. */
export class WorkspaceMismatchError extends Error {
  readonly code = "workspace_mismatch";
  constructor(message: string) {
    super(message);
    this.name = "WorkspaceMismatchError";
  }
}

/** The id in `<workspace>/.switchyard-workspace`, or undefined when there is none. */
async function readMarker(workspaceDir: string): Promise<string | undefined> {
  try {
    const parsed = JSON.parse(await readFile(join(workspaceDir, WORKSPACE_MARKER), "utf8")) as {
      id?: unknown;
    };
    return typeof parsed.id === "string" && parsed.id !== "" ? parsed.id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks (and on the cluster's first start, sets) the workspace's id against the database's.
 * Resolves the id; throws WorkspaceMismatchError when this folder is not the shared one.
 */
export async function checkWorkspaceMarker(
  store: Pick<Store, "cluster">,
  workspaceDir: string,
  clock: Pick<Clock, "now" | "sleep">,
): Promise<string> {
  const found = await readMarker(workspaceDir);
  const candidate = found ?? randomUUID();
  const recorded = await store.cluster.claimValue("workspace", candidate, clock.now());
  if (recorded === found) return recorded;
  if (found === undefined) {
    if (recorded === candidate) {
      // The cluster's first start: this folder is the workspace from now on.
      await writeFileAtomic(join(workspaceDir, WORKSPACE_MARKER), `${JSON.stringify({ id: recorded })}\n`);
      return recorded;
    }
    // Another node recorded its id first: in a truly shared folder its file appears shortly.
    for (let waited = 0; waited < WINNER_WAIT_MS; waited += 100) {
      if ((await readMarker(workspaceDir)) === recorded) return recorded;
      await clock.sleep(100);
    }
  }
  throw new WorkspaceMismatchError(
    `the workspace ${workspaceDir} is not the one the other nodes use: ${
      found === undefined ? `it has no ${WORKSPACE_MARKER}` : `its ${WORKSPACE_MARKER} says ${found}`
    }, the database records ${recorded}. Point agent.workspace at the shared folder (the one whose ${WORKSPACE_MARKER} holds ${recorded})`,
  );
}
