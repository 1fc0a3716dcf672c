/**
 * Gateway nodes of a test cluster as real processes: each node is the BUILT gateway
 * (test/chaos/gateway-runner.ts) on its own home folder and config file, restarted on the same
 * home after a SIGKILL. Every process (a node's life) gets a name, `n<node>-<life>`, that the
 * config can carry (e.g. in a Telegram `apiRoot`) so fakes can tell processes apart. What the
 * driver did to each process (SIGKILL, SIGSTOP, SIGCONT) is kept with its time.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type GatewayLife, GatewayRunner } from "../../chaos/gateway-runner.js";
import type { LifeSignals } from "./pollers.js";

/** Longest wait for a gateway to print "listening on", in ms. */
const LISTEN_MS = 60_000;

/** One node: a home folder and the process running on it now. */
export class ClusterNode {
  readonly index: number;
  readonly home: string;
  readonly #cwd: string;
  readonly #runner: GatewayRunner;
  readonly #config: (life: string) => string;
  readonly #signals: Map<string, LifeSignals>;
  #lives = 0;
  #life: GatewayLife | undefined;
  #name = "";
  #url: string | undefined;

  constructor(
    index: number,
    config: (life: string) => string,
    now: () => number,
    signals: Map<string, LifeSignals>,
  ) {
    this.index = index;
    this.home = mkdtempSync(join(tmpdir(), `sy-node${index}-`));
    this.#cwd = mkdtempSync(join(tmpdir(), "sy-node-cwd-"));
    this.#config = config;
    this.#signals = signals;
    this.#runner = new GatewayRunner({
      home: this.home,
      configPath: join(this.home, "switchyard.yaml"),
      cwd: this.#cwd,
      now,
      reapAtOnce: true,
    });
  }

  /** The running process's name (`n<node>-<life>`). */
  get name(): string {
    return this.#name;
  }

  /** Its HTTP base URL, once listening. */
  get url(): string {
    if (this.#url === undefined) throw new Error(`node ${this.index} is not listening`);
    return this.#url;
  }

  /** True while a process of this node runs (even stopped). */
  get alive(): boolean {
    return this.#life !== undefined && this.#life.exitStatus === undefined;
  }

  /** Starts a new process on the home (writing its config first); resolves once it listens. */
  async start(): Promise<void> {
    this.#name = `n${this.index}-${this.#lives++}`;
    this.#signals.set(this.#name, { stopped: [] });
    writeFileSync(join(this.home, "switchyard.yaml"), this.#config(this.#name));
    const life = this.#runner.spawn();
    this.#life = life;
    this.#url = undefined;
    await life.listening(LISTEN_MS);
    const m = /listening on (http:\/\/[^\s"]+)/.exec(life.stderrTail());
    if (!m) throw new Error(`node ${this.index}: no URL in its output:\n${life.stderrTail()}`);
    this.#url = (m[1] as string).replace(/\/+$/, "");
  }

  /** SIGKILL, noted at `atMs`; resolves once the process is dead. */
  async kill(atMs: number): Promise<void> {
    const life = this.#life;
    if (!life) return;
    const signals = this.#signals.get(this.#name);
    if (signals) signals.killedAtMs = atMs;
    life.kill();
    await life.exited;
  }

  /** SIGSTOP now (noted at `atMs`). */
  stop(atMs: number): void {
    this.#signal("SIGSTOP");
    this.#signals.get(this.#name)?.stopped.push({ fromMs: atMs });
  }

  /** SIGCONT now (noted at `atMs`). */
  resume(atMs: number): void {
    const window = this.#signals.get(this.#name)?.stopped.at(-1);
    if (window) window.toMs = atMs;
    this.#signal("SIGCONT");
  }

  /** SIGTERM (SIGKILL after `timeoutMs`); resolves once it ended. */
  async terminate(timeoutMs = 20_000): Promise<void> {
    if (this.alive) await this.#life?.terminate(timeoutMs);
  }

  /** The running process's stderr tail. */
  stderrTail(): string {
    return this.#life?.stderrTail() ?? "";
  }

  /**
   * Deletes the node's home and working folder, once its processes are gone; kept when
   * CLUSTER_KEEP is set (their logs/switchyard.log tell what each life did).
   */
  removeFolders(): void {
    if (process.env.CLUSTER_KEEP) return;
    for (const dir of [this.home, this.#cwd]) rmSync(dir, { recursive: true, force: true });
  }

  /** SIGKILLs everything still running (synchronous: fit for an `exit` handler). */
  killAll(): void {
    const pid = this.#life?.pid;
    if (pid !== undefined && this.alive) tryKill(pid, "SIGCONT");
    this.#runner.killAll();
  }

  #signal(name: NodeJS.Signals): void {
    const pid = this.#life?.pid;
    if (pid === undefined) throw new Error(`node ${this.index}: no pid to send ${name}`);
    process.kill(pid, name);
  }
}

function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}
