import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CATALOGUE_ENV, PRESET_KEYS, loadCatalogue, type PresetKey } from '../../../presets/catalogue.js';
import * as sdk from '../../../sdk/index.js';
import { InvalidArgumentError, SecretGateway, SecretRef } from '../../../sdk/index.js';

type Builder = (secret: string | SecretRef, options?: Record<string, unknown>) => SecretGateway;
const builder = (name: string) => (sdk as unknown as Record<string, Builder>)[name] as Builder;

const SAMPLE: Record<PresetKey, Record<string, unknown>> = {
  vendor_a: { region: 'eu-west-1', models: ['vendor.model-v1:0'] },
  vendor_b: {},
  compatible: { upstream: 'https://llm.corp.example', basePath: '/v1' },
  vendor_c: {},
  vendor_d: { models: ['model-pro', 'model-flash'] },
  vendor_e: { resource: 'my-res' },
  vendor_f: {},
  vendor_g: {},
  vendor_h: {},
  vendor_i: {},
  vendor_j: {},
  vendor_k: { upstream: 'https://10.0.0.5:4000' },
};

// SPEC's catalogue table, written out here as a second source for the data file.
const SPEC_ROWS: Record<PresetKey, { header: string; paths: string[]; provider: string; basePath: string }> =
  {
    vendor_a: {
      header: 'authorization',
      paths: [
        '/model/vendor.model-v1:0/converse-stream',
        '/model/vendor.model-v1%3A0/converse-stream',
        '/model/vendor.model-v1:0/converse',
        '/model/vendor.model-v1%3A0/converse',
      ],
      provider: 'vendor_a',
      basePath: '',
    },
    vendor_b: { header: 'x-api-key', paths: ['/v1/messages'], provider: 'vendor_b', basePath: '' },
    compatible: {
      header: 'authorization',
      paths: ['/v1/chat/completions'],
      provider: 'compatible',
      basePath: '/v1',
    },
    vendor_c: {
      header: 'authorization',
      paths: ['/v1/responses', '/v1/chat/completions'],
      provider: 'vendor_c',
      basePath: '',
    },
    vendor_d: {
      header: 'x-vendor_d-api-key',
      paths: [
        '/v1beta/models/model-pro:streamGenerateContent',
        '/v1beta/models/model-flash:streamGenerateContent',
        '/v1beta/models/model-pro:generateContent',
        '/v1beta/models/model-flash:generateContent',
      ],
      provider: 'vendor_d',
      basePath: '',
    },
    vendor_e: {
      header: 'api-key',
      paths: ['/vendor_c/v1/responses', '/vendor_c/v1/chat/completions'],
      provider: 'vendor_e',
      basePath: '',
    },
    vendor_f: {
      header: 'authorization',
      paths: ['/api/v1/chat/completions'],
      provider: 'compatible',
      basePath: '/api/v1',
    },
    vendor_g: {
      header: 'authorization',
      paths: ['/vendor_c/v1/chat/completions'],
      provider: 'compatible',
      basePath: '/vendor_c/v1',
    },
    vendor_h: {
      header: 'authorization',
      paths: ['/v1/chat/completions'],
      provider: 'compatible',
      basePath: '/v1',
    },
    vendor_i: { header: 'authorization', paths: ['/chat/completions'], provider: 'compatible', basePath: '' },
    vendor_j: {
      header: 'authorization',
      paths: ['/v1/responses', '/v1/chat/completions'],
      provider: 'vendor_c',
      basePath: '',
    },
    vendor_k: {
      header: 'authorization',
      paths: ['/v1/responses', '/v1/chat/completions'],
      provider: 'compatible',
      basePath: '/v1',
    },
  };

describe.each(PRESET_KEYS)('preset %s', (key) => {
  const entry = loadCatalogue().presets[key];
  const build = builder(entry.typescript);

  it('builds the restricted gateway of its catalogue row and of SPEC', () => {
    const g = build('my-secret', { ...SAMPLE[key], ratePerMinute: 120 });
    const spec = SPEC_ROWS[key];
    expect(g).toBeInstanceOf(SecretGateway);
    expect(g.headers).toEqual({ [spec.header]: 'my-secret' });
    expect(entry.header.name).toBe(spec.header);
    expect(g.allow).toEqual(spec.paths.map((p) => ['POST', p]));
    expect(g.ratePerMinute).toBe(120);
    expect(g.preset).toMatchObject({ preset: key, provider: spec.provider, basePath: spec.basePath });
    expect(g.upstream).toMatch(/^https:\/\/[a-z0-9.:[\]-]+$/);
    if (entry.upstream.startsWith('https://')) expect(g.upstream).toMatch(/\.example$/);
    expect(entry.python).toBe(entry.typescript.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
  });

  it('takes a SecretRef, defaults the rate, and refuses a secret value in place of a name', () => {
    const g = build(new SecretRef({ name: 'k' }), SAMPLE[key]);
    expect(g.ratePerMinute).toBe(0);
    expect(() => build('Bearer sk-123', SAMPLE[key])).toThrow(InvalidArgumentError);
    expect(() => build('k', { ...SAMPLE[key], ratePerMinute: 6001 })).toThrow(InvalidArgumentError);
    expect(() => build('k', { ...SAMPLE[key], unknown: 1 })).toThrow(InvalidArgumentError);
  });
});

describe('preset rules', () => {
  const fails = (make: () => unknown, field: string) => {
    try {
      make();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).field).toBe(field);
      return;
    }
    throw new Error('expected a rejection');
  };

  it('vendor_a: region host, given models only, no ARNs or encoded slashes', () => {
    expect(sdk.vendorAGateway('k', { region: 'us-east-1', models: ['m'] }).upstream).toBe(
      'https://runtime.us-east-1.vendor-a.example',
    );
    fails(() => sdk.vendorAGateway('k', { region: 'US', models: ['m'] }), 'region');
    fails(() => sdk.vendorAGateway('k', { region: 'us-east-1', models: [] }), 'models');
    fails(
      () =>
        sdk.vendorAGateway('k', {
          region: 'us-east-1',
          models: ['arn:aws:bedrock:us-east-1::foundation-model/x'],
        }),
      'models[0]',
    );
    fails(() => sdk.vendorAGateway('k', { region: 'us-east-1', models: ['a%2Fb'] }), 'models[0]');
    fails(() => sdk.vendorAGateway('k', { region: 'us-east-1', models: ['a/b'] }), 'models[0]');
    const many = Array.from({ length: 9 }, (_, i) => `m${i}:0`);
    fails(() => sdk.vendorAGateway('k', { region: 'us-east-1', models: many }), 'models');
  });

  it('vendor_d: models required, without the models/ prefix', () => {
    fails(() => sdk.vendorDGateway('k', {} as never), 'models');
    fails(() => sdk.vendorDGateway('k', { models: ['models/pro'] }), 'models[0]');
    expect(sdk.vendorDGateway('k', { models: ['pro', 'pro'] }).allow).toHaveLength(2);
  });

  it('vendor_e: resource is 1-63 [a-z0-9-] without edge hyphens', () => {
    expect(sdk.vendorEGateway('k', { resource: 'a' }).upstream).toBe('https://a.vendor-e.example');
    for (const resource of ['', '-a', 'a-', 'A', 'a.b', 'x'.repeat(64)])
      fails(() => sdk.vendorEGateway('k', { resource }), 'resource');
  });

  it.each([
    'http://proxy.example',
    'https://proxy.example/v1',
    'https://localhost',
    'https://localhost:4000',
    'https://127.0.0.1',
    'https://127.8.9.10',
    'https://2130706433',
    'https://0x7f.0.0.1',
    'https://0177.0.0.01',
    'https://127.1',
    'https://[::1]',
    'https://[::ffff:127.0.0.1]',
    'https://0.0.0.0',
    'https://169.254.0.1',
    'https://169.254.169.254',
  ])('vendor_k and compatible refuse the upstream %s', (upstream) => {
    fails(() => sdk.vendorKGateway('k', { upstream }), 'upstream');
    fails(() => sdk.compatibleGateway('k', { upstream }), 'upstream');
  });

  it('vendor_k and compatible take base paths in path form (vendor_k defaults to /v1)', () => {
    expect(sdk.vendorKGateway('k', { upstream: 'https://p.example' }).preset?.basePath).toBe('/v1');
    expect(sdk.compatibleGateway('k', { upstream: 'https://p.example' }).allow).toEqual([
      ['POST', '/chat/completions'],
    ]);
    fails(() => sdk.vendorKGateway('k', { upstream: 'https://p.example', basePath: 'v1' }), 'basePath');
    fails(
      () => sdk.compatibleGateway('k', { upstream: 'https://p.example', basePath: '/v1//x' }),
      'basePath',
    );
  });
});

describe('operator catalogue', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sdk-catalogue-'));
  });
  afterEach(() => {
    Reflect.deleteProperty(process.env, CATALOGUE_ENV);
    rmSync(dir, { recursive: true, force: true });
  });

  it('replaces the placeholder hosts when SDK_PRESET_CATALOGUE names a file', () => {
    const data = structuredClone(loadCatalogue()) as { presets: Record<string, { upstream: string }> };
    (data.presets['vendor_b'] as { upstream: string }).upstream = 'https://models.internal.example';
    const file = join(dir, 'catalogue.json');
    writeFileSync(file, JSON.stringify(data));
    process.env[CATALOGUE_ENV] = file;
    expect(sdk.vendorBGateway('k').upstream).toBe('https://models.internal.example');
    Reflect.deleteProperty(process.env, CATALOGUE_ENV);
    expect(sdk.vendorBGateway('k').upstream).toBe('https://api.vendor-b.example');
  });

  it('refuses a malformed operator catalogue', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, '{"version":2}');
    process.env[CATALOGUE_ENV] = file;
    expect(() => sdk.vendorBGateway('k')).toThrow(InvalidArgumentError);
  });
});

describe('building presets from the published package', () => {
  it('makes no network call and loads no optional dependency', () => {
    const probe = resolve(import.meta.dirname, '../../fixtures/preset-isolation-probe.mjs');
    const report = JSON.parse(execFileSync(process.execPath, [probe], { encoding: 'utf8' })) as {
      built: number;
      network: string[];
      modules: string[];
    };
    expect(report.built).toBe(PRESET_KEYS.length);
    expect(report.network).toEqual([]);
    expect(report.modules.filter((m) => /@aws-sdk|@smithy|deepagents|@langchain|opencode/.test(m))).toEqual(
      [],
    );
    expect(report.modules.some((m) => m.includes('/dist/presets/builders.js'))).toBe(true);
  });
});
