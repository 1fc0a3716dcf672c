/** Store contract, cluster values: set once by whoever comes first, the same for every handle. */
import { describe, expect, it } from "vitest";
import { type StoreContext, T0 } from "./fixtures.js";

/** ClusterRepo cases. */
export function clusterContract(ctx: StoreContext): void {
  describe("cluster values", () => {
    it("the first claim of a key sets it; later ones (another process too) read it back", async () => {
      const peer = await ctx.peer();
      expect(await ctx.store.cluster.claimValue("workspace", "a", T0)).toBe("a");
      expect(await peer.cluster.claimValue("workspace", "b", T0 + 1)).toBe("a");
      expect(await peer.cluster.claimValue("other", "b", T0 + 1)).toBe("b");
    });

    it("two processes claiming at once agree on one value", async () => {
      const peer = await ctx.peer();
      const [x, y] = await Promise.all([
        ctx.store.cluster.claimValue("workspace", "x", T0),
        peer.cluster.claimValue("workspace", "y", T0),
      ]);
      expect(x).toBe(y);
      expect(["x", "y"]).toContain(x);
    });
  });
}
