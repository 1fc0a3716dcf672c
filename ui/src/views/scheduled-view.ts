/**
 * Scheduled: cron jobs (schedule, next run, state, last run) with Run now and an enable switch,
 * a job's run ledger on demand, pending wakes, and the heartbeat with its last beats.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import type { CronJobRow, CronRunRow, Scheduled } from "../../../src/admin/contract.js";
import { useApi } from "../components/app-context.js";
import { useActions } from "../components/use-action.js";
import { useLoad } from "../components/use-load.js";
import { Badge, LoadState, Notice, TableBox, Time } from "../components/widgets.js";
import { count } from "../lib/format.js";
import { hrefOf } from "../lib/route.js";
import { duration } from "../lib/time.js";

/** The scheduled-work screen. */
export function ScheduledView() {
  const api = useApi();
  const loaded = useLoad((signal) => api.get<Scheduled>("/v1/admin/cron", signal), []);
  const [ledgerOf, setLedgerOf] = useState<CronJobRow | undefined>(undefined);
  const [ledgerTick, setLedgerTick] = useState(0);
  const refresh = () => {
    loaded.reload();
    setLedgerTick((t) => t + 1);
  };
  const actions = useActions(refresh);
  const d = loaded.data;
  return html`<section data-view="scheduled" aria-labelledby="h-scheduled">
    <header class="view-head"><h1 id="h-scheduled">Scheduled</h1>
      <button type="button" class="quiet" onClick=${refresh}>Refresh</button></header>
    <${LoadState} error=${loaded.error} loading=${loaded.loading} has=${!!d} />
    <${Notice} notice=${actions.notice} />
    ${
      d &&
      html`<h2>Jobs</h2>
        ${
          d.jobs.length === 0
            ? html`<p class="muted">No cron jobs.</p>`
            : html`<${TableBox} label="Cron jobs">
              <thead><tr><th scope="col">Job</th><th scope="col">Schedule</th><th scope="col">Next run</th><th scope="col">State</th>
                <th scope="col">Last run</th><th scope="col">Actions</th></tr></thead>
              <tbody>
                ${d.jobs.map(
                  (j) => html`<tr data-row=${String(j.id)}>
                    <td>${j.name} <span class="muted">#${j.id} · ${j.source}</span></td>
                    <td>${j.schedule}</td>
                    <td><${Time} at=${j.nextRunAt} /></td>
                    <td><${Badge} state=${!j.enabled ? "off" : j.failing ? "failing" : "on"} />
                      ${j.disabledReason ? html` <span class="muted">${j.disabledReason}</span>` : ""}</td>
                    <td>${j.lastRun ? html`<${Badge} state=${j.lastRun.state} /> <${Time} at=${j.lastRun.finishedAt ?? j.lastRun.startedAt ?? j.lastRun.scheduledFor} />` : "—"}</td>
                    <td class="row-actions">
                      <button type="button" disabled=${actions.busy}
                        onClick=${() =>
                          actions.run(
                            `Job ${j.name} (#${j.id})`,
                            () => api.post("/v1/admin/cron/run", { id: j.id }),
                            `Job ${j.name} was queued to run now.`,
                          )}>Run now</button>
                      <label class="switch">
                        <input type="checkbox" checked=${j.enabled} disabled=${actions.busy}
                          onChange=${(e: Event) => {
                            const enabled = (e.target as HTMLInputElement).checked;
                            actions.run(
                              `Job ${j.name} (#${j.id})`,
                              () => api.post("/v1/admin/cron/enable", { id: j.id, enabled }),
                              `Job ${j.name} is ${enabled ? "enabled" : "disabled"}.`,
                            );
                          }} />
                        Enabled
                      </label>
                      <button type="button" class="quiet" aria-expanded=${ledgerOf?.id === j.id}
                        onClick=${() => setLedgerOf(ledgerOf?.id === j.id ? undefined : j)}>Runs</button>
                    </td>
                  </tr>`,
                )}
              </tbody>
            <//>`
        }
        ${ledgerOf && html`<${Ledger} job=${ledgerOf} tick=${ledgerTick} />`}
        <h2>Pending wakes</h2>
        ${
          d.wakes.length === 0
            ? html`<p class="muted">No wakes pending.</p>`
            : html`<${TableBox} label="Pending wakes">
              <thead><tr><th scope="col">Session</th><th scope="col">Due</th><th scope="col">Reason</th></tr></thead>
              <tbody>${d.wakes.map(
                (w) => html`<tr data-row=${String(w.id)}>
                  <td><a href=${hrefOf({ view: "session", key: w.sessionKey })}>${w.sessionKey}</a></td>
                  <td><${Time} at=${w.dueAt} /></td><td>${w.reason}</td></tr>`,
              )}</tbody>
            <//>`
        }
        <h2>Heartbeat</h2>
        <p><${Badge} state=${d.heartbeat.state} /> every ${duration(d.heartbeat.everyMs)} · next <${Time} at=${d.heartbeat.nextAt} /></p>
        ${
          d.heartbeat.beats.length > 0 &&
          html`<${TableBox} label="Last heartbeats">
            <thead><tr><th scope="col">When</th><th scope="col">Outcome</th><th scope="col" class="num">Took</th><th scope="col">Said</th></tr></thead>
            <tbody>${d.heartbeat.beats.map(
              (
                b,
              ) => html`<tr data-row=${String(b.at)}><td><${Time} at=${b.at} /></td><td><${Badge} state=${b.outcome} /></td>
                <td class="num">${duration(b.durationMs)}</td><td>${b.text ?? ""}</td></tr>`,
            )}</tbody>
          <//>`
        }`
    }
  </section>`;
}

/** A job's run ledger, latest first. */
function Ledger({ job, tick }: { job: CronJobRow; tick: number }) {
  const api = useApi();
  const loaded = useLoad(
    (signal) => api.get<{ runs: CronRunRow[] }>(`/v1/admin/cron/runs?job=${job.id}&limit=50`, signal),
    [job.id, tick],
  );
  const runs = loaded.data?.runs;
  return html`<section class="ledger" aria-labelledby="h-ledger" data-ledger=${String(job.id)}>
    <h3 id="h-ledger">Runs of ${job.name}</h3>
    <${LoadState} error=${loaded.error} loading=${loaded.loading} has=${!!runs} />
    ${runs && runs.length === 0 && html`<p class="muted">No runs yet.</p>`}
    ${
      runs &&
      runs.length > 0 &&
      html`<${TableBox} label=${`Runs of ${job.name}`}>
        <thead><tr><th scope="col">Slot</th><th scope="col">State</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Took</th>
          <th scope="col" class="num">Tokens</th><th scope="col">Error or note</th></tr></thead>
        <tbody>${runs.map(
          (
            r,
          ) => html`<tr data-row=${String(r.id)}><td><${Time} at=${r.scheduledFor} /></td><td><${Badge} state=${r.state} /></td>
            <td class="num">${r.attempts}</td><td class="num">${r.durationMs === null ? "—" : duration(r.durationMs)}</td>
            <td class="num">${r.tokens === null ? "—" : count(r.tokens)}</td><td>${r.error ?? r.note ?? ""}</td></tr>`,
        )}</tbody>
      <//>`
    }
  </section>`;
}
