/**
 * One assignment: state and why, the pending question with a box to answer it, the contract,
 * work items, runs, tokens and cost, and Cancel.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import type { AssignmentDetail } from "../../../src/admin/contract.js";
import { useApi } from "../components/app-context.js";
import { useActions } from "../components/use-action.js";
import { useLoad } from "../components/use-load.js";
import { Badge, LoadState, Notice, TableBox, Time } from "../components/widgets.js";
import { count, usd } from "../lib/format.js";
import { hrefOf } from "../lib/route.js";

const FINISHED = new Set(["done", "failed", "cancelled"]);

/** An assignment's page. */
export function AssignmentView({ id }: { id: string }) {
  const api = useApi();
  const q = encodeURIComponent(id);
  const loaded = useLoad((signal) => api.get<AssignmentDetail>(`/v1/admin/assignment?id=${q}`, signal), [q]);
  const actions = useActions(loaded.reload);
  const [answer, setAnswer] = useState("");
  const d = loaded.data;
  const a = d?.assignment;
  const send = (text: string) => {
    if (text.trim() === "") return;
    actions.run(
      `Assignment ${id}`,
      async () => {
        await api.post("/v1/admin/assignment/answer", { id, text });
        setAnswer("");
      },
      "Answered; the assignment resumes.",
    );
  };
  return html`<section data-view="assignment" aria-labelledby="h-assignment">
    <p><a href=${hrefOf({ view: "assignments" })}>← Assignments</a></p>
    <h1 id="h-assignment" class="break">${a ? a.goal : id}</h1>
    <${LoadState} error=${loaded.error} loading=${loaded.loading} has=${!!d} />
    <${Notice} notice=${actions.notice} />
    ${
      a &&
      d &&
      html`<p class="meta"><${Badge} state=${a.state} /> ${a.why ?? ""}</p>
        <p class="meta">${count(a.tokens)} tokens · ${usd(a.costUsd)} · created <${Time} at=${a.createdAt} /> · updated <${Time} at=${a.updatedAt} /> · session <a href=${hrefOf({ view: "session", key: a.sessionKey })}>${a.sessionKey}</a></p>
        ${
          a.question &&
          html`<form class="question card" onSubmit=${(e: Event) => {
            e.preventDefault();
            send(answer);
          }}>
            <h2>Question</h2>
            <p class="text">${a.question}</p>
            ${
              a.options.length > 0 &&
              html`<div class="actions">${a.options.map(
                (o) =>
                  html`<button type="button" class="quiet" disabled=${actions.busy} onClick=${() => send(o)}>${o}</button>`,
              )}</div>`
            }
            <label for="answer-text">Your answer</label>
            <textarea id="answer-text" rows="3" value=${answer}
              onInput=${(e: Event) => setAnswer((e.target as HTMLTextAreaElement).value)}></textarea>
            <button type="submit" disabled=${actions.busy || answer.trim() === ""}>Answer</button>
          </form>`
        }
        <div class="actions">
          <button type="button" class="danger" disabled=${actions.busy || FINISHED.has(a.state)}
            onClick=${() =>
              actions.run(
                `Assignment ${id}`,
                () => api.post("/v1/admin/assignment/cancel", { id }),
                "The assignment was cancelled.",
              )}>Cancel</button>
        </div>
        <h2>Contract</h2>
        ${a.contract.length === 0 ? html`<p class="muted">No checks.</p>` : html`<ul>${a.contract.map((c) => html`<li>${c}</li>`)}</ul>`}
        <h2>Work items</h2>
        ${
          a.items.length === 0
            ? html`<p class="muted">No items.</p>`
            : html`<${TableBox} label="Work items">
              <thead><tr><th scope="col">Item</th><th scope="col">Status</th><th scope="col">Notes</th></tr></thead>
              <tbody>${a.items.map(
                (i) =>
                  html`<tr data-row=${String(i.id)}><td>${i.title}</td><td><${Badge} state=${i.status} /></td><td>${i.notes}</td></tr>`,
              )}</tbody>
            <//>`
        }
        <h2>Runs</h2>
        ${
          d.runs.length === 0
            ? html`<p class="muted">No runs yet.</p>`
            : html`<${TableBox} label="Assignment runs">
              <thead><tr><th scope="col" class="num">#</th><th scope="col">Started</th><th scope="col">Ended</th><th scope="col">Directive</th>
                <th scope="col">Reason</th><th scope="col" class="num">Turns</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th></tr></thead>
              <tbody>${d.runs.map(
                (
                  r,
                ) => html`<tr data-row=${r.runId}><td class="num">${r.runNo}</td><td><${Time} at=${r.startedAt} /></td>
                  <td><${Time} at=${r.endedAt} /></td><td>${r.directive ?? ""}</td><td>${r.reason ?? ""}</td>
                  <td class="num">${r.turns}</td><td class="num">${count(r.tokens)}</td><td class="num">${usd(r.costUsd)}</td></tr>`,
              )}</tbody>
            <//>`
        }`
    }
  </section>`;
}
