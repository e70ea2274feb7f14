import { describe, expect, it } from 'vitest';
import { Router } from '../../../protocol/router.js';

const router = new Router<string>({
  'GET /v1/health': 'health',
  'GET /v1/processes': 'list',
  'POST /v1/processes': 'start',
  'GET /v1/processes/:pid/events': 'events',
  'POST /v1/processes/:pid/stdin/close': 'close',
});

describe('the router', () => {
  it('finds a route by method and path and names its endpoint', () => {
    expect(router.match('POST', '/v1/processes')).toEqual({
      matched: true,
      handler: 'start',
      endpoint: 'POST /v1/processes',
      params: {},
    });
  });

  it('gives :param segments as sent', () => {
    expect(router.match('GET', '/v1/processes/42/events')).toMatchObject({
      handler: 'events',
      endpoint: 'GET /v1/processes/:pid/events',
      params: { pid: '42' },
    });
    expect(router.match('POST', '/v1/processes/a%20b/stdin/close')).toMatchObject({
      params: { pid: 'a%20b' },
    });
  });

  it('ignores empty segments', () => {
    expect(router.match('GET', '/v1//health/')).toMatchObject({ handler: 'health' });
  });

  it.each(['/', '/v1', '/v1/nothing', '/v1/processes/42', '/v1/processes/42/events/more', '/v2/health'])(
    'answers %s with 404 not_found',
    (path) => {
      expect(router.match('GET', path)).toEqual({
        matched: false,
        refusal: { status: 404, headers: {}, envelope: { code: 'not_found', message: 'no such endpoint' } },
      });
    },
  );

  it('answers a path only other methods have with 405 method_not_allowed and Allow', () => {
    const match = router.match('DELETE', '/v1/processes');
    expect(match).toMatchObject({
      matched: false,
      refusal: { status: 405, headers: { allow: 'GET, POST' }, envelope: { code: 'method_not_allowed' } },
    });
    expect(JSON.stringify(match)).not.toContain('DELETE');
  });

  it('refuses a malformed route key at construction', () => {
    expect(() => new Router({ 'get /v1/x': 1 })).toThrow(/METHOD \/path/);
    expect(() => new Router({ 'GET v1/x': 1 })).toThrow(/METHOD \/path/);
    expect(() => new Router({ GET: 1 })).toThrow(/METHOD \/path/);
  });
});
