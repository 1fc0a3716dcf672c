/**
 * Logs: the tail (`GET /v1/admin/logs`), filtered by level, and new lines live from the stream
 * (`logs=1`). Lines arriving while the tail loads are merged by sequence number, never twice.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import type { LogLine } from "../../../src/admin/contract.js";
import { useApi } from "../components/app-context.js";
import { useLive } from "../components/use-live.js";
import { useLoad } from "../components/use-load.js";
import { Badge, LiveDot, LoadState } from "../components/widgets.js";
import { absoluteTime } from "../lib/time.js";

/** Levels from least to most severe. */
export const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;

/** How many lines the view keeps. */
const KEEP = 500;

/** The logs screen. */
export function LogsView() {
  const api = useApi();
  const [level, setLevel] = useState<(typeof LEVELS)[number]>("info");
  const [live, setLive] = useState<LogLine[]>([]);
  const loaded = useLoad(
    (signal) => api.get<{ lines: LogLine[] }>(`/v1/admin/logs?level=${level}&limit=200`, signal),
    [level],
  );
  const connected = useLive("logs=1", (e) => {
    if (e.event === "log") setLive((lines) => [...lines.slice(-(KEEP - 1)), e.data]);
  });
  const min = LEVELS.indexOf(level);
  const tail = loaded.data?.lines ?? [];
  const last = tail.length > 0 ? (tail[tail.length - 1]?.seq ?? 0) : 0;
  const lines = [...tail, ...live.filter((l) => l.seq > last && LEVELS.indexOf(l.level) >= min)].slice(-KEEP);
  return html`<section data-view="logs" aria-labelledby="h-logs">
    <header class="view-head">
      <h1 id="h-logs">Logs</h1>
      <label>Level <select value=${level} onChange=${(e: Event) => {
        setLive([]);
        setLevel((e.target as HTMLSelectElement).value as (typeof LEVELS)[number]);
      }}>${LEVELS.map((l) => html`<option value=${l}>${l}</option>`)}</select></label>
      <${LiveDot} connected=${connected} />
    </header>
    <${LoadState} error=${loaded.error} loading=${loaded.loading} has=${!!loaded.data} />
    ${loaded.data && lines.length === 0 && html`<p class="muted">No lines at this level.</p>`}
    <ol class="log" aria-label="Log lines">
      ${lines.map(
        (l) => html`<li data-row=${String(l.seq)} class=${`lvl-${l.level}`}>
          <time datetime=${new Date(l.time).toISOString()}>${absoluteTime(l.time).slice(11)}</time>
          <${Badge} state=${l.level} /> <span class="muted">${l.name}</span> ${l.msg}
          ${l.fields && l.fields !== "{}" ? html` <code class="fields">${l.fields}</code>` : ""}
        </li>`,
      )}
    </ol>
  </section>`;
}
