/**
 * With no API key the built-in simulator answers: its calls are recorded as provider
 * `simulator` (model `simulator/<the configured model>`), cost nothing, and touch neither an auth
 * profile nor the spend caps — usage rows, `/metrics`, `/status`, `auth status` all say so.
 */
import { afterEach, describe, expect, it } from "vitest";
import { profileStatuses } from "../../src/cli/auth.js";
import { parseConfig } from "../../src/config/load.js";
import { resolveProviders } from "../../src/config/provider-choice.js";
import { type TestGateway, startTestGateway } from "../helpers/test-gateway.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const raw = { agent: { model: "anthropic/claude-sonnet-5-5" }, limits: { dailySpendUsd: 0.01 } };

describe("simulated calls", () => {
  it("are recorded as provider simulator at cost 0, and count against no profile or cap", async () => {
    gw = await startTestGateway(raw);
    expect(gw.running.simulated).toBe(true);
    for (const text of ["one", "two", "three"]) {
      const r = await gw.chat("ann", text);
      expect(r.body.replies?.[0]?.text).toMatch(/^Simulated reply/);
    }
    const { store, models } = gw.running;

    const byModel = await store.usage.summarize({ since: 0, by: "model" });
    expect(byModel.map((r) => [r.key, r.calls, r.costUsd])).toEqual([["simulator/claude-sonnet-5-5", 3, 0]]);
    expect((await store.usage.byDay(10)).map((d) => d.provider)).toEqual(["simulator"]);

    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /^switchyard_model_calls_total\{(?=[^}]*outcome="ok")(?=[^}]*provider="simulator")[^}]*\} 3$/m,
    );
    expect(metrics).not.toMatch(/provider="anthropic"/);
    expect(metrics).not.toMatch(/^switchyard_model_cost_usd_total\{/m);

    // The cap ($0.01) is untouched: three priced echoes cost $0.04 before.
    const status = (await (await fetch(`${gw.url}/v1/status`)).json()) as {
      spend: { spendUsd: number; tokens: number };
    };
    expect(status.spend.spendUsd).toBe(0);
    expect(status.spend.tokens).toBe(0);
    const slash = await gw.chat("ann", "/status");
    expect(slash.body.replies?.[0]?.text).toContain("Today (UTC): $0.00, 0 tokens");

    // `auth status`: no profile was used or stored (the simulator is not a credential).
    await models.authProfiles.sync();
    const states = await store.authProfiles.list();
    expect(states).toEqual([]);
    const rows = profileStatuses(
      resolveProviders(parseConfig(raw, undefined), {}),
      states,
      await store.usage.byProfileSince(0),
      Date.now(),
    );
    expect(rows).toEqual([]);
  });

  it("`agent.model: simulator` is recorded as simulator/default", async () => {
    gw = await startTestGateway({ agent: { model: "simulator" } });
    await gw.chat("ann", "hi");
    const byModel = await gw.running.store.usage.summarize({ since: 0, by: "model" });
    expect(byModel.map((r) => [r.key, r.costUsd])).toEqual([["simulator/default", 0]]);
    await gw.running.models.authProfiles.sync();
    expect(await gw.running.store.authProfiles.list()).toEqual([]);
  });
});
