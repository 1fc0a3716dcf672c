/**
 * Overview: readiness, model (and whether replies are simulated), channels, lanes, outbox,
 * today's spend against the caps, cooling profiles. Live: the stream's `overview` events
 * replace the data as they come (the stream sends one at once).
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import type { Overview } from "../../../src/admin/contract.js";
import { useApi } from "../components/app-context.js";
import { useLive } from "../components/use-live.js";
import { useLoad } from "../components/use-load.js";
import { Badge, LiveDot, LoadState, TableBox, Time } from "../components/widgets.js";
import { count, usd } from "../lib/format.js";
import { hrefOf } from "../lib/route.js";
import { duration } from "../lib/time.js";

/** The overview screen. */
export function OverviewView() {
  const api = useApi();
  const loaded = useLoad((signal) => api.get<Overview>("/v1/admin/overview", signal), []);
  const [live, setLive] = useState<Overview | undefined>(undefined);
  const connected = useLive("", (e) => {
    if (e.event === "overview") setLive(e.data);
  });
  const o = live ?? loaded.data;
  return html`<section data-view="overview" aria-labelledby="h-overview">
    <header class="view-head">
      <h1 id="h-overview">Overview</h1>
      <${LiveDot} connected=${connected} />
    </header>
    <${LoadState} error=${live ? undefined : loaded.error} loading=${loaded.loading} has=${!!o} />
    ${o && html`<${OverviewBody} o=${o} />`}
  </section>`;
}

function OverviewBody({ o }: { o: Overview }) {
  const s = o.spend;
  return html`<div class="cards">
      <article class="card">
        <h2>Gateway</h2>
        <p><${Badge} state=${o.ready ? "ready" : "starting"} /> up ${duration(o.uptimeMs)}</p>
        <p>
          Model <code>${o.model}</code>
          ${o.simulated && html` <span class="badge bad" title="No API key is configured: answers come from the built-in simulator">replies are simulated</span>`}
        </p>
        <p>${count(o.sessions)} sessions</p>
      </article>
      <article class="card">
        <h2>Lanes</h2>
        <p>${o.lanes.running} running · slots ${o.lanes.slots.busy}/${o.lanes.slots.total} busy
          (${o.lanes.slots.reservedForHuman} kept for people)</p>
        <p>Pending: ${o.lanes.pending.human} human · ${o.lanes.pending.normal} normal · ${o.lanes.pending.background} background</p>
      </article>
      <article class="card">
        <h2>Outbox</h2>
        <p>${count(o.outbox.pending)} pending · <span class=${o.outbox.dead > 0 ? "bad-text" : ""}>${count(o.outbox.dead)} dead</span></p>
      </article>
      <article class="card">
        <h2>Today (${s.day})</h2>
        <p>${usd(s.spendUsd)} spent${s.dailySpendUsd !== undefined ? html` of ${usd(s.dailySpendUsd)} (soft cap)` : ""}
          ${s.dailySpendHardUsd !== undefined ? html`, hard cap ${usd(s.dailySpendHardUsd)}` : ""}</p>
        ${
          s.dailySpendUsd !== undefined &&
          html`<meter min="0" max=${s.dailySpendHardUsd ?? s.dailySpendUsd}
          high=${s.dailySpendUsd} value=${s.spendUsd} aria-label="Spend today against the cap"></meter>`
        }
        <p>${count(s.tokens)} tokens${s.sessionDailyTokens !== undefined ? ` (per-session cap ${count(s.sessionDailyTokens)})` : ""}</p>
      </article>
    </div>
    <h2>Channels</h2>
    <${TableBox} label="Channels">
      <thead><tr><th scope="col">Channel</th><th scope="col">Account</th><th scope="col">State</th><th scope="col">Detail</th></tr></thead>
      <tbody>
        ${o.channels.map(
          (c) => html`<tr data-row=${`${c.name}:${c.accountId}`}>
            <td>${c.name}</td><td>${c.accountId}</td><td><${Badge} state=${c.state} /></td><td>${c.detail ?? ""}</td>
          </tr>`,
        )}
      </tbody>
    <//>
    <h2>Sessions in the lanes</h2>
    ${
      o.lanes.sessions.length === 0
        ? html`<p class="muted">No session is running or waiting.</p>`
        : html`<${TableBox} label="Lanes">
          <thead><tr><th scope="col">Session</th><th scope="col">Running</th><th scope="col">Queued</th></tr></thead>
          <tbody>
            ${o.lanes.sessions.map(
              (l) => html`<tr data-row=${l.sessionKey}>
                <td><a href=${hrefOf({ view: "session", key: l.sessionKey })}>${l.sessionKey}</a></td>
                <td>${l.running ? html`<${Badge} state="running" /> ${l.runningPriority ?? ""}` : "—"}</td>
                <td>${l.queued}</td>
              </tr>`,
            )}
          </tbody>
        <//>`
    }
    ${
      o.cooling.length > 0 &&
      html`<h2>Cooling profiles</h2>
        <${TableBox} label="Cooling profiles">
          <thead><tr><th scope="col">Profile</th><th scope="col">Reason</th><th scope="col">Until</th></tr></thead>
          <tbody>
            ${o.cooling.map(
              (c) => html`<tr data-row=${`${c.provider}/${c.profileId}`}>
                <td><a href="#/models">${c.provider}/${c.profileId}</a></td><td>${c.reason ?? ""}</td><td><${Time} at=${c.until} /></td>
              </tr>`,
            )}
          </tbody>
        <//>`
    }`;
}
