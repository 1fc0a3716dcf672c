/**
 * The capability port: what one agent capability (heartbeat, cron and wakes, memory,
 * assignments, exec, web, MCP, …) exports so the gateway can build, wire, start and stop it
 * without knowing its name — the counterpart of channels/types.ts's ChannelModule. A module's
 * settings are a fragment of the configuration (a `settings.ts` in its folder that
 * config/schema.ts places at its key); everything else reaches the gateway through the
 * Capability its `create` returns.
 */
import type { Config } from "../config/schema.js";
import type { ChannelDirectory } from "../gateway/channel-directory.js";
import type { ExtraCommand } from "../gateway/commands.js";
import type { GatewayEvents } from "../gateway/events.js";
import type { LaneQueue } from "../gateway/lanes/lane-queue.js";
import type { GatewayMetrics } from "../gateway/metrics.js";
import type { TurnRunner } from "../gateway/turn-runner.js";
import type { ResourceLeases } from "../gateway/resource-leases.js";
import type { TurnHooks } from "../harness/hooks.js";
import type { UsageMeter } from "../harness/models/usage-meter.js";
import type { ToolSource } from "../harness/tools/tool-source.js";
import type { Tool } from "../harness/tools/types.js";
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";

/** What a capability is built with: the gateway's state, before the agent and the turns exist. */
export interface CapabilityContext {
  config: Config;
  /** The gateway's environment (a capability that runs commands scrubs it). */
  env: NodeJS.ProcessEnv;
  /** The gateway's home folder (state, caches). */
  home: string;
  workspaceDir: string;
  store: Store;
  channels: ChannelDirectory;
  lanes: LaneQueue;
  metrics: GatewayMetrics;
  usage: UsageMeter;
  clock: Clock;
  logger: Logger;
  /**
   * Another capability built before this one, by module name (registry order): how cron reaches
   * assignments' wakes. Undefined when that module is absent or disabled.
   */
  capability<T extends Capability = Capability>(name: string): T | undefined;
}

/** The turn machinery, handed to capabilities once it exists (before intake opens). */
export interface CapabilityRuntime {
  turns: TurnRunner;
  events: GatewayEvents;
  /** Duties one node of a cluster runs at a time (the heartbeat): run them under a resource lease. */
  resources?: ResourceLeases;
}

/** A built capability: what it adds to every turn and what it runs in the background. */
export interface Capability {
  /** Tools offered to every turn (the tool policy still decides per turn). */
  readonly tools?: readonly Tool[];
  /** Tools that come and go at run time (an MCP server's), looked up on every turn. */
  readonly toolSources?: readonly ToolSource[];
  /** Hooks every turn runs, after the harness's own (compaction, loop detection). */
  readonly hooks?: readonly TurnHooks[];
  /** Chat commands it answers (`/task`): the router's, in /help and the platforms' command lists. */
  readonly commands?: readonly ExtraCommand[];
  /**
   * `/stop` in a session: stops what the capability runs for it (a chat's helpers) and returns
   * a phrase for the reply ("and 3 helpers"), or undefined when it stopped nothing.
   */
  stopSession?(sessionKey: string): Promise<string | undefined>;
  /** Receives the turn machinery once it exists; before `start`. */

  attach?(runtime: CapabilityRuntime): void;
  /** Starts its background work (turn sources: beats, jobs) once intake is open. */
  start?(runtime: CapabilityRuntime): void | Promise<void>;
  /**
   * Stops starting new work (beats, jobs): the first step of a shutdown, before the lanes drain,
   * so nothing new is queued behind the turns that are finishing.
   */
  quiesce?(): void;
  /**
   * Ends what it still runs (commands, servers) and closes what it opened. Called at shutdown
   * after the lanes drained, and on a failed start; must not throw for something already gone.
   */
  stop?(): void | Promise<void>;
}

/** One capability: a folder exporting this, and a line in capabilities/registry.ts. */
export interface CapabilityModule<C extends Capability = Capability> {
  /** Its name: logs, `capability(name)` lookups, doctor. */
  readonly name: string;
  /** Whether the configuration turns it on (absent: always). A disabled module is not built. */
  enabled?(config: Config): boolean;
  create(ctx: CapabilityContext): C | Promise<C>;
}
