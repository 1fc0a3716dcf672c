/**
 * `switchyard ui`: the running gateway (found through its runtime file) gets its page's address
 * with the configured token in the fragment; the page it names answers; with no gateway the
 * command says so and exits 1.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnGateway } from "../helpers/gateway-process.js";
import { closedPort, removeTempDirs, runCli, tempDir } from "./cli-process.js";

afterAll(removeTempDirs);

const TOKEN = "ui-test-token-0123456789abcdef";

describe("switchyard ui", () => {
  it("prints the page's address for the running gateway, the token in the fragment", async () => {
    const home = tempDir();
    const config = join(tempDir(), "switchyard.yaml");
    writeFileSync(config, `gateway:\n  auth:\n    token: ${TOKEN}\n`);
    const gw = await spawnGateway(["--config", config, "--home", home, "--port", "0"]);
    try {
      const r = await runCli(["ui", "--home", home]);
      expect([r.code, r.err]).toEqual([0, ""]);
      expect(r.out).toBe(`${gw.url}/ui/#token=${TOKEN}\n`);
      // The fragment is the browser's: the request for the page carries no token.
      const page = await fetch(r.out.trim());
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    } finally {
      await gw.kill("SIGTERM");
    }
  });

  it("says no gateway answers, exit 1", async () => {
    const port = await closedPort();
    const r = await runCli(["ui", "--url", `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^switchyard ui: no gateway answers at http://127.0.0.1:${port}: `));
  });
});
