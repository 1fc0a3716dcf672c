/**
 * Store contract, learnings (run inside the assignments part: agents report them from their
 * assignments): recorded once per source keeping the first text, agents and lessons kept
 * apart, and the state the owner gives one.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../../src/store/types.js";
import { type StoreContext, T0 } from "./fixtures.js";

/** Learning cases: every LearningRepo method. */
export function learningsContract(ctx: StoreContext): void {
  describe("learnings", () => {
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    const lesson = (source: string, over: { agentId?: string; text?: string; norm?: string } = {}) => ({
      agentId: over.agentId ?? "main",
      norm: over.norm ?? "run tests first",
      text: over.text ?? "Run tests first.",
      scope: null,
      source,
    });

    it("records a learning once per source, keeping the first text", async () => {
      const first = await store.learnings.record(lesson("t1"), T0);
      expect(first).toEqual({
        id: first.id,
        agentId: "main",
        norm: "run tests first",
        text: "Run tests first.",
        scope: null,
        sources: ["t1"],
        state: "candidate",
        createdAt: T0,
        updatedAt: T0,
      });
      expect(await store.learnings.record(lesson("t1", { text: "run tests FIRST" }), T0 + 1)).toEqual(first);
      const second = await store.learnings.record(lesson("t2", { text: "run tests FIRST" }), T0 + 2);
      expect(second).toMatchObject({
        id: first.id,
        text: "Run tests first.",
        sources: ["t1", "t2"],
        updatedAt: T0 + 2,
      });
      expect(await store.learnings.get(first.id)).toEqual(second);
      expect(await store.learnings.list("main")).toEqual([second]);
    });

    it("keeps agents and different lessons apart, listed by id", async () => {
      const a = await store.learnings.record(lesson("t1"), T0);
      const b = await store.learnings.record(
        lesson("t1", { norm: "deploy after review", text: "Deploy after review" }),
        T0,
      );
      const c = await store.learnings.record(lesson("t1", { agentId: "ops" }), T0);
      expect(new Set([a.id, b.id, c.id]).size).toBe(3);
      expect((await store.learnings.list("main")).map((l) => l.id)).toEqual([a.id, b.id]);
      expect((await store.learnings.list("ops")).map((l) => l.id)).toEqual([c.id]);
      expect(await store.learnings.get(9_999)).toBeUndefined();
    });

    it("setState changes the state and time; false for an unknown id", async () => {
      const l = await store.learnings.record(lesson("t1"), T0);
      expect(await store.learnings.setState(l.id, "promoted", T0 + 9)).toBe(true);
      expect(await store.learnings.get(l.id)).toMatchObject({ state: "promoted", updatedAt: T0 + 9 });
      // Later reports still count their source, and keep the state.
      expect(await store.learnings.record(lesson("t2"), T0 + 10)).toMatchObject({
        state: "promoted",
        sources: ["t1", "t2"],
      });
      expect(await store.learnings.setState(l.id, "dropped", T0 + 11)).toBe(true);
      expect((await store.learnings.get(l.id))?.state).toBe("dropped");
      expect(await store.learnings.setState(9_999, "dropped", T0)).toBe(false);
    });
  });
}
