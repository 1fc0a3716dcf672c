/**
 * Store contract, sub-agents: spawning within the limits (counted in the same step), a child's
 * run starting and redone, its end written with its last commit, and results claimed for the
 * parent's run with their transcript events in one fenced step — claimed again, never appended
 * twice, when the claiming run did not commit.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { SubagentSpawn } from "../../../src/store/repos/subagent-repo.js";
import type { Store } from "../../../src/store/types.js";
import { type StoreContext, T0, commitLeased, runRecord, seedLease, turn } from "./fixtures.js";

const limits = { maxActive: 2, maxPerRun: 3 };
const PARENT = "agent:main:telegram:dm:42";

function spawn(id: string, over: Partial<SubagentSpawn> = {}): SubagentSpawn {
  return {
    id,
    parentSessionKey: PARENT,
    parentRunId: "run-p1",
    childKeyPrefix: "agent:main:sub:",
    depth: 1,
    label: id,
    task: `task of ${id}`,
    context: "",
    tools: ["read_file"],
    model: null,
    origin: { target: null, privateChat: true, groupChat: false },
    ...over,
  };
}

/** Sub-agent cases: every SubagentRepo method and CommitTurn.subagent. */
export function subagentsContract(ctx: StoreContext): void {
  describe("subagents", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    it("spawns numbered children within the active and per-run limits", async () => {
      const a = await store.subagents.spawn(spawn("sub_a"), limits, T0);
      expect(a).toMatchObject({
        status: "spawned",
        child: {
          id: "sub_a",
          state: "queued",
          childSessionKey: `agent:main:sub:${PARENT}:1`,
          tools: ["read_file"],
        },
      });
      await store.subagents.spawn(spawn("sub_b"), limits, T0);
      expect(await store.subagents.spawn(spawn("sub_c"), limits, T0)).toEqual({
        status: "too_many_active",
        active: 2,
        limit: 2,
      });
      await store.subagents.cancel("sub_a", "stopped", T0 + 1);
      expect(await store.subagents.spawn(spawn("sub_c"), limits, T0 + 2)).toMatchObject({
        status: "spawned",
        child: { childSessionKey: `agent:main:sub:${PARENT}:3` },
      });
      await store.subagents.cancel("sub_b", "stopped", T0 + 3);
      // Three spawned by run-p1 already: the per-run limit, whatever is active.
      expect(await store.subagents.spawn(spawn("sub_d"), limits, T0 + 4)).toEqual({
        status: "too_many_in_run",
        spawned: 3,
        limit: 3,
      });
      expect(
        await store.subagents.spawn(spawn("sub_d", { parentRunId: "run-p2" }), limits, T0 + 4),
      ).toMatchObject({
        status: "spawned",
      });
      expect((await store.subagents.listForParent(PARENT)).map((c) => c.id)).toEqual([
        "sub_a",
        "sub_b",
        "sub_c",
        "sub_d",
      ]);
      expect((await store.subagents.listActive()).map((c) => c.id)).toEqual(["sub_c", "sub_d"]);
      expect((await store.subagents.byChildSession(`agent:main:sub:${PARENT}:3`))?.id).toBe("sub_c");
    });

    it("starts a run (a redo sees it was running), ends it with the child's commit, refuses a stale run", async () => {
      const spawned = await store.subagents.spawn(spawn("sub_a"), limits, T0);
      if (spawned.status !== "spawned") throw new Error("not spawned");
      const child = spawned.child.childSessionKey;
      expect((await store.subagents.start("sub_a", "run-c1", T0 + 1))?.state).toBe("queued");
      expect((await store.subagents.start("sub_a", "run-c2", T0 + 2))?.state).toBe("running");
      // The first run's commit no longer owns the row: the child's state stays.
      await commitLeased(
        store,
        turn("run-c1", [], {
          sessionKey: child,
          outbox: [],
          run: runRecord("run-c1", { sessionKey: child }),
          subagent: { id: "sub_a", state: "done", result: "stale" },
        }),
        T0 + 3,
      );
      expect(await store.subagents.get("sub_a")).toMatchObject({ state: "running", result: null });
      await commitLeased(
        store,
        turn("run-c2", [], {
          sessionKey: child,
          outbox: [],
          run: runRecord("run-c2", { sessionKey: child }),
          subagent: { id: "sub_a", state: "done", result: "42 files", resultPath: ".agent-output/x.txt" },
        }),
        T0 + 4,
      );
      expect(await store.subagents.get("sub_a")).toMatchObject({
        state: "done",
        result: "42 files",
        resultPath: ".agent-output/x.txt",
        endedAt: T0 + 4,
      });
      expect(await store.subagents.start("sub_a", "run-c3", T0 + 5)).toBeUndefined();
      expect(await store.subagents.cancel("sub_a", "late", T0 + 5)).toBe(false);
      expect(await store.subagents.parentsWithResults()).toEqual([PARENT]);
    });

    it("claims results for the parent's run with one transcript event each; a run that did not commit is taken over", async () => {
      for (const id of ["sub_a", "sub_b"]) {
        await store.subagents.spawn(spawn(id), limits, T0);
        await store.subagents.start(id, `run-${id}`, T0);
      }
      await store.subagents.cancel("sub_b", "stopped by /stop", T0 + 1);
      const text = (c: { id: string; result: string | null }) => `[${c.id}] ${c.result ?? ""}`;
      const lease = await seedLease(store, PARENT, T0);
      const first = await store.subagents.claimResults(PARENT, "ses-p", "run-w1", lease, text, T0 + 2);
      expect(first.map((c) => [c.id, c.deliveredRunId])).toEqual([["sub_b", "run-w1"]]);
      // run-w1 never commits: the next run takes the claim over without a second event.
      const second = await store.subagents.claimResults(PARENT, "ses-p", "run-w2", lease, text, T0 + 3);
      expect(second.map((c) => [c.id, c.deliveredRunId])).toEqual([["sub_b", "run-w2"]]);
      const events = await store.transcript.tail(PARENT, "ses-p", 50);
      expect(events.map((e) => e.payload)).toEqual([
        { type: "trigger", origin: "subagent", text: "[sub_b] " },
      ]);
      await commitLeased(
        store,
        turn("run-w2", [], { sessionKey: PARENT, sessionId: "ses-p", outbox: [] }),
        T0 + 4,
      );
      // Committed: nothing to claim any more; the next result is claimed on its own.
      expect(await store.subagents.claimResults(PARENT, "ses-p", "run-w3", lease, text, T0 + 5)).toEqual([]);
      expect(await store.subagents.parentsWithResults()).toEqual([]);
      // A stale lease claims nothing.
      await store.subagents.cancel("sub_a", "x", T0 + 6);
      const stale = { ...lease, fence: lease.fence - 1 };
      expect(await store.subagents.claimResults(PARENT, "ses-p", "run-w4", stale, text, T0 + 7)).toEqual([]);
      expect(await store.subagents.parentsWithResults()).toEqual([PARENT]);
    });

    it("returns the spawned row as stored; startFrom moves a row it read, or falls back when it changed", async () => {
      const spawned = await store.subagents.spawn(spawn("sub_a"), limits, T0);
      if (spawned.status !== "spawned") throw new Error("not spawned");
      expect(spawned.child).toEqual(await store.subagents.get("sub_a"));
      const seen = spawned.child;
      expect((await store.subagents.startFrom(seen, "run-c1", T0 + 1))?.state).toBe("queued");
      expect(await store.subagents.get("sub_a")).toMatchObject({ state: "running", runId: "run-c1" });
      // `seen` is stale now (run-c1 started it): the fallback reads the row, a redo.
      expect((await store.subagents.startFrom(seen, "run-c2", T0 + 2))?.state).toBe("running");
      expect((await store.subagents.get("sub_a"))?.runId).toBe("run-c2");
      await store.subagents.cancel("sub_a", "stopped", T0 + 3);
      const running = { ...seen, state: "running" as const, runId: "run-c2" };
      expect(await store.subagents.startFrom(running, "run-c3", T0 + 4)).toBeUndefined();
      expect(await store.subagents.get("sub_a")).toMatchObject({ state: "cancelled", runId: "run-c2" });
    });

    it("endCheck: nothing while a child runs; a batch ends with the spawning run's last child; a wait with the last awaited one", async () => {
      for (const id of ["sub_a", "sub_b"]) await store.subagents.spawn(spawn(id), limits, T0);
      await store.subagents.spawn(spawn("sub_c", { parentRunId: "run-p2" }), { ...limits, maxActive: 3 }, T0);
      const key = async (id: string) => (await store.subagents.get(id))?.childSessionKey ?? "";
      expect(await store.subagents.endCheck(await key("sub_a"))).toBeUndefined();
      expect(await store.subagents.endCheck("agent:main:sub:nobody:1")).toBeUndefined();
      await store.subagents.await(PARENT, ["sub_a", "sub_c"], T0 + 60_000, T0);
      await store.subagents.cancel("sub_a", "x", T0 + 1);
      // sub_b (same run) still runs, sub_c (awaited) too.
      expect(await store.subagents.endCheck(await key("sub_a"))).toEqual({
        parentSessionKey: PARENT,
        batchDone: false,
        waitDone: false,
        openChildren: 0,
      });
      await store.subagents.cancel("sub_c", "x", T0 + 2);
      // sub_c's own batch (run-p2) is done, and every awaited child ended.
      expect(await store.subagents.endCheck(await key("sub_c"))).toEqual({
        parentSessionKey: PARENT,
        batchDone: true,
        waitDone: true,
        openChildren: 0,
      });
      await store.subagents.cancel("sub_b", "x", T0 + 3);
      // sub_b was not awaited: its end closes run-p1's batch only.
      expect(await store.subagents.endCheck(await key("sub_b"))).toEqual({
        parentSessionKey: PARENT,
        batchDone: true,
        waitDone: false,
        openChildren: 0,
      });
    });

    it("spawns at once from one run (parallel tool calls) get distinct numbers, within the limits", async () => {
      const wide = { maxActive: 20, maxPerRun: 5 };
      const outcomes = await Promise.all(
        ["a", "b", "c", "d", "e", "f", "g"].map((x) => store.subagents.spawn(spawn(`sub_${x}`), wide, T0)),
      );
      expect(outcomes.filter((o) => o.status === "spawned")).toHaveLength(5);
      expect(outcomes.filter((o) => o.status === "too_many_in_run")).toHaveLength(2);
      const keys = (await store.subagents.listForParent(PARENT)).map((c) => c.childSessionKey);
      expect(keys).toEqual([1, 2, 3, 4, 5].map((n) => `agent:main:sub:${PARENT}:${n}`));
    });

    it("records a wait deadline for the named children of the parent only", async () => {
      await store.subagents.spawn(spawn("sub_a"), limits, T0);
      await store.subagents.spawn(spawn("sub_x", { parentSessionKey: "other" }), limits, T0);
      await store.subagents.await(PARENT, ["sub_a", "sub_x"], T0 + 60_000, T0);
      expect((await store.subagents.get("sub_a"))?.waitDeadline).toBe(T0 + 60_000);
      expect((await store.subagents.get("sub_x"))?.waitDeadline).toBeNull();
    });
  });
}
