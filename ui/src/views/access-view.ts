/** Access: pending pairing requests with Approve / Deny, approved senders, and each account's policy. */
import { html } from "htm/preact";
import type { AccessView as AccessData } from "../../../src/admin/contract.js";
import { useApi } from "../components/app-context.js";
import { useActions } from "../components/use-action.js";
import { useLoad } from "../components/use-load.js";
import { LoadState, Notice, TableBox, Time } from "../components/widgets.js";

/** The access screen. */
export function AccessView() {
  const api = useApi();
  const loaded = useLoad((signal) => api.get<AccessData>("/v1/admin/access", signal), []);
  const actions = useActions(loaded.reload);
  const d = loaded.data;
  return html`<section data-view="access" aria-labelledby="h-access">
    <header class="view-head"><h1 id="h-access">Access</h1>
      <button type="button" class="quiet" onClick=${loaded.reload}>Refresh</button></header>
    <${LoadState} error=${loaded.error} loading=${loaded.loading} has=${!!d} />
    <${Notice} notice=${actions.notice} />
    ${
      d &&
      html`<h2>Pairing requests</h2>
        ${
          d.pending.length === 0
            ? html`<p class="muted">No one is waiting.</p>`
            : html`<${TableBox} label="Pairing requests">
              <thead><tr><th scope="col">Sender</th><th scope="col">Channel</th><th scope="col">Code</th><th scope="col">Asked</th>
                <th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
              <tbody>${d.pending.map((p) => {
                const who = `${p.senderName || p.senderId} (${p.channel})`;
                return html`<tr data-row=${`${p.channel}:${p.code}`}>
                  <td>${p.senderName} <span class="muted">${p.senderId}</span></td><td>${p.channel}/${p.accountId}</td>
                  <td><code>${p.code}</code></td><td><${Time} at=${p.createdAt} /></td><td><${Time} at=${p.expiresAt} /></td>
                  <td class="row-actions">
                    <button type="button" disabled=${actions.busy}
                      onClick=${() =>
                        actions.run(
                          `The request of ${who}`,
                          () => api.post("/v1/admin/access/approve", { channel: p.channel, code: p.code }),
                          `${who} was approved.`,
                        )}>Approve</button>
                    <button type="button" class="danger" disabled=${actions.busy}
                      onClick=${() =>
                        actions.run(
                          `The request of ${who}`,
                          () => api.post("/v1/admin/access/deny", { channel: p.channel, code: p.code }),
                          `${who} was denied.`,
                        )}>Deny</button>
                  </td>
                </tr>`;
              })}</tbody>
            <//>`
        }
        <h2>Approved senders</h2>
        ${
          d.approved.length === 0
            ? html`<p class="muted">No one was approved by pairing.</p>`
            : html`<${TableBox} label="Approved senders">
              <thead><tr><th scope="col">Sender</th><th scope="col">Channel</th><th scope="col">Approved</th></tr></thead>
              <tbody>${d.approved.map(
                (
                  a,
                ) => html`<tr data-row=${`${a.channel}:${a.senderId}`}><td>${a.senderName} <span class="muted">${a.senderId}</span></td>
                  <td>${a.channel}</td><td><${Time} at=${a.approvedAt} /></td></tr>`,
              )}</tbody>
            <//>`
        }
        <h2>Policies</h2>
        <${TableBox} label="Policies">
          <thead><tr><th scope="col">Account</th><th scope="col">DM policy</th><th scope="col">Allowed</th></tr></thead>
          <tbody>${d.policies.map(
            (
              p,
            ) => html`<tr data-row=${`${p.channel}:${p.accountId}`}><td>${p.channel}/${p.accountId}</td><td>${p.dmPolicy}</td>
              <td>${p.allowFrom.length === 0 ? html`<span class="muted">—</span>` : p.allowFrom.join(", ")}</td></tr>`,
          )}</tbody>
        <//>`
    }
  </section>`;
}
