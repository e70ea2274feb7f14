/**
 * `SandboxPool` (SPEC "SDK operations"): hot slots of launched sandboxes without gateways and without
 * a handle; `take` opens a handle on one and its gateways then, so a slot never carries secrets before
 * it is taken. Slots are launched by the lifecycle module and handles opened by `Sandbox[openHandle]`,
 * never through `Sandbox.create`: `Sandbox.create({ pool })` calls `take`, and nothing here calls back.
 */
import { z } from 'zod';
import { httpUrlSchema, parseOptions } from '../rules/parse-options.js';
import { prepareAgentSchema } from '../protocol/agent-wire.js';
import { DaemonClient } from './daemon-client.js';
import { PoolConfig } from './pool-config.js';
import { Sandbox, openHandle } from './sandbox.js';
import { endLaunched, launchSandbox, type LaunchedSandbox } from './sandbox-lifecycle.js';
import { resolveSandboxOptions, type ResolvedSandboxOptions } from './sandbox-options.js';
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
  /** What every slot is created with; a taken handle reincarnates with these and its gateways. */
  readonly #createOptions: { template: string; allowInternetAccess: boolean; controlPlaneUrl?: string };
  /** The same with every default applied: what a slot is launched with. */
  readonly #launchOptions: ResolvedSandboxOptions;
  readonly #slots: LaunchedSandbox[] = [];
  #filling = 0;
  #closed = false;

  constructor(config: PoolConfig, options: z.input<typeof poolOptions> = {}) {
    this.config = parseOptions(
      z.instanceof(PoolConfig, { message: 'must be a PoolConfig' }),
      config,
      'SandboxPool',
      ['config'],
    );
    const { controlPlaneUrl } = parseOptions(poolOptions, options, 'SandboxPool');
    this.#createOptions = {
      template: this.config.template,
      allowInternetAccess: this.config.allowInternetAccess,
      ...(controlPlaneUrl === undefined ? {} : { controlPlaneUrl }),
    };
    this.#launchOptions = resolveSandboxOptions(this.#createOptions);
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
    const slot = this.#slots.shift() ?? (await launchSandbox(this.#launchOptions));
    this.#fill();
    const secretCache = o.secretCache ?? new SecretCache();
    const withGateways = Object.keys(o.gateways).length > 0;
    return Sandbox[openHandle](slot, {
      creating: {
        gateways: o.gateways,
        secretCache,
        createdWith: withGateways
          ? { ...this.#createOptions, gateways: o.gateways, secretCache }
          : this.#createOptions,
      },
      keepOnFailure: o.keepOnFailure,
    });
  }

  /** Stops refilling and ends every hot slot not taken. */
  async close(): Promise<void> {
    this.#closed = true;
    const slots = this.#slots.splice(0);
    await Promise.all(slots.map((slot) => endLaunched(slot).catch(() => undefined)));
  }

  /**
   * The config's warm-up, before the slot is handed out: sandboxd's `prepare` reads the runtime into the
   * page cache (a slot has no gateways and no agent configuration yet, so no runtime is started ahead).
   * A failed warm-up leaves a cold slot, never none.
   */
  async #warmUp(slot: LaunchedSandbox): Promise<void> {
    const { warmup } = this.config;
    if (warmup === undefined) return;
    const client = new DaemonClient({ url: slot.daemonUrl, accessToken: slot.accessToken });
    await client
      .call('POST', '/v1/agent/prepare', z.object({}), prepareAgentSchema.parse({ runtime: warmup.runtime }))
      .catch(() => undefined);
  }

  #fill(): void {
    while (!this.#closed && this.#slots.length + this.#filling < this.config.size) {
      this.#filling++;
      launchSandbox(this.#launchOptions)
        .then(
          async (slot) => {
            await this.#warmUp(slot);
            if (this.#closed) await endLaunched(slot).catch(() => undefined);
            else this.#slots.push(slot);
          },
          () => undefined, // a failed launch leaves the slot empty; the next take refills
        )
        .finally(() => this.#filling--);
    }
  }
}
