/** What starting the gateway takes, and what a started one offers (see src/main.ts). */
import type { LogTail } from "../admin/log-tail.js";
import type { ChannelModules } from "../channels/registry.js";
import type { CapabilityModule } from "../capabilities/types.js";
import type { Config } from "../config/schema.js";
import type { HeartbeatScheduler } from "../cron/heartbeat-scheduler.js";
import type { CronScheduler } from "../cron/scheduler.js";
import type { ChannelDirectory } from "../gateway/channel-directory.js";
import type { Gateway } from "../gateway/gateway.js";
import type { ModelRouter } from "../harness/models/model-router.js";
import type { ModelProvider } from "../harness/providers/types.js";
import type { Store } from "../store/types.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { Liveness, ProcessIdentity } from "../util/process-identity.js";
import type { SecretList } from "../util/redact.js";

/** Options of startGateway. */
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
  /** Seam: this process's identity as an owner of work (default: the real process). */
  identity?: ProcessIdentity;
  /** Seam: judges another owner's process (default: its state and start time in /proc). */
  liveness?: (other: ProcessIdentity) => Liveness;
  /** The channel modules; default the registry (a test adds its own this way). */
  channelModules?: ChannelModules;
  /** The capability modules; default the registry (a test adds its own this way). */
  capabilityModules?: readonly CapabilityModule[];
  /**
   * Seam: wraps the opened store (tests inject failures this way; a deployment could add
   * instrumentation). The gateway closes the store it gets back on stop.
   */
  wrapStore?: (store: Store) => Store;
  /** Recent log lines for the control page's Logs view (the logger's tap). */
  logTail?: LogTail;
  /** The built control page's folder; default the package's `dist/ui`. */
  uiDir?: string;
}

/** A started gateway. */
export interface RunningGateway {
  url: string;
  /** This process's instance id: the owner of its leases (in the store's owners, and the runtime file). */
  owner: string;
  gateway: Gateway;
  store: Store;
  channels: ChannelDirectory;
  simulated: boolean;
  simulatorUrl: string | undefined;
  workspaceDir: string;
  /** Who answers model calls: the chain, the auth profiles' health. */
  models: ModelRouter;
  /** The heartbeat clock, when `heartbeat.everyMs` is not 0 (`beat()` fires one now). */
  heartbeat: HeartbeatScheduler | undefined;
  /** The job scheduler, unless `cron.enabled` is false. */
  cron: CronScheduler | undefined;
  /** Graceful stop: intake off, drain, abort, close. */
  stop(): Promise<void>;
}
