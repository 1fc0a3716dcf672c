/**
 * Models: the model and its failover chain, auth profiles (state, cooldown, last error) with
 * Reset on a cooling one, usage and spend charts by day (uPlot, loaded on demand), and tables by
 * model and by origin.
 */
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { ModelsView as ModelsData, UsageRow } from "../../../src/admin/contract.js";
import { useApi } from "../components/app-context.js";
import { useActions } from "../components/use-action.js";
import { useLoad } from "../components/use-load.js";
import { Badge, LoadState, Notice, TableBox, Time } from "../components/widgets.js";
import { count, usd } from "../lib/format.js";

type Usage = { by: string; rows: UsageRow[] };

/** The models screen. */
export function ModelsView() {
  const api = useApi();
  const [days, setDays] = useState(30);
  const loaded = useLoad((signal) => api.get<ModelsData>("/v1/admin/models", signal), []);
  const usage = useLoad(
    async (signal) => {
      const get = (by: string) => api.get<Usage>(`/v1/admin/usage?by=${by}&days=${days}`, signal);
      const [day, model, origin] = await Promise.all([get("day"), get("model"), get("origin")]);
      return { day: day.rows, model: model.rows, origin: origin.rows };
    },
    [days],
  );
  const actions = useActions(loaded.reload);
  const m = loaded.data;
  return html`<section data-view="models" aria-labelledby="h-models">
    <header class="view-head"><h1 id="h-models">Models</h1></header>
    <${LoadState} error=${loaded.error} loading=${loaded.loading} has=${!!m} />
    <${Notice} notice=${actions.notice} />
    ${
      m &&
      html`<p>Model <code>${m.model}</code>
          ${m.simulated && html` <span class="badge bad">replies are simulated</span>`}</p>
        ${m.chain.length > 1 && html`<p class="meta">Failover: ${m.chain.join(" → ")}</p>`}
        <h2>Auth profiles</h2>
        ${
          m.profiles.length === 0
            ? html`<p class="muted">No auth profiles.</p>`
            : html`<${TableBox} label="Auth profiles">
              <thead><tr><th scope="col">Profile</th><th scope="col">State</th><th scope="col">Cooling until</th><th scope="col">Last error</th>
                <th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
              <tbody>${m.profiles.map(
                (p) => html`<tr data-row=${`${p.provider}/${p.profileId}`}>
                  <td>${p.provider}/${p.profileId}</td>
                  <td><${Badge} state=${p.state} />${p.consecutiveFailures > 0 ? html` <span class="muted">${p.consecutiveFailures} failures</span>` : ""}</td>
                  <td><${Time} at=${p.cooldownUntil} />${p.cooldownReason ? html` <span class="muted">${p.cooldownReason}</span>` : ""}</td>
                  <td>${p.lastErrorKind ?? "—"} ${p.lastErrorAt ? html`<${Time} at=${p.lastErrorAt} />` : ""}</td>
                  <td><${Time} at=${p.lastUsedAt} /></td>
                  <td>${
                    p.state === "cooling" &&
                    html`<button type="button" disabled=${actions.busy}
                      onClick=${() =>
                        actions.run(
                          `Profile ${p.provider}/${p.profileId}`,
                          () =>
                            api.post("/v1/admin/models/reset", {
                              provider: p.provider,
                              profileId: p.profileId,
                            }),
                          `Profile ${p.provider}/${p.profileId} is back in use.`,
                        )}>Reset</button>`
                  }</td>
                </tr>`,
              )}</tbody>
            <//>`
        }`
    }
    <header class="view-head">
      <h2>Usage</h2>
      <label>Days <select value=${String(days)} onChange=${(e: Event) => setDays(Number((e.target as HTMLSelectElement).value))}>
        ${[7, 30, 90].map((n) => html`<option value=${String(n)}>${n}</option>`)}
      </select></label>
    </header>
    <${LoadState} error=${usage.error} loading=${usage.loading} has=${!!usage.data} />
    ${
      usage.data &&
      html`<${Charts} rows=${usage.data.day} />
        <h3>By model</h3><${UsageTable} label="Usage by model" rows=${usage.data.model} />
        <h3>By origin</h3><${UsageTable} label="Usage by origin" rows=${usage.data.origin} />`
    }
  </section>`;
}

function UsageTable({ label, rows }: { label: string; rows: UsageRow[] }) {
  if (rows.length === 0) return html`<p class="muted">No usage in this period.</p>`;
  return html`<${TableBox} label=${label}>
    <thead><tr><th scope="col">${label.replace("Usage by ", "")}</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Input tokens</th>
      <th scope="col" class="num">Output tokens</th><th scope="col" class="num">Cost</th></tr></thead>
    <tbody>${rows.map(
      (
        r,
      ) => html`<tr data-row=${r.key}><td>${r.key}</td><td class="num">${count(r.calls)}</td><td class="num">${count(r.inputTokens)}</td>
        <td class="num">${count(r.outputTokens)}</td><td class="num">${usd(r.costUsd)}</td></tr>`,
    )}</tbody>
  <//>`;
}

/** The charts by day: uPlot is imported when this first renders. */
function Charts({ rows }: { rows: UsageRow[] }) {
  const tokens = useRef<HTMLDivElement>(null);
  const spend = useRef<HTMLDivElement>(null);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (rows.length === 0) return;
    let alive = true;
    const drawn: Array<{ resize(w: number): void; destroy(): void }> = [];
    const width = () => Math.max(280, (tokens.current?.parentElement?.clientWidth ?? 600) - 2);
    const onResize = () => {
      for (const c of drawn) c.resize(width());
    };
    import("./usage-chart.js")
      .then((charts) => {
        if (!alive || !tokens.current || !spend.current) return;
        drawn.push(
          charts.drawTokens(tokens.current, rows, width()),
          charts.drawSpend(spend.current, rows, width()),
        );
        window.addEventListener("resize", onResize);
      })
      .catch((err: unknown) => setProblem(`The charts could not be loaded: ${String(err)}`));
    return () => {
      alive = false;
      window.removeEventListener("resize", onResize);
      for (const c of drawn) c.destroy();
    };
  }, [rows]);
  if (rows.length === 0) return html`<p class="muted">No usage in this period.</p>`;
  return html`<div class="charts">
    ${problem && html`<p class="notice error" role="alert">${problem}</p>`}
    <div ref=${tokens} class="chart" role="img" aria-label="Tokens by day"></div>
    <div ref=${spend} class="chart" role="img" aria-label="Spend by day"></div>
  </div>`;
}
