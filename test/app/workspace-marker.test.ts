/**
 * The shared workspace check (app/workspace-marker.ts) on a real store: the first node records
 * the id and writes the marker; a node whose folder has the same marker starts; a folder without
 * it, or with another id, is refused naming the folder and both ids; a node that lost the race
 * for the first id waits for the winner's marker in a shared folder. The clock is a stub that
 * never waits (the check's only use of it is its short wait).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  WORKSPACE_MARKER,
  WorkspaceMismatchError,
  checkWorkspaceMarker,
} from "../../src/app/workspace-marker.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../src/store/types.js";

let store: Store;
const dirs: string[] = [];
const folder = () => {
  const d = mkdtempSync(join(tmpdir(), "sy-ws-"));
  dirs.push(d);
  return d;
};
const noWait = { now: () => 1, sleep: async () => {} };

beforeEach(() => {
  store = openSqliteStore({ path: ":memory:" });
});
afterEach(async () => {
  await store.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("the shared workspace check", () => {
  it("the first node records an id and writes it into the folder; the folder passes again", async () => {
    const shared = folder();
    const id = await checkWorkspaceMarker(store, shared, noWait);
    expect(JSON.parse(readFileSync(join(shared, WORKSPACE_MARKER), "utf8"))).toEqual({ id });
    expect(await checkWorkspaceMarker(store, shared, noWait)).toBe(id);
  });

  it("refuses a folder without the marker and one with another id, naming the folder and both ids", async () => {
    const id = await checkWorkspaceMarker(store, folder(), noWait);
    const local = folder();
    const missing = checkWorkspaceMarker(store, local, noWait);
    await expect(missing).rejects.toThrow(WorkspaceMismatchError);
    await expect(missing).rejects.toThrow(
      `the workspace ${local} is not the one the other nodes use: it has no ${WORKSPACE_MARKER}, the database records ${id}`,
    );
    const other = folder();
    writeFileSync(join(other, WORKSPACE_MARKER), JSON.stringify({ id: "some-other-id" }));
    await expect(checkWorkspaceMarker(store, other, noWait)).rejects.toThrow(
      `its ${WORKSPACE_MARKER} says some-other-id, the database records ${id}`,
    );
  });

  it("a node that lost the race for the first id waits for the winner's marker in the shared folder", async () => {
    const shared = folder();
    await store.cluster.claimValue("workspace", "winner-id", 0);
    let slept = 0;
    const clock = {
      now: () => 1,
      sleep: async () => {
        // The winner writes its marker while this node waits.
        if (++slept === 3) writeFileSync(join(shared, WORKSPACE_MARKER), JSON.stringify({ id: "winner-id" }));
      },
    };
    expect(await checkWorkspaceMarker(store, shared, clock)).toBe("winner-id");
    expect(slept).toBe(3);
  });
});
