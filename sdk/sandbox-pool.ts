/**
 * `SandboxPool` (SPEC "SDK operations"): hot slots of launched sandboxes without gateways; `take`
 * hands one over and opens its gateways then, so a slot never carries secrets before it is taken.
 */
import { z } from 'zod';
import { httpUrlSchema, parseOptions } from '../rules/parse-options.js';
import { PoolConfig } from './pool-config.js';
import { Sandbox } from './sandbox.js';
import { gatewayMapSchema } from './secret-gateway.js';
import { SecretCache } from './secret-store/secret-cache.js';

const poolOptions = z.strictObject({
  controlPlaneUrl: httpUrlSchema.optional(),
});

const takeOptions = z.strictObject({
  gateways: gatewayMapSchema.default({}),
  secretCache: z.instanceof(SecretCache, { message: 'must be a SecretCache' }).optional(),
  keepOnFailure: z.boolean().default(false),
});

/** Options of `pool.take`. */
export type PoolTakeOptions = z.input<typeof takeOptions>;

/**
 * A pool of hot sandboxes.
 *
 * @example
 * ```ts
 * const pool = new SandboxPool(new PoolConfig({ size: 4, template: 'sdk-base-caps', allowInternetAccess: false }));
 * const sbx = await pool.take({ gateways: { llm } });
 * ```
 */
export class SandboxPool {
  readonly config: PoolConfig;
  readonly #controlPlaneUrl: string | undefined;
  readonly #slots: Sandbox[] = [];
  #filling = 0;
  #closed = false;

  constructor(config: PoolConfig, options: z.input<typeof poolOptions> = {}) {
    this.config = parseOptions(
      z.instanceof(PoolConfig, { message: 'must be a PoolConfig' }),
      config,
      'SandboxPool',
      ['config'],
    );
    this.#controlPlaneUrl = parseOptions(poolOptions, options, 'SandboxPool').controlPlaneUrl;
    this.#fill();
  }

  /** Hot slots ready now. */
  get ready(): number {
    return this.#slots.length;
  }

  /**
   * Hands over a hot slot (or a new sandbox when none is ready) and opens `gateways` on it.
   *
   * @throws InvalidArgumentError for malformed options, before any call
   * @throws SecretNotFoundError / SandboxError as `Sandbox.create` does; the sandbox is then ended unless keepOnFailure
   */
  async take(options: PoolTakeOptions = {}): Promise<Sandbox> {
    const o = parseOptions(takeOptions, options, 'pool.take');
    const sbx = this.#slots.shift() ?? (await this.#launch());
    this.#fill();
    if (Object.keys(o.gateways).length === 0) return sbx;
    const cache = o.secretCache ?? new SecretCache();
    try {
      await sbx.openGateways(o.gateways, cache, {
        ...this.#createOptions(),
        gateways: o.gateways,
        secretCache: cache,
      });
    } catch (error) {
      if (!o.keepOnFailure) await sbx.kill().catch(() => undefined);
      throw error;
    }
    return sbx;
  }

  /** Stops refilling and ends every hot slot not taken. */
  async close(): Promise<void> {
    this.#closed = true;
    const slots = this.#slots.splice(0);
    await Promise.all(slots.map((sbx) => sbx.kill().catch(() => undefined)));
  }

  #createOptions() {
    return {
      template: this.config.template,
      allowInternetAccess: this.config.allowInternetAccess,
      ...(this.#controlPlaneUrl === undefined ? {} : { controlPlaneUrl: this.#controlPlaneUrl }),
    };
  }

  #launch(): Promise<Sandbox> {
    return Sandbox.create(this.#createOptions());
  }

  #fill(): void {
    while (!this.#closed && this.#slots.length + this.#filling < this.config.size) {
      this.#filling++;
      this.#launch()
        .then(
          async (sbx) => {
            if (this.#closed) await sbx.kill().catch(() => undefined);
            else this.#slots.push(sbx);
          },
          () => undefined, // a failed launch leaves the slot empty; the next take refills
        )
        .finally(() => this.#filling--);
    }
  }
}
