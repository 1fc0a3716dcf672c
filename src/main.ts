import { channelModules as defaultChannelModules } from "./channels/registry.js";
import type { RunningGateway, StartGatewayOptions } from "./app/gateway-types.js";
import { AnswerWaiters } from "./gateway/answer-waiters.js";
import { createChannels } from "./app/channels.js";
import { buildAgent } from "./app/agent.js";
import { buildLanes } from "./app/harness.js";
import { serveGatewayRoutes } from "./app/routes.js";
import { serveControlPage } from "./app/admin.js";
import { shutdown } from "./app/shutdown.js";
import type { AssignmentsCapability } from "./capabilities/assignments/module.js";
import type { CronCapability } from "./capabilities/cron/module.js";
import type { HeartbeatCapability } from "./capabilities/heartbeat/module.js";
import type { MemoryCapability } from "./capabilities/memory/module.js";
import { buildModelRouter } from "./app/models.js";
import { openState } from "./app/state.js";
import { runCli } from "./cli/main.js";
import { ChannelDirectory } from "./gateway/channel-directory.js";
import { commandList } from "./gateway/commands.js";
import { gatewayErrorStatus } from "./gateway/error-status.js";
import { GatewayEvents } from "./gateway/events.js";
import { Gateway, IntakeSwitch } from "./gateway/gateway.js";
import { GatewayMetrics } from "./gateway/metrics.js";
import { OutboxDispatcher } from "./gateway/outbox-dispatcher.js";
import { claimOwnership, otherNodesAlive } from "./gateway/owners.js";
import { scheduleClaimable, takeOver } from "./gateway/recovery.js";
import { Router } from "./gateway/router.js";
import { HeldSessionWatch } from "./gateway/held-sessions.js";
import { ResourceLeases } from "./gateway/resource-leases.js";
import { SessionLeases } from "./gateway/session-leases.js";
import { TurnRunner } from "./gateway/turn-runner.js";
import { TurnScheduler } from "./gateway/turn-scheduler.js";
import { GatewayHttpServer } from "./http/server.js";
import { systemClock } from "./util/clock.js";
import { newId } from "./util/ids.js";
import { buildCapabilities } from "./capabilities/build.js";
import { capabilityModules as defaultCapabilityModules } from "./capabilities/registry.js";

/** How often the outbox looks for rows other nodes committed, while there are any. */
const OTHERS_POLL_MS = 1_000;

/** The `switchyard` command line (bin/switchyard.js calls this); resolves with the exit code. */
export function main(argv: string[]): Promise<number> {
  return runCli(argv, { startGateway });
}

export type { RunningGateway, StartGatewayOptions };

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
  const { workspaceDir, store } = await openState(options, onOpened);
  const metrics = new GatewayMetrics();

  const {
    router: models,
    simulator,
    usage,
  } = await buildModelRouter({ ...options, store, metrics }, onOpened);

  // This process's instance id: the owner of its session leases, its model-call permits and the
  // rows it works on.
  const owner = newId("gw");
  const { pool, lanes, permits, onLaneEvent } = buildLanes(config, clock, metrics, logger, { store, owner });
  if (permits) onOpened("cluster permits", () => permits.close());

  const channels = new ChannelDirectory();
  const capabilities = await buildCapabilities(
    options.capabilityModules ?? defaultCapabilityModules,
    {
      config,
      env: options.env,
      home: options.home,
      workspaceDir,
      store,
      channels,
      lanes,
      metrics,
      usage,
      clock,
      logger,
    },
    (name, capability) => onOpened(`capability ${name}`, () => capability.stop?.()),
  );
  const tasks = capabilities.get<AssignmentsCapability>("assignments")?.tasks;
  const memory = capabilities.get<MemoryCapability>("memory");
  const heartbeat = capabilities.get<HeartbeatCapability>("heartbeat");
  const cron = capabilities.get<CronCapability>("cron");
  const events = new GatewayEvents((err, event) =>
    logger.error({ err, event: event.type }, "a gateway event listener failed"),
  );
  const agent = buildAgent(config, {
    onAppended: (sessionKey) => events.emit({ type: "transcript_appended", sessionKey }),
    store,
    router: models,
    workspaceDir,
    clock,
    logger,
    tools: capabilities.tools(),
    toolSources: capabilities.toolSources(),
    hooks: capabilities.hooks(),
    metrics,
    ...(memory ? { memory } : {}),
    ...(tasks ? { assignments: tasks } : {}),
  });

  const waiters = new AnswerWaiters({
    store,
    events,
    clock,
    logger: logger.child({ name: "gateway.answers" }),
  });
  const outbox = new OutboxDispatcher({
    store,
    channelFor: channels.channelFor,
    clock,
    logger: logger.child({ name: "gateway.outbox" }),
    metrics,
    maxAgeMs: config.outbox.maxAgeMs,
    maxAttempts: config.outbox.maxAttempts,
    ownership: { owner, ttlMs: config.gateway.leaseTtlMs, hosted: () => channels.hosted() },
  });
  const leaseBase = {
    store,
    owner,
    ttlMs: config.gateway.leaseTtlMs,
    clock,
    logger: logger.child({ name: "gateway.leases" }),
  };
  // Duties one node runs at a time (a bot's long polling, a Discord connection, the heartbeat).
  const resources = new ResourceLeases(leaseBase);
  // Rows another node commits for a channel this one hosts wake nothing here: while other nodes
  // are alive, the outbox looks for them every second.
  const watchOtherNodes = async () => {
    const others = await otherNodesAlive(store, owner, clock.now(), config.gateway.leaseTtlMs);
    outbox.pollOthers(others ? OTHERS_POLL_MS : undefined);
  };
  const sweep = async () => {
    await takeOver({ store, clock, logger, metrics });
    if (intake.on) await scheduleClaimable({ store, clock, scheduler, owner, lanes });
  };
  // A session another node holds is taken over the moment that node's lease runs out.
  const heldSessions = new HeldSessionWatch({ store, clock, logger, sweep });
  const leases = new SessionLeases({
    ...leaseBase,
    onLost: (sessionKey) => lanes.abortRunning(sessionKey, "evicted"),
    onRenewed: (stillHeld, until) => resources.renewed(stillHeld, until),
    onSweep: async () => {
      await watchOtherNodes();
      await sweep();
    },
  });
  const turns = new TurnRunner({
    store,
    session: agent.session,
    router: models,
    channelFor: channels.channelFor,
    events,
    leases,
    onHeldElsewhere: (sessionKey) => heldSessions.held(sessionKey),
    progressTimeoutMs: config.agent.progressTimeoutMs,
    clock,
    logger: logger.child({ name: "harness.run" }),
    metrics,
  });
  capabilities.attach({ turns, events });
  const intake = new IntakeSwitch();
  const scheduler = new TurnScheduler({
    lanes,
    turns,
    store,
    queueMode: config.session.queueMode,
    logger: logger.child({ name: "gateway.lanes" }),
    isAccepting: () => intake.on,
  });

  const server = new GatewayHttpServer({
    host: config.gateway.host,
    port: options.port ?? config.gateway.port,
    logger: logger.child({ name: "gateway.http" }),
    errorStatus: gatewayErrorStatus,
    ...(config.gateway.auth.token ? { authToken: config.gateway.auth.token } : {}),
  });
  const access = await createChannels(options.channelModules ?? defaultChannelModules, config, channels, {
    agentId: config.agent.id,
    server,
    workspaceDir,
    commands: commandList(capabilities.commands()),
    answers: waiters,
    pairing: store.pairing,
    previews: store.previews,
    leaseRemainingMs: (name) => resources.remainingMs(name),
    lastTaken: (channel, accountId, since) => store.inbox.lastPerChat(channel, accountId, since, 5_000),
    signals: { reconnected: (channel, accountId) => metrics.channelReconnects.inc({ channel, accountId }) },
    clock,
    logger,
  });
  const router = new Router({
    agentId: config.agent.id,
    dmScope: config.session.dmScope,
    store,
    access,
    scheduler,
    channels,
    commands: {
      store,
      lanes,
      clock,
      modelRef: config.agent.model,
      simulated: models.simulated,
      models,
      usage,
      extra: capabilities.commands(),
      stopMore: (sessionKey) => capabilities.stopSession(sessionKey),
      compact: (sessionKey) => agent.compactor.request(sessionKey),
    },
    ...(tasks ? { questions: tasks } : {}),
    events,
    isAccepting: () => intake.on,
    clock,
    logger: logger.child({ name: "gateway.router" }),
    metrics,
  });
  const gateway = new Gateway({
    intake,
    sink: router,
    channels,
    lanes,
    outbox,
    waiters,
    events,
    store,
    router,
    scheduler,
    clock,
    logger: logger.child({ name: "gateway.router" }),
    metrics,
  });
  // Recovery may already schedule turns: a failed start aborts them before the store closes.
  onOpened("gateway", () => gateway.shutdown(1));

  // What the status route and the control page both read.
  const live = {
    store,
    lanes,
    pool,
    gateway,
    channels,
    clock,
    model: config.agent.model,
    provider: models.primary.provider,
    simulated: models.simulated,
    usage,
    authProfiles: models.authProfiles,
    ...(heartbeat ? { heartbeat: () => heartbeat.status() } : {}),
  };
  serveGatewayRoutes(server, {
    gateway,
    metrics,
    status: {
      ...live,
      maxConcurrent: config.lanes.maxConcurrent,
      workspaceDir,
      node: { owner, leaseTtlMs: config.gateway.leaseTtlMs },
    },
  });
  serveControlPage(server, config, options, {
    ...live,
    kickScheduler: () => cron?.scheduler()?.tick(),
    stopMore: (sessionKey) => capabilities.stopSession(sessionKey),
    events,
    onLaneEvent,
    logger: logger.child({ name: "gateway.admin" }),
  });

  // This process is an owner before it takes any lease, and a dead one's leases end now; then
  // recovery, before anything can write the inbox; then intake; then replies go out.
  const ownership = await claimOwnership({
    store,
    owner,
    clock,
    logger: logger.child({ name: "gateway.leases" }),
    ...(options.identity ? { identity: options.identity } : {}),
    ...(options.liveness ? { liveness: options.liveness } : {}),
  });
  onOpened("owner record", () => store.leases.retireOwner(owner, clock.now()));
  // A dead gateway's model-call permits are free now too, not only once their lease lapses.
  if (permits) for (const dead of ownership.retired) await store.permits.releaseOwner(dead);
  const recovered = await gateway.recover();
  // The turns recovery scheduled call the model at once: its SDK loads now, so their calls go out
  // while the channels start rather than after a platform SDK's synchronous load.
  if (recovered.sessions > 0) await models.prepare();
  await server.listen();
  onOpened("http server", () => server.close());
  for (const channel of channels.list()) {
    onOpened(`channel ${channel.name}:${channel.accountId}`, () => channel.stop());
    if (!channel.exclusive) {
      await channel.start(router);
      continue;
    }
    // Only the node holding the connection's lease runs it (and sends its replies).
    await resources.want(channel.exclusive, {
      start: async () => {
        channels.setHeld(channel, true);
        await channel.start(router);
        // A takeover: the dead holder's unsent replies are this node's to send now.
        if (gateway.ready) outbox.kick();
      },
      stop: async () => {
        channels.setHeld(channel, false);
        await channel.stop();
      },
    });
  }
  gateway.open();
  await watchOtherNodes();
  leases.start();
  onOpened("session leases", () => {
    leases.stop();
    heldSessions.stop();
  });
  // Turn sources (heartbeat, cron) start last, once intake is open.
  await capabilities.start({ turns, events, resources });
  logger.info(
    {
      url: server.url,
      model: config.agent.model,
      simulated: models.simulated,
      home: options.home,
      config: options.configFile ?? "(defaults)",
      startupMs: Math.round(performance.now() - startedAt),
      ...recovered,
      ...(ownership.retired.length > 0 ? { retiredOwners: ownership.retired.length } : {}),
    },
    "gateway ready",
  );

  let stopping: Promise<void> | undefined;
  return {
    url: server.url,
    owner,
    gateway,
    store,
    channels,
    simulated: models.simulated,
    models,
    simulatorUrl: simulator?.url,
    workspaceDir,
    get heartbeat() {
      return heartbeat?.scheduler();
    },
    get cron() {
      return cron?.scheduler();
    },
    stop: () => {
      stopping ??= shutdown({
        ...{ owner, capabilities, gateway, leases, heldSessions, resources, permits, channels, server },
        ...{ simulator, models, store, clock, logger, drainTimeoutMs: config.gateway.drainTimeoutMs },
      });
      return stopping;
    },
  };
}
