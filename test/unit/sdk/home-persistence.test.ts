/**
 * Home persistence without a sandbox: where the home is saved (`S3Prefix.key`), the options that refuse
 * before any call, and how the archive's exit trailer is read.
 */
import { describe, expect, it } from 'vitest';
import { archiveExitValue, archiveFailure } from '../../../protocol/home-archive.js';
import { InvalidArgumentError } from '../../../rules/errors.js';
import { HomePersistence, homePersistenceOf } from '../../../sdk/home-persistence.js';
import { S3Prefix } from '../../../sdk/s3-prefix.js';
import { resolveSandboxOptions } from '../../../sdk/sandbox-options.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import type { SandboxPool } from '../../../sdk/sandbox-pool.js';

const ROLE = 'arn:aws:iam::123456789012:role/sandbox-home';

function fieldOf(make: () => unknown): string | undefined {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as InvalidArgumentError).field;
  }
  throw new Error('expected InvalidArgumentError');
}

describe('S3Prefix', () => {
  it('places the home at <prefix>/<name>/home.tar.gz, and at <name>/home.tar.gz without a prefix', () => {
    expect(new S3Prefix({ bucket: 'team-homes', prefix: 'a/b', name: 'alice' }).key).toBe(
      'a/b/alice/home.tar.gz',
    );
    expect(new S3Prefix({ bucket: 'team-homes', prefix: '', name: 'bob.2' }).key).toBe('bob.2/home.tar.gz');
  });

  it('takes a region and an endpoint, and refuses malformed ones', () => {
    const p = new S3Prefix({
      bucket: 'homes',
      prefix: 'p',
      name: 'n',
      region: 'eu-west-1',
      endpoint: 'http://127.0.0.1:4566',
    });
    expect([p.region, p.endpoint]).toEqual(['eu-west-1', 'http://127.0.0.1:4566']);
    expect(Object.isFrozen(p)).toBe(true);
    expect(new S3Prefix({ bucket: 'homes', prefix: 'p', name: 'n' }).region).toBeUndefined();
    const base = { bucket: 'homes', prefix: 'p', name: 'n' };
    expect(fieldOf(() => new S3Prefix({ ...base, region: 'Europe' }))).toBe('region');
    expect(fieldOf(() => new S3Prefix({ ...base, endpoint: 'ftp://127.0.0.1' }))).toBe('endpoint');
    // Signed role requests and session tokens go there: http only to loopback.
    expect(fieldOf(() => new S3Prefix({ ...base, endpoint: 'http://s3.example.com' }))).toBe('endpoint');
    expect(fieldOf(() => new S3Prefix({ ...base, endpoint: 'http://127.0.0.1.example.com' }))).toBe(
      'endpoint',
    );
    expect(new S3Prefix({ ...base, endpoint: 'https://s3.example.com' }).endpoint).toBe(
      'https://s3.example.com',
    );
    expect(fieldOf(() => new S3Prefix({ ...base, prefix: 'a//b' }))).toBe('prefix');
    expect(fieldOf(() => new S3Prefix({ ...base, name: '.hidden' }))).toBe('name');
    expect(fieldOf(() => new S3Prefix({ ...base, bucket: 'a..b' }))).toBe('bucket');
  });
});

describe('persist options', () => {
  const persist = new S3Prefix({ bucket: 'homes', prefix: '', name: 'a' });
  const pool = { take: () => Promise.reject(new Error('never')) } as unknown as SandboxPool;

  it('needs a role ARN, and refuses a pool', () => {
    expect(fieldOf(() => resolveSandboxOptions({ persist }))).toBe('executionRoleArn');
    expect(fieldOf(() => resolveSandboxOptions({ persist, executionRoleArn: 'sandbox-home' }))).toBe(
      'executionRoleArn',
    );
    expect(fieldOf(() => resolveSandboxOptions({ persist, executionRoleArn: ROLE, pool }))).toBe('persist');
    expect(
      fieldOf(() => resolveSandboxOptions({ persist: { bucket: 'homes' } as unknown as S3Prefix })),
    ).toBe('persist');
  });

  it('Sandbox.create refuses them before any call (no control plane listens here)', async () => {
    await expect(Sandbox.create({ persist, controlPlaneUrl: 'http://127.0.0.1:9' })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('resolves to a persistence only with persist', () => {
    expect(homePersistenceOf(resolveSandboxOptions())).toBeUndefined();
    const home = homePersistenceOf(resolveSandboxOptions({ persist, executionRoleArn: ROLE }));
    expect(home).toBeInstanceOf(HomePersistence);
    expect([home?.location, home?.executionRoleArn]).toEqual([persist, ROLE]);
  });
});

describe('the archive exit trailer', () => {
  it('is whole only with exit status 0', () => {
    expect(archiveExitValue(0, null)).toBe('0');
    expect(archiveExitValue(null, 'SIGKILL')).toBe('signal:SIGKILL');
    expect(archiveFailure({ 'sdk-archive-exit': '0' })).toBeUndefined();
    expect(archiveFailure({ 'sdk-archive-exit': '2' })).toBe('tar ended with 2');
    expect(archiveFailure({ 'sdk-archive-exit': 'signal:SIGKILL' })).toBe('tar ended with signal:SIGKILL');
    expect(archiveFailure({})).toBe('the archive ended without its exit status');
    expect(archiveFailure({ 'sdk-archive-exit': ['0', '0'] })).toBe(
      'the archive ended without its exit status',
    );
    expect(archiveFailure({ 'sdk-archive-exit': '0; rm -rf' })).toBe(
      'the archive ended with a malformed exit status',
    );
  });
});
