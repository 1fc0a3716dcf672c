/**
 * Runs the gateway as a child process (from source, through tsx) so tests can SIGKILL it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `switchyard gateway` and resolves once it prints its URL (after recovery: it is ready). */
export async function spawnGateway(args: string[], env: NodeJS.ProcessEnv = {}): Promise<GatewayProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "test/helpers/cli-entry.ts", "gateway", ...args],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start in 20 s:\n${out}`)), 20_000);
    child.stderr?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before starting:\n${out}`));
    });
  });
  return {
    child,
    url,
    output: () => out,
    kill: (signal = "SIGKILL") =>
      new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode);
        child.once("exit", (code) => done(code));
        child.kill(signal);
      }),
  };
}
