/**
 * A bounded map whose entries expire: least recently set entries are dropped past `maxEntries`,
 * and an entry older than `ttlMs` reads as absent. For lookups worth caching but not forever
 * (a Slack user's display name, the threads a bot answered in).
 */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, { value: V; at: number }>();
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: { maxEntries: number; ttlMs: number; now: () => number }) {
    if (!(options.maxEntries >= 1))
      throw new Error(`TtlCache: maxEntries must be ≥ 1, got ${options.maxEntries}`);
    this.#maxEntries = options.maxEntries;
    this.#ttlMs = options.ttlMs;
    this.#now = options.now;
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (this.#now() - entry.at > this.#ttlMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, at: this.#now() });
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
