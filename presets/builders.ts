/**
 * Preset routes (SPEC "Provider preset catalogue" and preset rules 1-6): each preset checks its options
 * and returns its vendor's upstream, header name and POST paths from the catalogue row, and what it
 * implies for an `AgentModel`. The SDK adds the secret and makes the `SecretGateway`
 * (`sdk/preset-gateways.ts`). Building one makes no network call and loads no optional dependency.
 */
import { z } from 'zod';
import { basePathProblem } from '../rules/request-path.js';
import { parseUpstream } from '../rules/upstream.js';
import { LIMITS } from '../rules/limits.js';
import { REGION } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';
import { ratePerMinuteSchema } from '../rules/rate-per-minute.js';
import { loadCatalogue, type PresetKey } from './catalogue.js';

/** What a preset builder records about the gateway it made (used to check an `AgentModel` against it). */
export interface PresetBinding {
  /** Preset key in the catalogue, such as `vendor_d`. */
  readonly preset: string;
  /** The `AgentModel.provider` this gateway serves. */
  readonly provider: string;
  /** The `AgentModel.basePath` the preset implies (`compatible` only; empty otherwise). */
  readonly basePath: string;
  /** Model ids the gateway restricts to, for presets with the model in the path. */
  readonly models: readonly string[] | undefined;
}

/** One preset's route: a `SecretGateway`'s options but the secret, which the SDK adds. */
export interface PresetRoute {
  /** The upstream, as the catalogue row fills it in (checked again by `SecretGateway`). */
  readonly upstream: string;
  /** Name of the one header the gateway injects. */
  readonly header: string;
  /** The allowed (METHOD, path) pairs. */
  readonly allow: readonly (readonly [method: string, path: string])[];
  /** As given: 0 means the default. */
  readonly ratePerMinute: number;
  /** What the preset implies for an `AgentModel`. */
  readonly binding: PresetBinding;
}

/** A preset: the name of its public builder and its route from the builder's options. */
export interface Preset<Options extends unknown[]> {
  /** The builder's name in the SDK, first word of its error messages (`vendorAGateway`). */
  readonly name: string;
  /** Checks the options (`InvalidArgumentError` naming the field) and returns the route. */
  readonly route: (...options: Options) => PresetRoute;
}

interface PresetParams {
  readonly region?: string;
  readonly models?: readonly string[];
  readonly resource?: string;
  readonly upstream?: string;
  readonly basePath?: string;
  readonly ratePerMinute: number;
}

function fill(template: string, params: PresetParams, model?: string): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = name === 'model' ? model : params[name as keyof PresetParams];
    return typeof value === 'string' ? value : '';
  });
}

/** The route of one catalogue row; options were checked by the caller. */
function presetRoute(key: PresetKey, params: PresetParams): PresetRoute {
  const catalogue = loadCatalogue();
  const entry = catalogue.presets[key];
  const withDefaults: PresetParams = { basePath: entry.defaults?.basePath ?? '', ...params };
  const paths = entry.paths.flatMap((template) => {
    if (!template.includes('{model}')) return [fill(template, withDefaults)];
    // Clients percent-encode path labels (':' becomes %3A); the gateway never normalizes, so allow both.
    return (withDefaults.models ?? []).flatMap((model) => [
      ...new Set([
        fill(template, withDefaults, model),
        fill(template, withDefaults, encodeURIComponent(model)),
      ]),
    ]);
  });
  return {
    upstream: fill(entry.upstream, withDefaults),
    header: entry.header.name,
    allow: paths.map((path) => [catalogue.method, path] as const),
    ratePerMinute: withDefaults.ratePerMinute,
    binding: {
      preset: key,
      provider: entry.agentModel.provider,
      basePath: fill(entry.agentModel.basePath, withDefaults),
      models: withDefaults.models === undefined ? undefined : [...withDefaults.models],
    },
  };
}

const rate = z.strictObject({ ratePerMinute: ratePerMinuteSchema });

const secureUpstream = z.string().superRefine((text, ctx) => {
  const verdict = parseUpstream(text);
  if (!verdict.ok) ctx.addIssue({ code: 'custom', message: verdict.reason });
});

const basePath = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .superRefine((path, ctx) => {
      const problem = basePathProblem(path);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    });

/** Model ids for presets whose paths carry the model, within the 32-rule limit once expanded. */
function modelList(key: PresetKey, problem: (id: string) => string | undefined) {
  return z
    .array(z.string())
    .min(1, 'must list at least one model')
    .superRefine((ids, ctx) => {
      const entry = loadCatalogue().presets[key];
      const pattern = new RegExp(entry.modelPattern ?? '^.+$');
      ids.forEach((id, i) => {
        const message =
          problem(id) ?? (pattern.test(id) ? undefined : `model id must match ${pattern.source}`);
        if (message !== undefined) ctx.addIssue({ code: 'custom', path: [i], message });
      });
      const rules = [...new Set(ids)].reduce(
        (n, id) => n + entry.paths.length * (encodeURIComponent(id) === id ? 1 : 2),
        0,
      );
      if (rules > LIMITS.allowRulesPerRoute) {
        ctx.addIssue({
          code: 'custom',
          message: `too many models: they need ${rules} allow rules, at most ${LIMITS.allowRulesPerRoute}`,
        });
      }
    });
}

/** The options argument: optional exactly when every option is. */
type OptionsArg<T> = Partial<T> extends T ? [options?: T] : [options: T];

function preset<S extends z.ZodType<PresetParams>>(
  key: PresetKey,
  name: string,
  schema: S,
): Preset<OptionsArg<z.input<S>>> {
  return {
    name,
    route: (...[options]) => presetRoute(key, parseOptions(schema, options ?? {}, name)),
  };
}

const vendorAOptions = rate.extend({
  region: z.string().regex(REGION, 'must be a region such as us-east-1'),
  models: modelList('vendor_a', (id) => {
    if (id.startsWith('arn:')) return 'ARNs are unsupported: use a model or inference-profile id';
    if (id.includes('/') || id.includes('%')) return 'must not contain / or % (an encoded slash is rejected)';
    return undefined;
  }).transform((ids) => [...new Set(ids)]),
});

const vendorDOptions = rate.extend({
  models: modelList('vendor_d', (id) =>
    id.startsWith('models/') ? 'must not carry the models/ prefix' : undefined,
  ).transform((ids) => [...new Set(ids)]),
});

const vendorEOptions = rate.extend({
  resource: z
    .string()
    .regex(
      /^(?!-)[a-z0-9-]{1,63}(?<!-)$/,
      'must be 1-63 characters [a-z0-9-], no leading or trailing hyphen',
    ),
});

const vendorKOptions = rate.extend({ upstream: secureUpstream, basePath: basePath('/v1') });
const compatibleOptions = rate.extend({ upstream: secureUpstream, basePath: basePath('') });
const rateOnly = rate.partial().transform((o) => ({ ratePerMinute: o.ratePerMinute ?? 0 }));

/**
 * Every preset by catalogue key, each named after its builder (`sdk/preset-gateways.ts` documents them).
 *
 * @example
 * ```ts
 * PRESETS.vendor_b.route({ ratePerMinute: 120 }).allow; // [['POST', '/v1/messages']]
 * ```
 */
export const PRESETS = {
  vendor_a: preset('vendor_a', 'vendorAGateway', vendorAOptions),
  vendor_b: preset('vendor_b', 'vendorBGateway', rateOnly),
  compatible: preset('compatible', 'compatibleGateway', compatibleOptions),
  vendor_c: preset('vendor_c', 'vendorCGateway', rateOnly),
  vendor_d: preset('vendor_d', 'vendorDGateway', vendorDOptions),
  vendor_e: preset('vendor_e', 'vendorEGateway', vendorEOptions),
  vendor_f: preset('vendor_f', 'vendorFGateway', rateOnly),
  vendor_g: preset('vendor_g', 'vendorGGateway', rateOnly),
  vendor_h: preset('vendor_h', 'vendorHGateway', rateOnly),
  vendor_i: preset('vendor_i', 'vendorIGateway', rateOnly),
  vendor_j: preset('vendor_j', 'vendorJGateway', rateOnly),
  vendor_k: preset('vendor_k', 'vendorKGateway', vendorKOptions),
} as const satisfies Record<PresetKey, { readonly name: string }>;
