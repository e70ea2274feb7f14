/**
 * Preset builders (SPEC "Provider preset catalogue" and preset rules 1-6): each returns a
 * `SecretGateway` restricted to its vendor's upstream, header and POST paths, from the catalogue row.
 * Building one makes no network call and loads no optional dependency.
 */
import { z } from 'zod';
import { parseUpstream } from '../gateway/upstream.js';
import { basePathProblem } from '../sdk/agent-model.js';
import { REGION } from '../sdk/secret-ref.js';
import {
  SecretGateway,
  ratePerMinuteSchema,
  secretSourceSchema,
  type SecretSource,
} from '../sdk/secret-gateway.js';
import { LIMITS } from '../spec/limits.js';
import { parseOptions } from '../spec/parse-options.js';
import { loadCatalogue, type PresetKey } from './catalogue.js';

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

/** Builds the gateway of one catalogue row; options were checked by the caller. */
function buildPreset(key: PresetKey, secret: SecretSource, params: PresetParams): SecretGateway {
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
  return new SecretGateway(
    {
      upstream: fill(entry.upstream, withDefaults),
      headers: { [entry.header.name]: secret },
      allow: paths.map((path) => [catalogue.method, path] as [string, string]),
      ratePerMinute: withDefaults.ratePerMinute,
    },
    {
      preset: key,
      provider: entry.agentModel.provider,
      basePath: fill(entry.agentModel.basePath, withDefaults),
      models: withDefaults.models === undefined ? undefined : [...withDefaults.models],
    },
  );
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

const secret = secretSourceSchema;

/** The options argument: optional exactly when every option is. */
type OptionsArg<T> = Partial<T> extends T ? [options?: T] : [options: T];

function preset<S extends z.ZodType<PresetParams>>(
  key: PresetKey,
  name: string,
  schema: S,
): (secretSource: SecretSource, ...options: OptionsArg<z.input<S>>) => SecretGateway {
  return (secretSource, ...[options]) => {
    const source = parseOptions(secret, secretSource, name, ['secret']);
    const params = parseOptions(schema, options ?? {}, name);
    return buildPreset(key, source, params);
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
 * vendor_a: region-dependent host, model id in the path; only the given models' converse paths.
 *
 * @example
 * ```ts
 * vendorAGateway('vendor-a-key', { region: 'us-east-1', models: ['vendor.model-v1:0'] });
 * ```
 */
export const vendorAGateway = preset('vendor_a', 'vendorAGateway', vendorAOptions);
/** vendor_b: messages API, bare key in `x-api-key`. */
export const vendorBGateway = preset('vendor_b', 'vendorBGateway', rateOnly);
/** Any chat-completions server the sandbox can reach over https (never localhost, loopback or link-local). */
export const compatibleGateway = preset('compatible', 'compatibleGateway', compatibleOptions);
/** vendor_c: responses and chat-completions, Bearer key. */
export const vendorCGateway = preset('vendor_c', 'vendorCGateway', rateOnly);
/** vendor_d: model id in the path; only the given models (which must include the agent's small model). */
export const vendorDGateway = preset('vendor_d', 'vendorDGateway', vendorDOptions);
/** vendor_e: per-resource subdomain, bare key in `api-key`; the model id is the deployment name. */
export const vendorEGateway = preset('vendor_e', 'vendorEGateway', vendorEOptions);
/** vendor_f: multi-model router (provider `compatible`, base path `/api/v1`). */
export const vendorFGateway = preset('vendor_f', 'vendorFGateway', rateOnly);
/** vendor_g: fast inference (provider `compatible`, base path `/vendor_c/v1`). */
export const vendorGGateway = preset('vendor_g', 'vendorGGateway', rateOnly);
/** vendor_h: chat completions (provider `compatible`, base path `/v1`). */
export const vendorHGateway = preset('vendor_h', 'vendorHGateway', rateOnly);
/** vendor_i: chat completions at the host root (provider `compatible`, no base path). */
export const vendorIGateway = preset('vendor_i', 'vendorIGateway', rateOnly);
/** vendor_j: responses API in vendor_c's wire style (provider `vendor_c`). */
export const vendorJGateway = preset('vendor_j', 'vendorJGateway', rateOnly);
/**
 * vendor_k: a customer-owned model proxy at an https upstream with no path. Give its virtual key a
 * budget and a model list: the gateway cannot see the model.
 */
export const vendorKGateway = preset('vendor_k', 'vendorKGateway', vendorKOptions);
