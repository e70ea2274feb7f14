/**
 * Issue 27's credential rules over generated input: the SDK's check (`credentialRulesSchema`) and
 * sandboxd's (`checkCredentialRules`) accept exactly the same rule sets and normalise hosts alike; a
 * refusal never carries a header value; a proxy target is a name only when a rule could name it.
 */
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { checkCredentialRules } from '../../daemon/egress/brokered-hosts.js';
import { connectTarget } from '../../daemon/egress/proxy-target.js';
import { parseCredentialHost } from '../../rules/credential-rules.js';
import { credentialRulesSchema } from '../../sdk/sandbox-credentials.js';

const label = fc.stringMatching(/^[a-zA-Z0-9][a-zA-Z0-9-]{0,6}$/);
const host = fc.oneof(
  fc.array(label, { minLength: 1, maxLength: 3 }).map((labels) => `${labels.join('.')}.test`),
  fc.array(label, { minLength: 1, maxLength: 3 }).map((labels) => `${labels.join('.')}.Test.`),
  label.map((l) => `*.${l}.test`),
  fc.ipV4(),
  fc.tuple(label, fc.integer({ min: 1, max: 65535 })).map(([l, port]) => `${l}.test:${String(port)}`),
  fc.string({ maxLength: 12 }),
);
const headerName = fc.oneof(
  fc.constantFrom(
    'authorization',
    'Authorization',
    'x_api_key',
    'x-api-key',
    'PRIVATE-TOKEN',
    'host',
    'Connection',
  ),
  fc.string({ maxLength: 8 }),
);
const VALUE = 'v4lue-that-must-not-appear';
const rules = fc.array(
  fc.record({
    host,
    headers: fc.dictionary(headerName, fc.constant('secret-name'), { maxKeys: 3 }),
  }),
  { maxLength: 4 },
);

test.prop([rules], { numRuns: 2000 })('the SDK and sandboxd agree on every rule set', (given) => {
  const sdk = credentialRulesSchema.safeParse(given);
  // sandboxd sees the values the SDK resolved: any non-empty safe text.
  const wire = given.map((rule) => ({
    host: rule.host,
    headers: Object.fromEntries(Object.keys(rule.headers).map((name) => [name, VALUE])),
  }));
  let daemon: ReturnType<typeof checkCredentialRules> | undefined;
  let refusal: unknown;
  try {
    daemon = checkCredentialRules(wire);
  } catch (error) {
    refusal = error;
  }
  expect(sdk.success).toBe(daemon !== undefined);
  if (sdk.success && daemon !== undefined)
    expect([...daemon.keys()]).toEqual(sdk.data.map((rule) => rule.host));
  if (refusal !== undefined) expect((refusal as Error).message).not.toContain(VALUE);
});

test.prop([host])('a host is normalised once and for all, and is a name a CONNECT can carry', (raw) => {
  const parsed = parseCredentialHost(raw);
  if ('error' in parsed) return;
  expect(parseCredentialHost(parsed.host)).toEqual(parsed);
  expect(connectTarget(`${parsed.host}:443`)).toEqual({ kind: 'name', host: parsed.host, port: 443 });
});
