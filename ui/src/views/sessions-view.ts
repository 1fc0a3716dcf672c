/** Sessions: most recent activity first; refreshed when the stream says a session changed. */
import { html } from "htm/preact";
import type { SessionRow } from "../../../src/admin/contract.js";
import { useApi } from "../components/app-context.js";
import { useLive } from "../components/use-live.js";
import { useLoad } from "../components/use-load.js";
import { Badge, LiveDot, LoadState, TableBox, Time } from "../components/widgets.js";
import { count } from "../lib/format.js";
import { hrefOf } from "../lib/route.js";

/** The sessions list. */
export function SessionsView() {
  const api = useApi();
  const loaded = useLoad(
    (signal) => api.get<{ sessions: SessionRow[] }>("/v1/admin/sessions?limit=200", signal),
    [],
  );
  const connected = useLive("", (e) => {
    if (e.event === "session") loaded.reload();
  });
  const rows = loaded.data?.sessions;
  return html`<section data-view="sessions" aria-labelledby="h-sessions">
    <header class="view-head">
      <h1 id="h-sessions">Sessions</h1>
      <${LiveDot} connected=${connected} />
    </header>
    <${LoadState} error=${loaded.error} loading=${loaded.loading} has=${!!rows} />
    ${rows && rows.length === 0 && html`<p class="muted">No sessions yet.</p>`}
    ${
      rows &&
      rows.length > 0 &&
      html`<${TableBox} label="Sessions">
        <thead><tr>
          <th scope="col">Session</th><th scope="col">Channel</th><th scope="col">State</th>
          <th scope="col">Last activity</th><th scope="col" class="num">Messages</th><th scope="col" class="num">Tokens today</th>
        </tr></thead>
        <tbody>
          ${rows.map(
            (r) => html`<tr data-row=${r.sessionKey}>
              <td><a href=${hrefOf({ view: "session", key: r.sessionKey })}>${r.sessionKey}</a></td>
              <td>${r.channel}</td><td><${Badge} state=${r.state} /></td>
              <td><${Time} at=${r.lastActivityAt} /></td>
              <td class="num">${count(r.messages)}</td><td class="num">${count(r.tokensToday)}</td>
            </tr>`,
          )}
        </tbody>
      <//>`
    }
  </section>`;
}
