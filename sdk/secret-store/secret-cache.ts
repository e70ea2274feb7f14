/**
 * `SecretCache` (SPEC "Secret store"): caches secret reads for a time-to-live, 5 minutes by default; a
 * hit makes no remote call. Values stay in private memory: nothing prints them.
 */
import { z } from 'zod';
import { parseOptions } from '../../rules/parse-options.js';
import { SecretRef } from '../secret-ref.js';
import type { SecretSource } from '../secret-gateway.js';
import { SecretStore } from './secret-store.js';

/** The default time-to-live of a cached secret. */
export const SECRET_CACHE_TTL_MS = 5 * 60_000;

const cacheOptions = z.strictObject({
  ttlMs: z.number().int().min(0).default(SECRET_CACHE_TTL_MS),
  /** The store bare names read from; `SecretRef`s with a region use a store of that region. */
  store: z.instanceof(SecretStore, { message: 'must be a SecretStore' }).optional(),
  /** Clock in milliseconds (tests). */
  now: z.custom<() => number>((v) => typeof v === 'function', { message: 'must be a function' }).optional(),
});

/** Options of `SecretCache`. */
export type SecretCacheOptions = z.input<typeof cacheOptions>;

interface Entry {
  readonly value: string;
  readonly expiresAt: number;
}

/**
 * A cache of secret values.
 *
 * @example
 * ```ts
 * const cache = new SecretCache({ ttlMs: 60_000, store: new SecretStore({ region: 'us-east-1' }) });
 * ```
 */
export class SecretCache {
  readonly ttlMs: number;
  readonly #store: SecretStore;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  readonly #regionStores = new Map<string, SecretStore>();

  constructor(options: SecretCacheOptions = {}) {
    const o = parseOptions(cacheOptions, options, 'SecretCache');
    this.ttlMs = o.ttlMs;
    this.#store = o.store ?? new SecretStore();
    this.#now = o.now ?? Date.now;
  }

  /** The value of a secret: from the cache while fresh, else read and cached. */
  async get(source: SecretSource): Promise<string> {
    const key = keyOf(source);
    const hit = this.#entries.get(key);
    if (hit !== undefined && hit.expiresAt > this.#now()) return hit.value;
    const value = await this.#storeFor(source).read(nameOf(source));
    this.#entries.set(key, { value, expiresAt: this.#now() + this.ttlMs });
    return value;
  }

  /** Drops these secrets, so the next `get` reads them again. */
  invalidate(sources: Iterable<SecretSource>): void {
    for (const source of sources) this.#entries.delete(keyOf(source));
  }

  #storeFor(source: SecretSource): SecretStore {
    if (
      !(source instanceof SecretRef) ||
      source.region === undefined ||
      source.region === this.#store.region
    ) {
      return this.#store;
    }
    let store = this.#regionStores.get(source.region);
    if (store === undefined) {
      store = new SecretStore({ region: source.region });
      this.#regionStores.set(source.region, store);
    }
    return store;
  }
}

const nameOf = (source: SecretSource): string => (source instanceof SecretRef ? source.name : source);
const keyOf = (source: SecretSource): string =>
  source instanceof SecretRef ? `${source.region ?? ''}\u0000${source.name}` : `\u0000${source}`;
