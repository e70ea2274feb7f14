/**
 * Issue 24 item 6, as properties: whatever printable secret a form of `CREDENTIAL_FORMS` carries (quoted
 * or escaped as the shell needs), the recorded line shows none of it and keeps what came before it; a
 * plain secret gives exactly the form's masked line; a line without a credential is kept as it is.
 */
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { maskCredentials } from '../../daemon/credential-masking.js';
import { CREDENTIAL_FORMS, keptPrefix, shownParts } from '../support/credential-forms.js';

/** Printable ASCII, no whitespace, at least 8 characters. */
const secret = fc.stringMatching(/^[!-~]{8,40}$/);
/** Letters, digits, `_.-`, not first `-` (which would read as a flag). */
const plainSecret = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{7,39}$/);

for (const form of CREDENTIAL_FORMS) {
  test.prop([secret], { numRuns: 300 })(`${form.name}: no secret shows, the part before it stays`, (s) => {
    const masked = maskCredentials(form.line(s));
    expect(shownParts(masked, s, form)).toEqual([]);
    expect(masked.startsWith(keptPrefix(form))).toBe(true);
  });

  test.prop([plainSecret])(`${form.name}: a plain secret gives exactly the masked line`, (s) => {
    expect(maskCredentials(form.line(s))).toBe(form.masked);
  });
}

const word = fc.constantFrom(
  'ls',
  '-la',
  'echo',
  'hello',
  '"a b c"',
  "'x: y'",
  '/tmp/dir',
  'make',
  '--verbose',
  '-p',
  'grep',
  '-rn',
  'foo=bar',
  'https://example.org/a?b=c',
  '{"model": "m"}',
  '$HOME',
  'cd',
);
const separator = fc.constantFrom(' ', ' && ', ' | ', '; ', '\n');
const ordinaryLine = fc
  .array(fc.tuple(word, separator), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.map(([w, s]) => w + s).join(''));

test.prop([ordinaryLine])('a line without a credential is kept as it is', (line) => {
  expect(maskCredentials(line)).toBe(line);
});
