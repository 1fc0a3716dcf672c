/**
 * Per-session routing memory: the auth profile that last answered each provider (kept while it
 * is healthy, for prompt-cache locality), where in the model chain the session is (after a
 * fallback, until the primary is due again), and the model that last answered (so a model that
 * takes over is told). In memory, bounded (least recently used sessions are forgotten): losing
 * it costs one cache miss and a note, never a wrong answer.
 */
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";

/** One model of the chain. */
export interface RouteEntry {
  /** `provider/model`. */
  ref: string;
  provider: string;
  model: string;
}

/** What the router remembers of one session. */
export interface SessionRoute {
  /** The profile that last answered, per provider. */
  pins: Map<string, string>;
  /** Index in the chain the session is on (0: the primary), and since when. */
  index: number;
  since: number;
  /** The model that last answered in this session. */
  lastRef: string | undefined;
}

const MAX_SESSIONS = 10_000;

/** Options of {@link SessionRoutes}. */
export interface SessionRoutesOptions {
  chain: readonly RouteEntry[];
  fallbackRetryPrimaryMs: number;
  clock: Clock;
  logger?: Logger | undefined;
}

/** Owns the routing memory of every session (see the file header). */
export class SessionRoutes {
  readonly #routes = new Map<string, SessionRoute>();
  readonly #o: SessionRoutesOptions;

  constructor(options: SessionRoutesOptions) {
    this.#o = options;
  }

  /** The session's memory (created empty), marked recently used. */
  get(sessionKey: string): SessionRoute {
    let route = this.#routes.get(sessionKey);
    if (route) {
      // The map's insertion order is the eviction order: recently used goes last.
      this.#routes.delete(sessionKey);
      this.#routes.set(sessionKey, route);
      return route;
    }
    route = { pins: new Map(), index: 0, since: 0, lastRef: undefined };
    if (this.#routes.size >= MAX_SESSIONS) {
      const oldest = this.#routes.keys().next().value;
      if (oldest !== undefined) this.#routes.delete(oldest);
    }
    this.#routes.set(sessionKey, route);
    return route;
  }

  /** The session's memory if it has any (not marked used). */
  peek(sessionKey: string): SessionRoute | undefined {
    return this.#routes.get(sessionKey);
  }

  /** The chain as the session should try it now: from its fallback, or from the primary again. */
  entries(route: SessionRoute | undefined): RouteEntry[] {
    const chain = [...this.#o.chain];
    if (!route || route.index === 0) return chain;
    if (this.#o.clock.now() - route.since >= this.#o.fallbackRetryPrimaryMs) {
      route.index = 0;
      return chain;
    }
    return chain.slice(route.index);
  }

  /** `entry` answered with `profileId`: pin it, and move the session along the chain. */
  answered(
    route: SessionRoute,
    sessionKey: string,
    entry: RouteEntry,
    profileId: string,
    strict: boolean,
  ): void {
    route.pins.set(entry.provider, profileId);
    route.lastRef = entry.ref;
    if (strict) return;
    const index = this.#o.chain.findIndex((e) => e.ref === entry.ref);
    if (index > 0 && index !== route.index) {
      route.index = index;
      route.since = this.#o.clock.now();
      this.#o.logger?.warn({ session: sessionKey, model: entry.ref }, "session moved to a fallback model");
    } else if (index === 0) route.index = 0;
  }
}
