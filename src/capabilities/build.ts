/**
 * Builds the enabled capability modules in registry order and gathers what they add: tools,
 * tool sources and hooks for the agent; attach, start and stop for the gateway's lifecycle.
 */
import type { ExtraCommand } from "../gateway/commands.js";
import type { TurnHooks } from "../harness/hooks.js";
import type { ToolSource } from "../harness/tools/tool-source.js";
import type { Tool } from "../harness/tools/types.js";
import type { Capability, CapabilityContext, CapabilityModule, CapabilityRuntime } from "./types.js";

/** The built capabilities of one gateway, by module name, in build order. */
export class Capabilities {
  readonly #built: ReadonlyArray<{ name: string; capability: Capability }>;

  constructor(built: ReadonlyArray<{ name: string; capability: Capability }>) {
    this.#built = built;
  }

  /** The names of the built (enabled) capabilities, in build order. */
  names(): string[] {
    return this.#built.map((b) => b.name);
  }

  /** One capability by module name; undefined when absent or disabled. */
  get<T extends Capability = Capability>(name: string): T | undefined {
    return this.#built.find((b) => b.name === name)?.capability as T | undefined;
  }

  /** Every capability's tools, in build order. */
  tools(): Tool[] {
    return this.#built.flatMap((b) => b.capability.tools ?? []);
  }

  /** Every capability's run-time tool sources. */
  toolSources(): ToolSource[] {
    return this.#built.flatMap((b) => b.capability.toolSources ?? []);
  }

  /** Every capability's chat commands, in build order. */
  commands(): ExtraCommand[] {
    return this.#built.flatMap((b) => b.capability.commands ?? []);
  }

  /** Every capability's turn hooks, in build order. */
  hooks(): TurnHooks[] {
    return this.#built.flatMap((b) => b.capability.hooks ?? []);
  }

  /** `/stop` of a session: every capability's phrase for what it stopped too (Capability.stopSession). */
  async stopSession(sessionKey: string): Promise<string[]> {
    const said: string[] = [];
    for (const { capability } of this.#built) {
      const phrase = await capability.stopSession?.(sessionKey);
      if (phrase) said.push(phrase);
    }
    return said;
  }

  /** Hands the turn machinery to every capability, in build order. */
  attach(runtime: CapabilityRuntime): void {
    for (const { capability } of this.#built) capability.attach?.(runtime);
  }

  /** Starts every capability's background work, in build order. */
  async start(runtime: CapabilityRuntime): Promise<void> {
    for (const { capability } of this.#built) await capability.start?.(runtime);
  }

  /** Stops every capability's background work from starting anything new. */
  quiesce(): void {
    for (const { capability } of this.#built) capability.quiesce?.();
  }

  /**
   * Stops every capability, last built first. One that fails to stop is reported to `onError`
   * and the others still stop.
   */
  async stop(onError: (name: string, err: unknown) => void): Promise<void> {
    for (const { name, capability } of [...this.#built].reverse()) {
      try {
        await capability.stop?.();
      } catch (err) {
        onError(name, err);
      }
    }
  }
}

/**
 * Builds each enabled module with `ctx` (plus lookups of those built before it), in order. A
 * module that throws (a ConfigError) stops the build; `onBuilt` has been told of the ones before
 * it, so a failed start can stop them.
 */
export async function buildCapabilities(
  modules: readonly CapabilityModule[],
  ctx: Omit<CapabilityContext, "capability">,
  onBuilt: (name: string, capability: Capability) => void = () => {},
): Promise<Capabilities> {
  const built: Array<{ name: string; capability: Capability }> = [];
  const lookup = <T extends Capability>(name: string): T | undefined =>
    built.find((b) => b.name === name)?.capability as T | undefined;
  const seen = new Set<string>();
  for (const module of modules) {
    if (seen.has(module.name)) throw new Error(`capability module "${module.name}" is listed twice`);
    seen.add(module.name);
    if (module.enabled && !module.enabled(ctx.config)) continue;
    const capability = await module.create({ ...ctx, capability: lookup });
    built.push({ name: module.name, capability });
    onBuilt(module.name, capability);
  }
  return new Capabilities(built);
}
