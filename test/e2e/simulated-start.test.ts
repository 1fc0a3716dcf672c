/**
 * The README's first command on a fresh machine: no config file, no API key. The gateway must
 * start, answer on the built-in simulator, and say clearly that replies are simulated.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnGateway } from "../helpers/gateway-process.js";
import { postChat } from "../helpers/test-gateway.js";

describe("start with no API key", () => {
  const home = mkdtempSync(join(tmpdir(), "sy-sim-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it("answers on the simulator and says so at start-up, in status and in /status", async () => {
    const gw = await spawnGateway(["--home", home, "--port", "0"]);
    try {
      expect(gw.output()).toMatch(/replies are SIMULATED: no model API key is configured/);
      const r = await postChat(gw.url, "ann", "hi");
      expect(r.status).toBe(200);
      expect(r.body.replies?.[0]?.text).toBe(
        'Simulated reply (no model API key is configured): you said "hi".',
      );
      const status = (await (await fetch(`${gw.url}/v1/status`)).json()) as {
        simulated: boolean;
        model: string;
      };
      expect(status.simulated).toBe(true);
      const slash = await postChat(gw.url, "ann", "/status");
      expect(slash.body.replies?.[0]?.text).toContain("SIMULATED replies");
    } finally {
      expect(await gw.kill("SIGTERM")).toBe(0);
    }
  });
});
