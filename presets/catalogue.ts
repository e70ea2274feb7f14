/**
 * The provider catalogue: `catalogue.json` beside this file (placeholder hosts under `.example`), or the
 * file named by `SDK_PRESET_CATALOGUE` for an operator's real hosts. Read once, checked with zod.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AGENT_PROVIDERS } from '../rules/agent-providers.js';
import { InvalidArgumentError } from '../rules/errors.js';
import bundled from './catalogue.json' with { type: 'json' };

/** Every preset, by its catalogue key. */
export const PRESET_KEYS = [
  'vendor_a',
  'vendor_b',
  'compatible',
  'vendor_c',
  'vendor_d',
  'vendor_e',
  'vendor_f',
  'vendor_g',
  'vendor_h',
  'vendor_i',
  'vendor_j',
  'vendor_k',
] as const;

/** One preset key. */
export type PresetKey = (typeof PRESET_KEYS)[number];

/** Parameters a preset can take, named in the catalogue. */
export const PRESET_PARAMS = ['region', 'models', 'resource', 'upstream', 'basePath'] as const;

const presetEntry = z.strictObject({
  python: z.string().regex(/^[a-z_]+$/),
  typescript: z.string().regex(/^[A-Za-z]+$/),
  params: z.array(z.enum(PRESET_PARAMS)),
  defaults: z.strictObject({ basePath: z.string() }).optional(),
  upstream: z.string(),
  header: z.strictObject({ name: z.string(), value: z.enum(['bearer', 'raw']) }),
  paths: z.array(z.string()).min(1),
  modelPattern: z.string().optional(),
  agentModel: z.strictObject({ provider: z.enum(AGENT_PROVIDERS), basePath: z.string() }),
});

const catalogueSchema = z.strictObject({
  version: z.literal(1),
  method: z.literal('POST'),
  presets: z.strictObject(
    Object.fromEntries(PRESET_KEYS.map((key) => [key, presetEntry])) as Record<PresetKey, typeof presetEntry>,
  ),
});

/** The catalogue's shape. */
export type Catalogue = z.output<typeof catalogueSchema>;

/** One preset's row. */
export type PresetEntry = z.output<typeof presetEntry>;

/** Environment variable naming an operator's catalogue file. */
export const CATALOGUE_ENV = 'SDK_PRESET_CATALOGUE';

let cached: { readonly source: string; readonly catalogue: Catalogue } | undefined;

function parseCatalogue(data: unknown, source: string): Catalogue {
  const parsed = catalogueSchema.safeParse(data);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new InvalidArgumentError(
      `preset catalogue ${source}: ${first?.path.join('.') ?? ''}: ${first?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/**
 * The catalogue in force: the operator's file when `SDK_PRESET_CATALOGUE` is set, else the bundled one.
 * Reading it makes no network call.
 */
export function loadCatalogue(): Catalogue {
  const source = process.env[CATALOGUE_ENV] ?? '';
  if (cached?.source === source) return cached.catalogue;
  let data: unknown = bundled;
  if (source !== '') {
    try {
      data = JSON.parse(readFileSync(source, 'utf8'));
    } catch {
      throw new InvalidArgumentError(`preset catalogue ${source}: cannot be read as JSON`);
    }
  }
  cached = { source, catalogue: parseCatalogue(data, source === '' ? '(bundled)' : source) };
  return cached.catalogue;
}
