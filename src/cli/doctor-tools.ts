/**
 * `switchyard doctor`'s checks of the agent's tools: which sandbox the exec tool's commands run
 * in, and each MCP server started once with its tool count.
 */
import { existsSync } from "node:fs";
import type { Config } from "../config/schema.js";
import { chooseSandbox, describeSandbox } from "../harness/tools/exec/sandbox-choice.js";
import { ConfigError } from "../util/config-error.js";
import { systemClock } from "../util/clock.js";
import { silentLogger } from "../util/logger.js";

/** How a check came out. */
export type Verdict = "ok" | "warn" | "fail";

/** One line of doctor's report. */
export interface Check {
  verdict: Verdict;
  what: string;
  detail: string;
}

/**
 * Whether the exec tool is on and which sandbox its commands run in, and why: bwrap working is
 * ok, `auto` falling back to none is a warning, `bwrap` that cannot run fails (exec refuses).
 */
export async function checkExec(config: Config, env: NodeJS.ProcessEnv): Promise<Check> {
  const exec = config.tools.exec;
  if (!exec.enabled) return { verdict: "ok", what: "exec", detail: "off (tools.exec.enabled: false)" };
  const decision = await chooseSandbox(exec.sandbox, { pathEnv: env.PATH ?? "" });
  const verdict: Verdict =
    decision.type === "unavailable"
      ? "fail"
      : decision.type === "none" && exec.sandbox === "auto"
        ? "warn"
        : "ok";
  return { verdict, what: "exec", detail: `on; ${describeSandbox(decision, exec.network)}` };
}

/** Each MCP server started once (at most MCP_PROBE_TIMEOUT_MS each), ok with its tool count or failed with why. */
export async function checkMcp(
  config: Config,
  file: string | undefined,
  workspace: string,
  env: NodeJS.ProcessEnv,
): Promise<Check[]> {
  if (Object.keys(config.mcp.servers).length === 0) return [];
  const [{ mcpToolSources }, { MCP_PROBE_TIMEOUT_MS, probeMcpServers }] = await Promise.all([
    import("../capabilities/mcp/mcp-servers.js"),
    import("../capabilities/mcp/probe.js"),
  ]);
  let sources: ReturnType<typeof mcpToolSources>;
  try {
    sources = mcpToolSources({
      config,
      env,
      workspaceDir: existsSync(workspace) ? workspace : process.cwd(),
      clock: systemClock,
      logger: silentLogger(),
      restart: false,
      file,
    });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.issues.map((detail) => ({ verdict: "fail" as const, what: "mcp", detail }));
  }
  return (await probeMcpServers(sources, MCP_PROBE_TIMEOUT_MS)).map((r) => ({
    verdict: r.state === "running" ? ("ok" as const) : ("fail" as const),
    what: `mcp ${r.name}`,
    detail:
      r.state === "running"
        ? `${r.tools.length} tool${r.tools.length === 1 ? "" : "s"}${r.dropped.length > 0 ? ` (${r.dropped.length} dropped: ${r.dropped.map((d) => d.name).join(", ")})` : ""}`
        : `failed: ${r.reason ?? r.state}`,
  }));
}
