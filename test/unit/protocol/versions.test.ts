import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AGENT_MIN_VERSION,
  GATEWAY_MIN_VERSION,
  SANDBOXD_VERSION,
  SERIES_VERSION,
  VERSION_GATES,
  meetsVersion,
} from '../../../protocol/versions.js';

describe('the versions file', () => {
  it('holds the gates of SPEC "Versioning"', () => {
    expect(GATEWAY_MIN_VERSION).toBe('0.6.0');
    expect(AGENT_MIN_VERSION).toBe('0.8.0');
    expect(VERSION_GATES).toEqual({
      series: '0.10.0',
      gateways: '0.6.0',
      agent: '0.8.0',
    });
  });

  it('builds a sandboxd of the package version that meets every gate', () => {
    const manifest = JSON.parse(
      readFileSync(resolve(import.meta.dirname, '../../../package.json'), 'utf8'),
    ) as {
      version: string;
    };
    expect(SANDBOXD_VERSION).toBe(manifest.version);
    expect(SERIES_VERSION).toBe(manifest.version);
    for (const gate of Object.values(VERSION_GATES)) expect(meetsVersion(SANDBOXD_VERSION, gate)).toBe(true);
  });

  it.each([
    ['0.6.0', '0.6.0', true],
    ['0.10.0', '0.6.0', true],
    ['0.5.9', '0.6.0', false],
    ['0.9.0', '0.10.0', false],
    ['1.0.0', '0.10.0', true],
    ['0.10', '0.10.0', true],
    ['0.10.0-rc.1', '0.10.0', true],
    ['garbage', '0.6.0', false],
  ])('meetsVersion(%s, %s) is %s', (actual, minimum, expected) => {
    expect(meetsVersion(actual, minimum)).toBe(expected);
  });
});
