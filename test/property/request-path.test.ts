import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { checkRequestPath } from '../../rules/request-path.js';

const hexByte = fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, '0')}`);
const pathish = fc
  .array(
    fc.oneof(
      fc.constantFrom('/', '.', '..', ';', '\\', '%', '%2e', '%2F', 'a', 'é', ' ', '\u0000', '?'),
      hexByte,
      fc.string(),
    ),
    {
      maxLength: 12,
    },
  )
  .map((parts) => parts.join(''));

function decodeOnce(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

test.prop(
  [
    fc.oneof(
      fc.string(),
      pathish,
      pathish.map((p) => `/${p}`),
    ),
  ],
  { numRuns: 2000 },
)('never throws, and every accepted path is free of traversal and smuggling forms', (path) => {
  const verdict = checkRequestPath(path);
  if (!verdict.ok) return;
  expect(path.startsWith('/')).toBe(true);
  expect(path).not.toMatch(/[;\\\s]/);
  expect(path).not.toMatch(/%(?![0-9A-Fa-f]{2})/);
  const segments = path.split('/').slice(1);
  segments.forEach((segment, i) => {
    if (i < segments.length - 1) expect(segment).not.toBe('');
    const decoded = decodeOnce(segment);
    expect(decoded).toBeDefined();
    expect(['.', '..']).not.toContain(decoded);
    // eslint-disable-next-line no-control-regex -- control characters are exactly what must not appear
    expect(decoded).not.toMatch(/[/\\%;\u0000-\u001f\u007f-\u009f]/);
  });
});

const unreserved = fc.constantFrom(..."abcXYZ019-._~:@!$&'()*+,=".split(''));
const segment = fc
  .array(fc.oneof(unreserved, fc.constantFrom('%20', '%C3%A9', '%E2%82%AC', '%41')), {
    minLength: 1,
    maxLength: 8,
  })
  .map((chars) => chars.join(''))
  .filter((s) => s !== '.' && s !== '..');

test.prop([fc.array(segment, { maxLength: 6 }), fc.boolean()], { numRuns: 1000 })(
  'accepts every path built from the allowed characters',
  (segments, trailingSlash) => {
    const path = `/${segments.join('/')}${trailingSlash && segments.length > 0 ? '/' : ''}`;
    expect(checkRequestPath(path)).toEqual({ ok: true });
  },
);
