/** Assignments: the list, each with its state and why, tokens and cost, and a waiting question. */
import { html } from "htm/preact";
import type { AssignmentRow } from "../../../src/admin/contract.js";
import { useApi } from "../components/app-context.js";
import { useLoad } from "../components/use-load.js";
import { Badge, LoadState, TableBox, Time } from "../components/widgets.js";
import { count, usd } from "../lib/format.js";
import { hrefOf } from "../lib/route.js";

/** The assignments list. */
export function AssignmentsView() {
  const api = useApi();
  const loaded = useLoad(
    (signal) => api.get<{ assignments: AssignmentRow[] }>("/v1/admin/assignments", signal),
    [],
  );
  const rows = loaded.data?.assignments;
  return html`<section data-view="assignments" aria-labelledby="h-assignments">
    <header class="view-head"><h1 id="h-assignments">Assignments</h1>
      <button type="button" class="quiet" onClick=${loaded.reload}>Refresh</button></header>
    <${LoadState} error=${loaded.error} loading=${loaded.loading} has=${!!rows} />
    ${rows && rows.length === 0 && html`<p class="muted">No assignments.</p>`}
    ${
      rows &&
      rows.length > 0 &&
      html`<${TableBox} label="Assignments">
        <thead><tr><th scope="col">Goal</th><th scope="col">State</th><th scope="col">Why</th><th scope="col">Updated</th>
          <th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th></tr></thead>
        <tbody>${rows.map(
          (a) => html`<tr data-row=${a.id}>
            <td><a href=${hrefOf({ view: "assignment", id: a.id })}>${a.goal}</a>
              ${a.question ? html` <span class="badge busy">question waiting</span>` : ""}</td>
            <td><${Badge} state=${a.state} /></td><td>${a.why ?? ""}</td><td><${Time} at=${a.updatedAt} /></td>
            <td class="num">${count(a.tokens)}</td><td class="num">${usd(a.costUsd)}</td>
          </tr>`,
        )}</tbody>
      <//>`
    }
  </section>`;
}
