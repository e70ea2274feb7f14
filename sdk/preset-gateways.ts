/**
 * The provider preset builders (SPEC "Provider preset catalogue"): each takes the secret's name (or a
 * `SecretRef`) and its preset's options and returns a `SecretGateway` restricted to its vendor's
 * upstream, header and POST paths. The routes come from `presets/`; the secret is added here. Building
 * one makes no network call and loads no optional dependency.
 */
import { PRESETS, type Preset } from '../presets/builders.js';
import { parseOptions } from '../rules/parse-options.js';
import { SecretGateway, secretSourceSchema, type SecretSource } from './secret-gateway.js';

/** The builder of `preset`: the secret is checked first, then the options, each naming the builder. */
function gatewayOf<Options extends unknown[]>(
  preset: Preset<Options>,
): (secretSource: SecretSource, ...options: Options) => SecretGateway {
  return (secretSource, ...options) => {
    const secret = parseOptions(secretSourceSchema, secretSource, preset.name, ['secret']);
    const route = preset.route(...options);
    return new SecretGateway(
      {
        upstream: route.upstream,
        headers: { [route.header]: secret },
        allow: route.allow.map(([method, path]) => [method, path]),
        ratePerMinute: route.ratePerMinute,
      },
      route.binding,
    );
  };
}

/**
 * vendor_a: region-dependent host, model id in the path; only the given models' converse paths.
 *
 * @example
 * ```ts
 * vendorAGateway('vendor-a-key', { region: 'us-east-1', models: ['vendor.model-v1:0'] });
 * ```
 */
export const vendorAGateway = gatewayOf(PRESETS.vendor_a);
/** vendor_b: messages API, bare key in `x-api-key`. */
export const vendorBGateway = gatewayOf(PRESETS.vendor_b);
/** Any chat-completions server the sandbox can reach over https (never localhost, loopback or link-local). */
export const compatibleGateway = gatewayOf(PRESETS.compatible);
/** vendor_c: responses and chat-completions, Bearer key. */
export const vendorCGateway = gatewayOf(PRESETS.vendor_c);
/** vendor_d: model id in the path; only the given models (which must include the agent's small model). */
export const vendorDGateway = gatewayOf(PRESETS.vendor_d);
/** vendor_e: per-resource subdomain, bare key in `api-key`; the model id is the deployment name. */
export const vendorEGateway = gatewayOf(PRESETS.vendor_e);
/** vendor_f: multi-model router (provider `compatible`, base path `/api/v1`). */
export const vendorFGateway = gatewayOf(PRESETS.vendor_f);
/** vendor_g: fast inference (provider `compatible`, base path `/vendor_c/v1`). */
export const vendorGGateway = gatewayOf(PRESETS.vendor_g);
/** vendor_h: chat completions (provider `compatible`, base path `/v1`). */
export const vendorHGateway = gatewayOf(PRESETS.vendor_h);
/** vendor_i: chat completions at the host root (provider `compatible`, no base path). */
export const vendorIGateway = gatewayOf(PRESETS.vendor_i);
/** vendor_j: responses API in vendor_c's wire style (provider `vendor_c`). */
export const vendorJGateway = gatewayOf(PRESETS.vendor_j);
/**
 * vendor_k: a customer-owned model proxy at an https upstream with no path. Give its virtual key a
 * budget and a model list: the gateway cannot see the model.
 */
export const vendorKGateway = gatewayOf(PRESETS.vendor_k);
