import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateOperatorKey, operatorKeyFile } from '../../../control-plane/operator-key.js';

const dirs: string[] = [];
const folder = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-keys-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the operator key file', () => {
  it('is made once, owner-only, and read back the same afterwards', () => {
    const dir = folder();
    const first = loadOrCreateOperatorKey(dir);
    expect(first.created).toBe(true);
    expect(statSync(operatorKeyFile(dir)).mode & 0o777).toBe(0o600);
    expect(loadOrCreateOperatorKey(dir)).toEqual({ key: first.key, created: false });
  });

  it('is never silently replaced when it holds no valid key, and is made owner-only when it is readable', () => {
    const dir = folder();
    writeFileSync(operatorKeyFile(dir), 'short\n');
    expect(() => loadOrCreateOperatorKey(dir)).toThrow(/holds no valid key/);
    expect(readFileSync(operatorKeyFile(dir), 'utf8')).toBe('short\n');
    const key = 'k'.repeat(43);
    writeFileSync(operatorKeyFile(dir), `${key}\n`);
    chmodSync(operatorKeyFile(dir), 0o644);
    expect(loadOrCreateOperatorKey(dir)).toEqual({ key, created: false });
    expect(statSync(operatorKeyFile(dir)).mode & 0o777).toBe(0o600);
  });
});
