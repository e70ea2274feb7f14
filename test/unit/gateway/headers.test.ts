import { describe, expect, it } from 'vitest';
import { checkConfiguration, type CheckedRoute } from '../../../gateway/configuration.js';
import { InjectedValues } from '../../../gateway/injected-values.js';
import { buildUpstreamHeaders } from '../../../gateway/request-headers.js';
import { filterResponseHeaders } from '../../../gateway/response-headers.js';
import { SecretValue } from '../../../gateway/secret-value.js';
import { PLACEHOLDER_KEY } from '../../../rules/placeholder-key.js';

const KEY = 'sk-real-key-0123456789';
const ORG = 'org-42';

function checkedRoute(): CheckedRoute {
  const verdict = checkConfiguration({
    llm: {
      upstream: 'https://api.example',
      headers: { 'X-Api-Key': KEY, 'x-org': ORG },
      allow: [['POST', '/v1/*']],
    },
  });
  if (!verdict.ok) throw new Error(verdict.failure.message);
  const route = verdict.routes.get('llm');
  if (route === undefined) throw new Error('no route');
  return route;
}

describe('upstream request headers', () => {
  const route = checkedRoute();

  it("drops the agent's placeholder key in any header, bare or after a scheme, and nothing else", () => {
    const raw = [
      'x-goog-api-key',
      PLACEHOLDER_KEY,
      'Authorization',
      `Bearer ${PLACEHOLDER_KEY}`,
      'x-note',
      `not ${PLACEHOLDER_KEY} at all`,
      'Accept',
      '*/*',
    ];
    expect(buildUpstreamHeaders(raw, route)).toEqual([
      'x-note',
      `not ${PLACEHOLDER_KEY} at all`,
      'Accept',
      '*/*',
      'X-Api-Key',
      KEY,
      'x-org',
      ORG,
    ]);
  });

  it('drops every spelling and duplicate of a configured header and injects each value once', () => {
    const raw = [
      'x-api-key',
      'a',
      'X-API-KEY',
      'b',
      'x_api_key',
      'c',
      'X.Api.Key',
      'd',
      'X-Org',
      'mine',
      'Accept',
      '*/*',
    ];
    expect(buildUpstreamHeaders(raw, route)).toEqual(['Accept', '*/*', 'X-Api-Key', KEY, 'x-org', ORG]);
  });

  it('drops transport headers and those Connection nominates, keeping one Content-Length', () => {
    const raw = [
      'Host',
      'gw',
      'Connection',
      'X-Secret-Hop, close',
      'Keep-Alive',
      'timeout=5',
      'X-Secret-Hop',
      'hidden',
      'x_secret_hop',
      'hidden too',
      'Transfer-Encoding',
      'chunked',
      'TE',
      'trailers',
      'Upgrade',
      'websocket',
      'Proxy-Authorization',
      'Basic x',
      'Expect',
      '100-continue',
      'Content-Length',
      '5',
      'Content-Type',
      'application/json',
    ];
    expect(buildUpstreamHeaders(raw, route)).toEqual([
      'Content-Length',
      '5',
      'Content-Type',
      'application/json',
      'X-Api-Key',
      KEY,
      'x-org',
      ORG,
    ]);
  });
});

describe('response headers', () => {
  const route = checkedRoute();

  it('drops transport headers, configured names, nominated headers and any value carrying an injected value', () => {
    const injected = new InjectedValues();
    injected.hold(route.headers.map((h) => h.value));
    const kept = filterResponseHeaders(
      {
        'content-type': 'application/json',
        'content-length': '12',
        connection: 'x-hop',
        'x-hop': '1',
        'transfer-encoding': 'chunked',
        'keep-alive': 'timeout=5',
        'x-api-key': 'anything',
        'x.org': 'anything',
        'x-echo': `Bearer ${KEY}`,
        'set-cookie': ['a=1', `b=${KEY}`],
        'x-short': ORG, // under 8 characters: not redacted by value
      },
      route,
      injected,
    );
    expect(kept).toEqual([
      'content-type',
      'application/json',
      'content-length',
      '12',
      'set-cookie',
      'a=1',
      'x-short',
      ORG,
    ]);
  });

  it('never keeps content-length among trailers', () => {
    expect(
      filterResponseHeaders({ 'content-length': '1', 'x-t': '1' }, route, new InjectedValues(), false),
    ).toEqual(['x-t', '1']);
  });
});

describe('injected values', () => {
  it('counts holds, so a value stays redacted while any holder remains', () => {
    const injected = new InjectedValues();
    const a = new SecretValue('aaaaaaaa-old');
    const b = new SecretValue('bbbbbbbb-new');
    const short = new SecretValue('1234567');
    injected.hold([a, short]);
    injected.hold([a]);
    injected.hold([b]);
    expect(injected.size).toBe(2);
    expect(injected.occursIn('x aaaaaaaa-old y')).toBe(true);
    expect(injected.occursIn('1234567')).toBe(false);
    injected.release([a]);
    expect(injected.occursIn('aaaaaaaa-old')).toBe(true);
    injected.release([a, short]);
    expect(injected.occursIn('aaaaaaaa-old')).toBe(false);
    expect(injected.occursIn('bbbbbbbb-new')).toBe(true);
    injected.release([b, b]);
    expect(injected.size).toBe(0);
  });
});
