/**
 * The seam between the harness and the providers: the harness asks for a model call, the router
 * decides who answers it. Today there is one route: one provider (already wrapped in its retry
 * policy), one model, one auth profile. Auth-profile rotation, cooldowns and fallback chains
 * plug in here, so the harness never knows which key or model answered: the stream says so
 * with an `attempt` event before every attempt, and the run record is built from those events.
 */
import type { Logger } from "../../util/logger.js";
import type { ModelRequest, ProviderEvent } from "./types.js";
import type { ModelProvider } from "./types.js";

/** A model call as the harness makes it: no model name (the router's choice). */
export type ModelCall = Omit<ModelRequest, "model">;

/** What the harness calls models through. */
export interface ModelAccess {
  /** True when the built-in simulator answers (no real model). */
  readonly simulated: boolean;
  /** The ProviderEvent contract, with an `attempt` event before each attempt. Never throws. */
  stream(call: ModelCall, signal: AbortSignal): AsyncIterable<ProviderEvent>;
}

/** Options of {@link ModelRouter}. */
export interface ModelRouterOptions {
  /** The provider that answers (with its retries). */
  provider: ModelProvider;
  /** The vendor's model name. */
  model: string;
  /** The auth profile the provider's key belongs to; default "default". */
  profileId?: string;
  logger?: Logger;
}

/** Owns the choice of provider, model and auth profile for every model call. */
export class ModelRouter implements ModelAccess {
  readonly simulated: boolean;
  readonly #o: Required<Omit<ModelRouterOptions, "logger">>;

  constructor(options: ModelRouterOptions) {
    if (options.model === "")
      throw new TypeError("ModelRouter.model: got an empty string, expected a model name");
    this.#o = { profileId: "default", ...options };
    this.simulated = options.provider.simulated;
  }

  /** The provider and model a call goes to first (for status lines). */
  get primary(): { provider: string; model: string; profileId: string } {
    return { provider: this.#o.provider.id, model: this.#o.model, profileId: this.#o.profileId };
  }

  async *stream(call: ModelCall, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    const { provider, model, profileId } = this.#o;
    const attempt = (n: number): ProviderEvent => ({
      type: "attempt",
      provider: provider.id,
      model,
      profileId,
      attempt: n,
    });
    yield attempt(1);
    for await (const event of provider.stream({ ...call, model }, signal)) {
      yield event;
      // A retry announces its next attempt; say who makes it, before it starts.
      if (event.type === "retry_resume") yield attempt(event.attempt);
    }
  }
}
