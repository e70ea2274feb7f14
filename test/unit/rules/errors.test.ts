import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ERROR_CLASS,
  ERROR_CODES,
  ERROR_HTTP_STATUS,
  GATEWAY_REJECTION_STATUS,
} from '../../../rules/error-codes.js';
import {
  AgentError,
  AuthenticationError,
  InvalidArgumentError,
  SandboxError,
  SdkError,
  SecretNotFoundError,
} from '../../../rules/errors.js';
import { errorFromEnvelope } from '../../../protocol/error-envelope.js';

describe('error registry', () => {
  it('maps every code to an HTTP error status and an SDK class', () => {
    for (const code of ERROR_CODES) {
      expect(ERROR_HTTP_STATUS[code]).toBeGreaterThanOrEqual(400);
      expect(ERROR_CLASS[code]).toMatch(/Error$/);
    }
    expect(GATEWAY_REJECTION_STATUS).toEqual({
      bad_request: 400,
      path_forbidden: 403,
      not_allowed: 403,
      rate_limited: 429,
      upstream_error: 502,
      upstream_timeout: 504,
    });
  });

  it.each(ERROR_CODES)('round-trips %s through the wire envelope into its class', (code) => {
    const restored = errorFromEnvelope({
      code,
      message: 'm',
      context: { failureClass: 'UnimplementedError', reason: 'timeout' },
    });
    expect(restored.code === code || ERROR_CLASS[code] === 'AgentError').toBe(true);
    expect(restored.name).toBe(ERROR_CLASS[code]);
    expect(restored).toBeInstanceOf(SdkError);
    expect(errorFromEnvelope(JSON.parse(JSON.stringify(restored)))).toEqual(restored);
  });

  it('turns a malformed envelope into a SandboxError without echoing it', () => {
    const e = errorFromEnvelope({ code: 'nope', message: 'secret-ish payload' });
    expect(e).toBeInstanceOf(SandboxError);
    expect(e.message).not.toContain('secret-ish');
  });

  it('keeps class identities apart and carries their facts', () => {
    const agent = new AgentError('busy');
    expect(agent).toBeInstanceOf(AgentError);
    expect(agent).not.toBeInstanceOf(SandboxError);
    expect(agent.reason).toBe('busy');
    expect(
      new SandboxError('x', { code: 'unimplemented', failureClass: 'UnimplementedError' }).failureClass,
    ).toBe('UnimplementedError');
    expect(new AuthenticationError('x').code).toBe('unauthenticated');
    expect(new SecretNotFoundError('x').code).toBe('secret_not_found');
    expect(new InvalidArgumentError('x', { code: 'invalid_allow_path', field: 'allow[0]' }).toJSON()).toEqual(
      {
        code: 'invalid_allow_path',
        message: 'x',
        context: { field: 'allow[0]' },
      },
    );
  });
});

describe('instanceof across two copies of the built package', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-copy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds both ways', async () => {
    const dist = resolve(import.meta.dirname, '../../../dist');
    cpSync(dist, join(dir, 'a'), { recursive: true });
    cpSync(dist, join(dir, 'b'), { recursive: true });
    const load = (copy: string) =>
      import(pathToFileURL(join(dir, copy, 'rules', 'errors.js')).href) as Promise<
        typeof import('../../../rules/errors.js')
      >;
    const [a, b] = await Promise.all([load('a'), load('b')]);
    expect(a.InvalidArgumentError).not.toBe(b.InvalidArgumentError);
    const fromA = new a.InvalidArgumentError('x');
    expect(fromA instanceof b.InvalidArgumentError).toBe(true);
    expect(fromA instanceof b.SdkError).toBe(true);
    expect(fromA instanceof b.SandboxError).toBe(false);
    expect(new b.AgentError('timeout') instanceof a.AgentError).toBe(true);
    expect(fromA instanceof Error).toBe(true);
  });
});
