/**
 * The one place where our provider tokens meet opencode's provider ids and provider packages (DESIGN.md
 * §5). Everything vendor-specific the runtime_a driver needs is data in `OPENCODE_PROVIDERS`.
 */
import { PROVIDER_BASE_PATHS, type AgentProvider } from '../../rules/agent-providers.js';

/** Provider tokens of SPEC "AgentModel". */
export type ProviderToken = AgentProvider;

/** How opencode reaches one of our providers through a loopback gateway listener. */
export interface OpencodeProvider {
  /** opencode's provider id (its key under `provider` and the `<id>/` prefix of model names). */
  readonly id: string;
  /** The provider package, bundled in opencode 1.18.33 (runtimes.md §1.6; others hang offline). */
  readonly npm: string;
  /**
   * Which option carries the gateway URL: `baseURL` for most, `endpoint` for vendor_a's package,
   * which also takes `region`.
   */
  readonly urlOption: 'baseURL' | 'endpoint';
  /** Path appended to the listener URL so the package's requests land on the preset's paths. */
  readonly basePath: string;
  /**
   * Environment variable through which the process driver gives the package a non-secret
   * placeholder key, or undefined when the package sends no credential without one. The configuration
   * never holds a key; the gateway drops the placeholder header and injects the real one.
   */
  readonly placeholderKeyEnv: string | undefined;
}

/**
 * Our provider token → opencode's provider, as verified in runtimes.md §1.6:
 * - vendor_a: `POST /model/<id>/converse-stream`; the package is not loaded without some credential.
 * - vendor_b: `POST /v1/messages`.
 * - vendor_c: `POST /v1/responses`.
 * - vendor_d: `POST /v1beta/models/<m>:streamGenerateContent`.
 * - vendor_e: the package posts to `<baseURL>/responses`; the catalogue's vendor_e preset admits
 *   `/vendor_c/v1/responses`, so that is the base path.
 * - compatible: `POST <basePath>/chat/completions` with no Authorization header at all.
 */
export const OPENCODE_PROVIDERS: Readonly<Record<ProviderToken, OpencodeProvider>> = {
  vendor_a: {
    id: 'amazon-bedrock',
    npm: '@ai-sdk/amazon-bedrock',
    urlOption: 'endpoint',
    basePath: PROVIDER_BASE_PATHS.vendor_a,
    placeholderKeyEnv: 'AWS_BEARER_TOKEN_BEDROCK',
  },
  vendor_b: {
    id: 'anthropic',
    npm: '@ai-sdk/anthropic',
    urlOption: 'baseURL',
    basePath: PROVIDER_BASE_PATHS.vendor_b,
    placeholderKeyEnv: 'ANTHROPIC_API_KEY',
  },
  vendor_c: {
    id: 'openai',
    npm: '@ai-sdk/openai',
    urlOption: 'baseURL',
    basePath: PROVIDER_BASE_PATHS.vendor_c,
    placeholderKeyEnv: 'OPENAI_API_KEY',
  },
  vendor_d: {
    id: 'google',
    npm: '@ai-sdk/google',
    urlOption: 'baseURL',
    basePath: PROVIDER_BASE_PATHS.vendor_d,
    placeholderKeyEnv: 'GOOGLE_GENERATIVE_AI_API_KEY',
  },
  vendor_e: {
    id: 'azure',
    npm: '@ai-sdk/azure',
    urlOption: 'baseURL',
    basePath: PROVIDER_BASE_PATHS.vendor_e,
    placeholderKeyEnv: 'AZURE_API_KEY',
  },
  compatible: {
    id: 'gateway',
    npm: '@ai-sdk/openai-compatible',
    urlOption: 'baseURL',
    basePath: PROVIDER_BASE_PATHS.compatible,
    placeholderKeyEnv: undefined,
  },
};
