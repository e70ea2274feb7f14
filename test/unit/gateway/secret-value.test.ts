import { inspect, format } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SecretValue } from '../../../gateway/secret-value.js';

const TEXT = 'sk-live-planted-0123456789';

describe('SecretValue', () => {
  const value = new SecretValue(TEXT);

  it('reveals its text only through reveal()', () => {
    expect(value.reveal()).toBe(TEXT);
  });

  it.each([
    ['String()', () => String(value)],
    ['a template string', () => `${String(value)} and ${value as unknown as string}`],
    ['concatenation', () => 'v=' + (value as unknown as string)],
    ['JSON', () => JSON.stringify({ value })],
    ['util.inspect', () => inspect({ value }, { showHidden: true, depth: 5 })],
    ['util.format', () => format('%s %o %O %j', value, value, value, value)],
    ['an error message', () => new Error(`failed with ${String(value)}`).stack ?? ''],
    ['Object.keys and entries', () => JSON.stringify([Object.keys(value), Object.entries(value)])],
  ])('prints nothing of the value through %s', (_, render) => {
    expect(render()).not.toContain(TEXT);
  });

  it('cannot be changed', () => {
    expect(Object.isFrozen(value)).toBe(true);
  });
});
