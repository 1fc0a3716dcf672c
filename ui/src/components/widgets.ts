/** Small pieces every view uses: times, notices, table boxes, state badges, the live dot. */
import type { ComponentChildren } from "preact";
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { absoluteTime, relativeTime } from "../lib/time.js";

/** Every mounted {@link Time} re-renders on one shared 15 s tick. */
const listeners = new Set<(now: number) => void>();
let ticker: ReturnType<typeof setInterval> | undefined;

function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    listeners.add(setNow);
    ticker ??= setInterval(() => {
      const t = Date.now();
      for (const l of listeners) l(t);
    }, 15_000);
    return () => {
      listeners.delete(setNow);
      if (listeners.size === 0 && ticker !== undefined) {
        clearInterval(ticker);
        ticker = undefined;
      }
    };
  }, []);
  return now;
}

/** A time shown relative ("2 h ago"), the absolute time in its title; "—" for none. */
export function Time({ at }: { at: number | null | undefined }) {
  const now = useNow();
  if (at === null || at === undefined) return html`<span class="muted">—</span>`;
  return html`<time datetime=${new Date(at).toISOString()} title=${absoluteTime(at)}>${relativeTime(at, now)}</time>`;
}

/** A line saying what happened: an error (role=alert) or a confirmation (role=status). */
export function Notice({ notice }: { notice: { kind: "ok" | "error"; text: string } | undefined }) {
  if (!notice) return null;
  return notice.kind === "error"
    ? html`<p class="notice error" role="alert">${notice.text}</p>`
    : html`<p class="notice ok" role="status">${notice.text}</p>`;
}

/** A load's error, or "Loading…" before the first data. */
export function LoadState({
  error,
  loading,
  has,
}: {
  error: Error | undefined;
  loading: boolean;
  has: boolean;
}) {
  if (error) return html`<p class="notice error" role="alert">${error.message}</p>`;
  if (loading && !has) return html`<p class="muted" aria-busy="true">Loading…</p>`;
  return null;
}

/** A table inside a box that scrolls sideways on a narrow screen. */
export function TableBox({ label, children }: { label: string; children: ComponentChildren }) {
  return html`<div class="table-box" role="region" aria-label=${label} tabindex="0">
    <table>${children}</table>
  </div>`;
}

/** A state word as a coloured badge ("ok", "running", "cooling", "failed" …). */
export function Badge({ state }: { state: string }) {
  const tone = /^(ok|on|done|idle|ready|approved)/.test(state)
    ? "good"
    : /^(running|queued|starting|sleeping|waiting|standby|retry|paused)/.test(state)
      ? "busy"
      : /^(failed|failing|stopped|dead|error|fatal|cooling|degraded|cancelled|missed)/.test(state)
        ? "bad"
        : "plain";
  return html`<span class=${`badge ${tone}`}>${state}</span>`;
}

/** The live stream's state: a dot and a word, announced politely. */
export function LiveDot({ connected }: { connected: boolean }) {
  return html`<span class=${`live ${connected ? "on" : "off"}`} role="status">${connected ? "live" : "reconnecting…"}</span>`;
}
