/**
 * Which sandbox a command runs in, decided from `tools.exec.sandbox` and the machine: `auto`
 * uses bubblewrap when `bwrap` is on PATH and works (probed once per binary by running
 * `bwrap --ro-bind / / true`: user namespaces may be off), else none; `bwrap` insists on it;
 * `none` never uses it. The exec tool and `doctor` read the same decision.
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** `tools.exec.sandbox`. */
export type SandboxMode = "auto" | "bwrap" | "none";

/**
 * What applies, and why in one line: commands run unsandboxed (`none`), in bwrap (`bwrap`,
 * with the binary's path), or not at all (`unavailable`: the mode is `bwrap` and it cannot run).
 */
export type SandboxDecision =
  | { type: "none"; why: string }
  | { type: "bwrap"; bwrapPath: string; why: string }
  | { type: "unavailable"; why: string };

/** How a probe of a bwrap binary went. */
export type BwrapProbe = { ok: true } | { ok: false; why: string };

/** What deciding needs; each seam defaults to the real thing. */
export interface SandboxChoiceOptions {
  /** PATH searched for `bwrap`. Default `process.env.PATH`. */
  pathEnv?: string;
  /** Tries a binary. Default probeBwrap (cached per path). */
  probe?: (bwrapPath: string) => Promise<BwrapProbe>;
}

/** Longest a probe may take. */
const PROBE_TIMEOUT_MS = 5_000;
const probes = new Map<string, Promise<BwrapProbe>>();

/**
 * Runs `<bwrapPath> --ro-bind / / true` once per path in this process (later calls share the
 * first result): ok when it exits 0 within 5 s; otherwise why, from its first line of stderr
 * (e.g. "No permissions to creating new namespace"). Never rejects.
 */
export function probeBwrap(bwrapPath: string): Promise<BwrapProbe> {
  let probe = probes.get(bwrapPath);
  if (probe === undefined) {
    probe = new Promise<BwrapProbe>((resolve) => {
      execFile(
        bwrapPath,
        ["--ro-bind", "/", "/", "true"],
        { timeout: PROBE_TIMEOUT_MS },
        (err, _out, stderr) => {
          if (err === null) return resolve({ ok: true });
          const line = String(stderr).trim().split("\n")[0];
          resolve({ ok: false, why: line || err.message.split("\n")[0] || "it failed" });
        },
      );
    });
    probes.set(bwrapPath, probe);
  }
  return probe;
}

/** The first executable `name` in the folders of `pathEnv`, or undefined. */
export function findOnPath(name: string, pathEnv: string | undefined): string | undefined {
  for (const dir of (pathEnv ?? "").split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Decides which sandbox applies for `mode` (see the file header). Never rejects. */
export async function chooseSandbox(
  mode: SandboxMode,
  options: SandboxChoiceOptions = {},
): Promise<SandboxDecision> {
  if (mode === "none") return { type: "none", why: "tools.exec.sandbox is none: commands run unsandboxed" };
  const bwrapPath = findOnPath("bwrap", options.pathEnv ?? process.env.PATH);
  if (bwrapPath === undefined) {
    const missing = "bwrap is not installed (install the bubblewrap package)";
    return mode === "auto"
      ? { type: "none", why: `${missing}; commands run unsandboxed` }
      : { type: "unavailable", why: `tools.exec.sandbox is bwrap, but ${missing}` };
  }
  const probe = await (options.probe ?? probeBwrap)(bwrapPath);
  if (!probe.ok) {
    const broken = `${bwrapPath} does not work here (${probe.why})`;
    return mode === "auto"
      ? { type: "none", why: `${broken}; commands run unsandboxed` }
      : { type: "unavailable", why: `tools.exec.sandbox is bwrap, but ${broken}` };
  }
  return {
    type: "bwrap",
    bwrapPath,
    why: `${bwrapPath} works (tools.exec.sandbox is ${mode}): system read-only, workspace writable, own /tmp`,
  };
}

/**
 * One line for `doctor`: `sandbox: bwrap (<why>), no network`, `sandbox: none (<why>)` or
 * `refuses every command: <why>`.
 */
export function describeSandbox(decision: SandboxDecision, network: boolean): string {
  if (decision.type === "unavailable") return `refuses every command: ${decision.why}`;
  if (decision.type === "none") return `sandbox: none (${decision.why})`;
  return `sandbox: bwrap (${decision.why}), ${network ? "network shared (tools.exec.network)" : "no network"}`;
}
