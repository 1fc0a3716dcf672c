/**
 * The gateway's state on disk: the home folder and the agent workspace (checked writable,
 * created owner-only, seeded from the template), and the store — SQLite in the home folder, or
 * PostgreSQL with `store.engine: postgres` — whose stored error texts are redacted with the
 * configured secrets.
 */
import { join } from "node:path";
import { ensureWritableFolder, workspaceDirOf } from "../config/home.js";
import type { Config } from "../config/schema.js";
import { defaultTemplateDir, seedWorkspace } from "../harness/memory/workspace.js";
import { openSqliteStore } from "../store/sqlite/open-sqlite-store.js";
import type { Store } from "../store/types.js";
import { type Clock, systemClock } from "../util/clock.js";
import { checkWorkspaceMarker } from "./workspace-marker.js";
import type { Logger } from "../util/logger.js";
import { type SecretList, redactSecrets } from "../util/redact.js";

/** What opening the state needs. */
export interface StateSetup {
  config: Config;
  home: string;
  logger: Logger;
  secrets?: SecretList;
  wrapStore?: (store: Store) => Store;
  /** For the workspace check's short wait (default the system clock). */
  clock?: Clock;
}

/** Checks and prepares the folders, then opens the store (registered for closing). */
export async function openState(
  options: StateSetup,
  onOpened: (what: string, close: () => unknown) => void,
): Promise<{ workspaceDir: string; store: Store }> {
  const { config, logger } = options;
  ensureWritableFolder(options.home, "home folder", "choose another with --home or SWITCHYARD_HOME");
  const workspaceDir = workspaceDirOf(config, options.home);
  ensureWritableFolder(workspaceDir, "workspace", "check agent.workspace in the config");
  const seeded = await seedWorkspace(defaultTemplateDir(), workspaceDir);
  if (seeded.created.length > 0)
    logger.info({ workspaceDir, files: seeded.created.length }, "workspace created from template");
  const redact = (text: string) => (options.secrets ? options.secrets.redact(text) : redactSecrets(text));
  const { store: settings } = config;
  const opened =
    settings.engine === "postgres" && settings.url !== undefined
      ? // Loaded only here: pg and the PostgreSQL store cost a SQLite gateway nothing.
        await (await import("../store/postgres/open-pg-store.js")).openPgStore({
          url: settings.url,
          poolSize: settings.poolSize,
          redact,
        })
      : openSqliteStore({
          path: join(options.home, "switchyard.db"),
          checkpointInWorker: true,
          logger: logger.child({ name: "store" }),
          redact,
        });
  const store = options.wrapStore ? options.wrapStore(opened) : opened;
  onOpened("store", () => store.close());
  // Nodes on several machines must all see one workspace folder.
  if (settings.engine === "postgres")
    await checkWorkspaceMarker(store, workspaceDir, options.clock ?? systemClock);
  return { workspaceDir, store };
}
