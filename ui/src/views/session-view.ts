/**
 * One session: its thread (messages as bubbles, each tool call folded with its arguments and
 * cut result, compactions and notes marked), its runs, and Stop / New session. Live: reloaded
 * whenever the stream names this session.
 */
import { html } from "htm/preact";
import type { SessionDetail } from "../../../src/admin/contract.js";
import { useApi } from "../components/app-context.js";
import { useActions } from "../components/use-action.js";
import { useLive } from "../components/use-live.js";
import { useLoad } from "../components/use-load.js";
import { Badge, LiveDot, LoadState, Notice, TableBox, Time } from "../components/widgets.js";
import { count } from "../lib/format.js";
import { hrefOf } from "../lib/route.js";
import { type FoldedItem, foldThread } from "../lib/thread.js";
import { duration } from "../lib/time.js";

/** A session's page. */
export function SessionView({ sessionKey }: { sessionKey: string }) {
  const api = useApi();
  const q = encodeURIComponent(sessionKey);
  const loaded = useLoad((signal) => api.get<SessionDetail>(`/v1/admin/session?key=${q}`, signal), [q]);
  // The stream names every session that changed; `session=` lets a gateway send only this one's.
  const connected = useLive(`session=${q}`, (e) => {
    if (e.event === "session" && e.data.sessionKey === sessionKey) loaded.reload();
  });
  const actions = useActions(loaded.reload);
  const d = loaded.data;
  return html`<section data-view="session" aria-labelledby="h-session">
    <p><a href=${hrefOf({ view: "sessions" })}>← Sessions</a></p>
    <header class="view-head">
      <h1 id="h-session" class="break">${sessionKey}</h1>
      <${LiveDot} connected=${connected} />
    </header>
    <${LoadState} error=${loaded.error} loading=${loaded.loading} has=${!!d} />
    <${Notice} notice=${actions.notice} />
    ${
      d &&
      html`<p class="meta">
          <${Badge} state=${d.session.state} /> ${d.session.channel} · ${d.session.mode}
          ${d.session.model ? html` · <code>${d.session.model}</code>` : ""} · started <${Time} at=${d.session.createdAt} /> · ${count(d.session.tokensToday)} tokens today
        </p>
        <div class="actions">
          <button type="button" disabled=${actions.busy || d.session.state !== "running"}
            onClick=${() =>
              actions.run(
                `session ${sessionKey}`,
                () => api.post("/v1/admin/session/stop", { key: sessionKey }),
                "Stop requested.",
              )}>Stop</button>
          <button type="button" disabled=${actions.busy}
            onClick=${() =>
              actions.run(
                `session ${sessionKey}`,
                () => api.post("/v1/admin/session/reset", { key: sessionKey }),
                "A new session was started; the next message begins it.",
              )}>New session</button>
        </div>
        <h2>Thread</h2>
        ${d.thread.length === 0 ? html`<p class="muted">Nothing in this session yet.</p>` : ""}
        <ol class="thread">${foldThread(d.thread).map((item) => html`<${ThreadEntry} item=${item} />`)}</ol>
        <h2>Runs</h2>
        ${
          d.runs.length === 0
            ? html`<p class="muted">No runs.</p>`
            : html`<${TableBox} label="Runs">
              <thead><tr><th scope="col">Started</th><th scope="col">Trigger</th><th scope="col">Outcome</th>
                <th scope="col" class="num">Took</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Tool calls</th><th scope="col">Error</th></tr></thead>
              <tbody>
                ${d.runs.map(
                  (r) => html`<tr data-row=${r.runId}>
                    <td><${Time} at=${r.startedAt} /></td><td>${r.trigger}</td><td><${Badge} state=${r.outcome} /></td>
                    <td class="num">${duration(r.durationMs)}</td><td class="num">${count(r.tokens)}</td>
                    <td class="num">${r.toolCalls}</td><td>${r.error ?? ""}</td>
                  </tr>`,
                )}
              </tbody>
            <//>`
        }`
    }
  </section>`;
}

/** One entry of the folded thread. */
function ThreadEntry({ item }: { item: FoldedItem }) {
  switch (item.kind) {
    case "user":
      return html`<li class="bubble user" data-row=${String(item.id)}>
        <div class="who">${item.sender} · <${Time} at=${item.at} /></div><div class="text">${item.text}</div></li>`;
    case "assistant":
      return html`<li class="bubble assistant" data-row=${String(item.id)}>
        <div class="who">agent · <${Time} at=${item.at} /></div><div class="text">${item.text}</div></li>`;
    case "tool": {
      const r = item.result;
      return html`<li class="tool" data-row=${String(item.id)}>
        <details>
          <summary>
            Tool <code>${item.call.name}</code>
            ${r ? (r.isError ? html` <span class="badge bad">error</span>` : html` <span class="badge good">done</span>`) : html` <span class="badge busy">no result yet</span>`}
          </summary>
          <h3>Arguments</h3>
          <pre>${item.call.args}</pre>
          ${r && html`<h3>Result${r.chars > r.text.length ? ` (first ${count(r.text.length)} of ${count(r.chars)} characters)` : ""}</h3><pre>${r.text}</pre>`}
        </details>
      </li>`;
    }
    case "orphan_result":
      return html`<li class="tool" data-row=${String(item.id)}>
        <details><summary>Result of <code>${item.result.name}</code></summary><pre>${item.result.text}</pre></details></li>`;
    case "compaction":
      return html`<li class="marker" data-row=${String(item.id)}>
        <details><summary>Compacted (${count(item.tokensBefore)} tokens before) · <${Time} at=${item.at} /></summary>
        <p class="text">${item.summary}</p></details></li>`;
    case "note":
      return html`<li class="note" data-row=${String(item.id)}><span class="badge plain">${item.type}</span> ${item.text}</li>`;
  }
}
