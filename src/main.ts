/**
 * The composition root: configuration → store, provider, lanes, harness, channels, gateway →
 * start. The only module (with src/config and src/cli) that reads the environment.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { HttpChannel } from "./channels/http/http-channel.js";
import { channelFactories } from "./channels/registry.js";
import type { ChannelName } from "./channels/types.js";
import { ensureWritableFolder } from "./config/home.js";
import type { Config, ProviderName } from "./config/schema.js";
import { type AccessPolicy, ChannelAccessPolicy } from "./gateway/access.js";
import { commandList } from "./gateway/commands.js";
import { Gateway } from "./gateway/gateway.js";
import { GatewayHttpServer, sendJson, sendText } from "./gateway/http-server.js";
import { GlobalLane } from "./gateway/lanes/global-lane.js";
import { LaneQueue } from "./gateway/lanes/lane-queue.js";
import { GatewayMetrics } from "./gateway/metrics.js";
import { OutboxDispatcher } from "./gateway/outbox-dispatcher.js";
import { TurnRunner } from "./gateway/turn-runner.js";
import { HeartbeatScheduler } from "./cron/heartbeat-scheduler.js";
import { isHeartbeatChecklistEmpty } from "./harness/heartbeat.js";
import { defaultTemplateDir, seedWorkspace } from "./harness/memory/workspace.js";
import { AnthropicProvider } from "./harness/providers/anthropic.js";
import { OpenAIProvider } from "./harness/providers/openai.js";
import { RetryingProvider } from "./harness/providers/retrying-provider.js";
import type { ModelProvider } from "./harness/providers/types.js";
import { fileTools } from "./harness/tools/file-tools.js";
import { ToolRegistry } from "./harness/tools/registry.js";
import { ModelSimulator } from "./simulator/model-simulator.js";
import { openSqliteStore } from "./store/sqlite/open-sqlite-store.js";
import type { Store } from "./store/types.js";
import { type Clock, systemClock } from "./util/clock.js";
import type { Logger } from "./util/logger.js";
import { type SecretList, redactSecrets } from "./util/redact.js";

/** Where state lives: `--home`, then SWITCHYARD_HOME, then ~/.switchyard. */
export function resolveHome(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  if (flag) return resolve(cwd, flag);
  if (env.SWITCHYARD_HOME) return resolve(cwd, env.SWITCHYARD_HOME);
  return join(homedir(), ".switchyard");
}

/** Which provider answers, resolved from config and environment. */
export interface ProviderChoice {
  provider: ProviderName;
  model: string;
  apiKey: string | undefined;
  baseUrl: string | undefined;
  requestTimeoutMs: number;
  /** True when no key (and no base URL) is configured: the built-in simulator answers. */
  simulated: boolean;
}

/** The environment variable each provider's key is read from when the config names none. */
export const PROVIDER_KEY_ENV: Readonly<Record<ProviderName, string>> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
};

/** A provider's API key: `providers.<name>.apiKey`, else its environment variable (if not empty). */
export function providerApiKey(
  config: Config,
  env: NodeJS.ProcessEnv,
  provider: ProviderName,
): string | undefined {
  return config.providers[provider].apiKey ?? (env[PROVIDER_KEY_ENV[provider]] || undefined);
}

/**
 * Which provider answers `agent.model`, with its key and base URL; `simulated` when neither a
 * key nor a base URL is configured (or the model is `simulator/…`): the built-in simulator answers.
 */
export function chooseProvider(config: Config, env: NodeJS.ProcessEnv): ProviderChoice {
  const [prefix, ...rest] = config.agent.model.split("/");
  const model = rest.join("/");
  if (prefix === "simulator") {
    return {
      provider: "anthropic",
      model,
      apiKey: undefined,
      baseUrl: undefined,
      requestTimeoutMs: 60_000,
      simulated: true,
    };
  }
  const provider = prefix as ProviderName;
  const settings = config.providers[provider];
  const apiKey = providerApiKey(config, env, provider);
  const simulated = !apiKey && !settings.baseUrl;
  return {
    provider,
    model,
    apiKey,
    baseUrl: settings.baseUrl,
    requestTimeoutMs: settings.requestTimeoutMs,
    simulated,
  };
}

export interface StartGatewayOptions {
  config: Config;
  configFile: string | undefined;
  home: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Overrides gateway.port (e.g. --port, or 0 in tests). */
  port?: number;
  clock?: Clock;
  /** Configured secret values: redacted (with the known key shapes) from every stored error text. */
  secrets?: SecretList;
  /** Test seam: use this provider instead of resolving one. */
  provider?: ModelProvider;
  /**
   * Seam: wraps the opened store (tests inject failures this way; a deployment could add
   * instrumentation). The gateway closes the store it gets back on stop.
   */
  wrapStore?: (store: Store) => Store;
}

/** A started gateway. */
export interface RunningGateway {
  url: string;
  gateway: Gateway;
  store: Store;
  simulated: boolean;
  simulatorUrl: string | undefined;
  workspaceDir: string;
  /** The heartbeat clock, when `heartbeat.everyMs` is not 0 (`beat()` fires one now). */
  heartbeat: HeartbeatScheduler | undefined;
  /** Graceful stop: intake off, drain, abort, close. */
  stop(): Promise<void>;
}

/** Where the agent workspace is: `agent.workspace` (relative to the home folder), else `<home>/workspace`. */
export function workspaceDirOf(config: Config, home: string): string {
  return config.agent.workspace ? resolve(home, config.agent.workspace) : join(home, "workspace");
}

/**
 * Starts the gateway. A failure at any step (a port in use, a database that will not open, a
 * channel that will not start) closes everything opened before it, in reverse order, and then
 * rejects: nothing is left listening or running, so the process can exit and a service
 * manager sees the failure.
 */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const opened: Array<{ what: string; close: () => unknown }> = [];
  try {
    return await assemble(options, (what, close) => opened.push({ what, close }));
  } catch (err) {
    for (const { what, close } of opened.reverse()) {
      try {
        await close();
      } catch (closeErr) {
        options.logger.warn({ err: closeErr, what }, "could not close after a failed start");
      }
    }
    throw err;
  }
}

async function assemble(
  options: StartGatewayOptions,
  onOpened: (what: string, close: () => unknown) => void,
): Promise<RunningGateway> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const startedAt = performance.now();
  ensureWritableFolder(options.home, "home folder", "choose another with --home or SWITCHYARD_HOME");
  const workspaceDir = workspaceDirOf(config, options.home);
  ensureWritableFolder(workspaceDir, "workspace", "check agent.workspace in the config");
  const seeded = await seedWorkspace(defaultTemplateDir(), workspaceDir);
  if (seeded.created.length > 0)
    logger.info({ workspaceDir, files: seeded.created.length }, "workspace created from template");

  const opened = openSqliteStore({
    path: join(options.home, "switchyard.db"),
    checkpointInWorker: true,
    logger: logger.child({ name: "store" }),
    redact: (text) => (options.secrets ? options.secrets.redact(text) : redactSecrets(text)),
  });
  const store = options.wrapStore ? options.wrapStore(opened) : opened;
  onOpened("store", () => store.close());
  const metrics = new GatewayMetrics();

  let simulator: ModelSimulator | undefined;
  const choice = chooseProvider(config, options.env);
  let provider: ModelProvider;
  if (options.provider) provider = options.provider;
  else {
    let baseUrl = choice.baseUrl;
    let apiKey = choice.apiKey;
    if (choice.simulated) {
      const sim = new ModelSimulator({ keepRequests: 20 });
      simulator = sim;
      onOpened("model simulator", () => sim.close());
      await sim.start();
      baseUrl = choice.provider === "openai" ? `${simulator.url}/v1` : simulator.url;
      apiKey = "simulated-no-key";
    }
    const providerOptions = {
      apiKey: apiKey ?? "no-key",
      ...(baseUrl ? { baseUrl } : {}),
      requestTimeoutMs: choice.requestTimeoutMs,
      simulated: choice.simulated,
      logger: logger.child({ name: `provider.${choice.provider}` }),
    };
    const maxTokensField = config.providers.openai.maxTokensField;
    const inner =
      choice.provider === "openai"
        ? new OpenAIProvider({ ...providerOptions, ...(maxTokensField ? { maxTokensField } : {}) })
        : new AnthropicProvider(providerOptions);
    provider = new RetryingProvider(inner, { logger: logger.child({ name: "provider.retry" }) });
  }
  if (provider.simulated) {
    logger.warn(
      { model: config.agent.model },
      "no model API key configured: replies are SIMULATED by the built-in model simulator (set ANTHROPIC_API_KEY or OPENAI_API_KEY for real answers)",
    );
  }

  const pool = new GlobalLane({
    maxConcurrent: config.lanes.maxConcurrent,
    reservedForHuman: config.lanes.reservedForHuman,
    onWait: (priority, waitedMs) => metrics.slotWait.observe(waitedMs / 1000, { priority }),
  });
  const laneLog = logger.child({ name: "gateway.lanes" });
  const lanes = new LaneQueue({
    pool,
    progressTimeoutMs: config.agent.progressTimeoutMs,
    onEvent: (e) => {
      if (e.type === "started") metrics.laneWait.observe(e.waitedMs / 1000, { priority: e.priority });
      else if (e.type === "aborted")
        laneLog.warn({ sessionKey: e.sessionKey, reason: e.reason }, "run aborted");
    },
  });

  const tools = new ToolRegistry({ timeoutMs: config.agent.toolTimeoutMs });
  for (const tool of fileTools()) tools.register(tool);

  let gateway: Gateway | undefined;
  const channelFor: Gateway["channelFor"] = (target) => gateway?.channelFor(target);
  const outbox = new OutboxDispatcher({
    store,
    channelFor,
    clock,
    logger: logger.child({ name: "gateway.outbox" }),
    metrics,
    maxAgeMs: config.outbox.maxAgeMs,
    maxAttempts: config.outbox.maxAttempts,
  });
  const turns = new TurnRunner({
    store,
    provider,
    model: choice.model,
    tools,
    workspaceDir,
    maxTokens: config.agent.maxTokens,
    maxToolCallsPerRun: config.agent.maxToolCallsPerRun,
    historyLimit: config.agent.historyLimit,
    progressTimeoutMs: config.agent.progressTimeoutMs,
    bootstrapMaxChars: config.agent.bootstrapMaxChars,
    bootstrapTotalMaxChars: config.agent.bootstrapTotalMaxChars,
    channelFor,
    clock,
    logger: logger.child({ name: "harness.run" }),
    metrics,
    onCommitted: (ids, state, replies, usage) => gateway?.onCommitted(ids, state, replies, usage),
    onUnsaved: (ids) => gateway?.onUnsaved(ids),
  });
  const access: Partial<Record<string, AccessPolicy>> = {};
  const telegram = config.channels.telegram;
  if (telegram?.enabled) {
    access.telegram = new ChannelAccessPolicy({
      channel: "telegram",
      dmPolicy: telegram.dmPolicy,
      allowFrom: telegram.allowFrom,
      groupPolicy: telegram.groupPolicy,
      groups: telegram.groups,
      requireMention: telegram.requireMention,
      groupHistoryLimit: telegram.groupHistoryLimit,
      pairing: store.pairing,
      clock,
      logger: logger.child({ name: "gateway.access", channel: "telegram" }),
    });
  }
  gateway = new Gateway({
    agentId: config.agent.id,
    dmScope: config.session.dmScope,
    queueMode: config.session.queueMode,
    store,
    lanes,
    turns,
    outbox,
    provider,
    modelRef: config.agent.model,
    access,
    clock,
    logger: logger.child({ name: "gateway.router" }),
    metrics,
  });
  const gw = gateway;
  // Recovery may already schedule turns: a failed start aborts them before the store closes.
  onOpened("gateway", () => gw.shutdown(1));

  metrics.gauge("switchyard_queue_depth", "Lane tasks waiting, by priority.", () => {
    const s = lanes.stats();
    return (["human", "normal", "background"] as const).map((p) => [{ priority: p }, s.pending[p]]);
  });
  metrics.gauge("switchyard_runs_in_flight", "Runs holding their session lane.", () => [
    [{}, lanes.stats().running],
  ]);
  metrics.gauge("switchyard_model_slots_in_use", "Global model-call slots in use.", () => [[{}, pool.inUse]]);
  metrics.gauge("switchyard_session_lanes", "Live session lanes.", () => [[{}, lanes.stats().lanes]]);

  const server = new GatewayHttpServer({
    host: config.gateway.host,
    port: options.port ?? config.gateway.port,
    logger: logger.child({ name: "gateway.http" }),
    ...(config.gateway.auth.token ? { authToken: config.gateway.auth.token } : {}),
  });
  server.route("GET", "/healthz", (_req, res) => sendJson(res, 200, { ok: true }));
  server.route("GET", "/readyz", (_req, res) =>
    sendJson(res, gw.ready ? 200 : 503, {
      ready: gw.ready,
      ...(gw.ready ? {} : { reason: "recovering or shutting down" }),
    }),
  );
  server.route("GET", "/metrics", (_req, res) =>
    sendText(res, 200, metrics.render(), "text/plain; version=0.0.4"),
  );
  server.route("GET", "/v1/status", async (_req, res) => {
    sendJson(
      res,
      200,
      await statusSnapshot(store, lanes, pool, gw, config, choice, provider.simulated, workspaceDir),
    );
  });

  const answers = {
    waitForAnswer: (id: number, signal?: AbortSignal) => gw.waitForAnswer(id, signal),
    listReplies: async (channel: ChannelName, recipientId: string, afterId: number) =>
      (await store.outbox.listSentFor(channel, recipientId, afterId, 100)).map((r) => ({
        id: r.id,
        text: r.text,
        createdAt: r.createdAt,
      })),
  };
  if (config.channels.http.enabled) {
    gw.addChannel(
      new HttpChannel({
        name: "http",
        server,
        answers,
        basePath: "/v1/chat",
        openaiCompatible: true,
        modelId: `switchyard:${config.agent.id}`,
      }),
    );
  }
  if (config.channels.console.enabled) {
    gw.addChannel(
      new HttpChannel({ name: "console", server, answers, basePath: "/v1/console", openaiCompatible: false }),
    );
  }

  if (telegram?.enabled) {
    const channels = channelFactories.telegram(telegram, {
      server,
      workspaceDir,
      commands: commandList(),
      logger,
    });
    for (const channel of channels) gw.addChannel(channel);
  }

  // Recovery first, before anything can write the inbox; then intake; then replies go out.
  const recovered = await gw.recover();
  await server.listen();
  onOpened("http server", () => server.close());
  for (const channel of gw.channels()) {
    onOpened(`channel ${channel.name}:${channel.accountId}`, () => channel.stop());
    await channel.start(gw);
  }
  gw.open();
  const heartbeat = startHeartbeat(config, { workspaceDir, lanes, turns, store, logger });
  logger.info(
    {
      url: server.url,
      model: config.agent.model,
      simulated: provider.simulated,
      home: options.home,
      config: options.configFile ?? "(defaults)",
      startupMs: Math.round(performance.now() - startedAt),
      ...recovered,
    },
    "gateway ready",
  );

  let stopping: Promise<void> | undefined;
  return {
    url: server.url,
    gateway: gw,
    store,
    simulated: provider.simulated,
    simulatorUrl: simulator?.url,
    workspaceDir,
    heartbeat,
    stop: () => {
      stopping ??= (async () => {
        heartbeat?.stop();
        const { drained } = await gw.shutdown(config.gateway.drainTimeoutMs);
        for (const channel of gw.channels()) await channel.stop();
        await server.close();
        await simulator?.close();
        await store.close();
        logger.info({ drained }, "gateway stopped");
      })();
      return stopping;
    },
  };
}

/**
 * Heartbeats: a background turn in `agent:<id>:heartbeat` every `heartbeat.everyMs`, following
 * HEARTBEAT.md; while that file is missing or holds nothing to act on, no model call is made.
 */
function startHeartbeat(
  config: Config,
  deps: { workspaceDir: string; lanes: LaneQueue; turns: TurnRunner; store: Store; logger: Logger },
): HeartbeatScheduler | undefined {
  const { everyMs, target, ackMaxChars } = config.heartbeat;
  if (everyMs === 0) return undefined;
  const checklistPath = join(deps.workspaceDir, "HEARTBEAT.md");
  const checklist = () => readFile(checklistPath, "utf8").catch(() => "");
  const sessionKey = `agent:${config.agent.id}:heartbeat`;
  const scheduler = new HeartbeatScheduler({
    everyMs,
    sessionKey,
    lanes: deps.lanes,
    isIdle: async () => isHeartbeatChecklistEmpty(await checklist()),
    run: async (ctx) => {
      const to = target === "last" ? ((await deps.store.sessions.latestTarget()) ?? null) : null;
      await deps.turns.runHeartbeat(
        sessionKey,
        { checklist: await checklist(), target: to, ackMaxChars },
        ctx,
      );
    },
    logger: deps.logger.child({ name: "cron.heartbeat" }),
  });
  scheduler.start();
  return scheduler;
}

/**
 * The body of `GET /v1/status` (printed by `switchyard status`). `inbox` counts rows by state,
 * with `rejected` split by why: `commands`, `groupContext` and `refused`.
 */
async function statusSnapshot(
  store: Store,
  lanes: LaneQueue,
  pool: GlobalLane,
  gateway: Gateway,
  config: Config,
  choice: ProviderChoice,
  simulated: boolean,
  workspaceDir: string,
) {
  const [inboxStates, rejected, outbox, runs, dead] = await Promise.all([
    store.inbox.countByState(),
    store.inbox.countRejected(),
    store.outbox.countByState(),
    store.runs.countByOutcome(),
    store.outbox.listByState("dead", 20),
  ]);
  // `rejected` is split by why: a chat command or group context is not a refusal.
  const { rejected: _rejected, ...unsplit } = inboxStates;
  const inbox = { ...unsplit, ...rejected };
  return {
    ready: gateway.ready,
    uptimeMs: Date.now() - gateway.startedAt,
    model: config.agent.model,
    provider: choice.provider,
    simulated,
    workspace: workspaceDir,
    lanes: { ...lanes.stats(), slotsInUse: pool.inUse, maxConcurrent: config.lanes.maxConcurrent },
    inbox,
    outbox,
    runs,
    sessions: await store.sessions.count(),
    deadReplies: dead.map((r) => ({
      id: r.id,
      channel: r.target.channel,
      chatId: r.target.chatId,
      attempts: r.attempts,
      error: r.lastError,
      text: r.text.slice(0, 80),
    })),
    channels: gateway.channels().map((c) => ({ name: c.name, accountId: c.accountId })),
  };
}
