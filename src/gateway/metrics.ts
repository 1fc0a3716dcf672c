/**
 * A small Prometheus registry: counters, gauges and histograms with labels, rendered as the
 * text exposition format. Series are prefixed `switchyard_`.
 */

type Labels = Record<string, string>;

const NEEDS_ESCAPE = /[\\"\n]/;
const ESCAPED = /[\\"\n]/g;
const ESCAPES: Record<string, string> = { "\\": "\\\\", '"': '\\"', "\n": "\\n" };

function labelKey(labels: Labels): string {
  const keys = Object.keys(labels);
  if (keys.length > 1) keys.sort();
  let key = "";
  for (const k of keys) {
    const v = String(labels[k]);
    // The text format's escapes (\\, \", \n); tested first: label values rarely need one.
    const escaped = NEEDS_ESCAPE.test(v) ? v.replace(ESCAPED, (c) => ESCAPES[c] ?? c) : v;
    key += `${key === "" ? "" : ","}${k}="${escaped}"`;
  }
  return key;
}

interface Metric {
  render(): string;
}

export class Counter implements Metric {
  readonly #values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    const k = labelKey(labels);
    this.#values.set(k, (this.#values.get(k) ?? 0) + by);
  }
  get(labels: Labels = {}): number {
    return this.#values.get(labelKey(labels)) ?? 0;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [k, v] of this.#values) lines.push(`${this.name}${k ? `{${k}}` : ""} ${v}`);
    return lines.join("\n");
  }
}

/** A gauge whose value is read when scraped. */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly collect: () => Array<[Labels, number]>,
  ) {}
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const [labels, v] of this.collect()) {
      const k = labelKey(labels);
      lines.push(`${this.name}${k ? `{${k}}` : ""} ${v}`);
    }
    return lines.join("\n");
  }
}

export class Histogram implements Metric {
  readonly #series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}
  observe(value: number, labels: Labels = {}): void {
    const k = labelKey(labels);
    let s = this.#series.get(k);
    if (!s) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(k, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= (this.buckets[i] as number)) s.counts[i]! += 1;
    s.sum += value;
    s.count += 1;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.#series) {
      const sep = k ? `${k},` : "";
      for (const [i, b] of this.buckets.entries())
        lines.push(`${this.name}_bucket{${sep}le="${b}"} ${s.counts[i]}`);
      lines.push(`${this.name}_bucket{${sep}le="+Inf"} ${s.count}`);
      lines.push(`${this.name}_sum${k ? `{${k}}` : ""} ${s.sum}`);
      lines.push(`${this.name}_count${k ? `{${k}}` : ""} ${s.count}`);
    }
    return lines.join("\n");
  }
}

/** The gateway's metrics. */
export class GatewayMetrics {
  readonly runs = new Counter("switchyard_runs_total", "Agent runs by trigger and outcome.");
  readonly inbound = new Counter("switchyard_inbound_total", "Inbound messages by channel and verdict.");
  readonly outbound = new Counter("switchyard_outbound_total", "Outbound sends by channel and result.");
  readonly outboxResent = new Counter(
    "switchyard_outbox_resent_total",
    "Reply chunks taken over mid-send (a crash, a stalled peer): sent again, or found already delivered where the channel can look (Slack).",
  );
  readonly cronLateStarts = new Counter(
    "switchyard_cron_late_starts_total",
    "Scheduled runs that started over a minute after their slot (the lanes were busy or the gateway slept).",
  );
  readonly cronRuns = new Counter("switchyard_cron_runs_total", "Scheduled run attempts by outcome.");
  readonly channelReconnects = new Counter(
    "switchyard_channel_reconnects_total",
    "Platform connections lost and re-established, by channel and account.",
  );
  readonly providerErrors = new Counter(
    "switchyard_provider_errors_total",
    "Model provider errors by provider and kind.",
  );
  readonly tokens = new Counter(
    "switchyard_tokens_total",
    "Tokens by provider, model and type (input, output, cache_read, cache_write).",
  );
  readonly modelCalls = new Counter(
    "switchyard_model_calls_total",
    "Model-call attempts by provider, model, auth profile and outcome (ok or the failure kind).",
  );
  readonly modelCallTokens = new Counter(
    "switchyard_model_call_tokens_total",
    "Tokens (input, output and cache) by provider, model and auth profile.",
  );
  readonly modelCostUsd = new Counter(
    "switchyard_model_cost_usd_total",
    "Model spend in USD by provider, model and auth profile.",
  );
  readonly profileCooldown = new Counter(
    "switchyard_auth_profile_cooldown_seconds_total",
    "Cooldown imposed on auth profiles, in seconds, by provider, profile and failure kind.",
  );
  readonly failovers = new Counter(
    "switchyard_model_failovers_total",
    "Calls that moved from one model to another, by from and to.",
  );
  readonly laneWait = new Histogram(
    "switchyard_lane_wait_seconds",
    "Time a run waited for its session lane, by priority.",
    [0.001, 0.01, 0.1, 0.5, 1, 5, 30, 120],
  );
  readonly slotWait = new Histogram(
    "switchyard_model_slot_wait_seconds",
    "Time a model call waited for a global slot, by priority.",
    [0.001, 0.01, 0.1, 0.5, 1, 5, 30, 120],
  );
  readonly runDuration = new Histogram(
    "switchyard_run_duration_seconds",
    "Agent run duration.",
    [0.1, 0.5, 1, 5, 15, 60, 300],
  );
  readonly jitFirings = new Counter(
    "switchyard_jit_firings_total",
    "Just-in-time instructions added to a model call, by rule.",
  );
  readonly #extra: Metric[] = [];

  /** Adds a metric a capability owns (rendered after the gateway's own). */
  add(metric: { render(): string }): void {
    this.#extra.push(metric);
  }

  /** Adds a gauge read at scrape time. */
  gauge(name: string, help: string, collect: () => Array<[Labels, number]>): void {
    this.#extra.push(new Gauge(name, help, collect));
  }

  render(): string {
    const all: Metric[] = [
      this.runs,
      this.inbound,
      this.outbound,
      this.outboxResent,
      this.channelReconnects,
      this.cronLateStarts,
      this.cronRuns,
      this.providerErrors,
      this.tokens,
      this.modelCalls,
      this.modelCallTokens,
      this.modelCostUsd,
      this.profileCooldown,
      this.failovers,
      this.laneWait,
      this.slotWait,
      this.runDuration,
      this.jitFirings,
      ...this.#extra,
    ];
    return `${all.map((m) => m.render()).join("\n")}\n`;
  }
}
