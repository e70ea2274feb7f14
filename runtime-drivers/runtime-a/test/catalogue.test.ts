/**
 * The runtime_a provider table against the preset catalogue: the path each provider package posts to
 * (runtimes.md §1.6: the package's own suffix after the table's base path) must be a path the
 * provider's preset admits, or a preset-built gateway would refuse every model request (403).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENCODE_PROVIDERS, type ProviderToken } from '../providers.js';

/** What each bundled package appends to its URL option for model `m` (verified with opencode 1.18.33). */
const PACKAGE_SUFFIX: Readonly<Record<ProviderToken, string>> = {
  vendor_a: '/model/m/converse-stream',
  vendor_b: '/messages',
  vendor_c: '/responses',
  vendor_d: '/models/m:streamGenerateContent',
  vendor_e: '/responses',
  compatible: '/chat/completions',
};

interface CatalogueRow {
  readonly paths: readonly string[];
  readonly agentModel?: { readonly provider: string; readonly basePath: string };
}

const catalogue = JSON.parse(
  readFileSync(new URL('../../../presets/catalogue.json', import.meta.url), 'utf8'),
) as { presets: Record<string, CatalogueRow> };

describe('runtime_a providers and the preset catalogue', () => {
  for (const token of Object.keys(OPENCODE_PROVIDERS) as ProviderToken[]) {
    it(`${token}: the package's request path is one its preset admits`, () => {
      const row = catalogue.presets[token];
      expect(row?.agentModel?.provider).toBe(token);
      const basePath = token === 'compatible' ? '/v1' : OPENCODE_PROVIDERS[token].basePath;
      const admitted = (row?.paths ?? []).map((path) =>
        path.replace('{model}', 'm').replace('{basePath}', token === 'compatible' ? '/v1' : ''),
      );
      expect(admitted).toContain(`${basePath}${PACKAGE_SUFFIX[token]}`);
    });
  }
});
