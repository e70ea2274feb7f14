/**
 * Which sandbox port a request is a preview of (control-plane/preview-target.ts), over generated ids,
 * ports, paths, queries and cookies: the path-based and host-based forms name the same sandbox and port,
 * the path and query reach the port without the token parameter, the token is read from the query, the
 * header or the cookie (in that order), and the preview's cookie is dropped from what is forwarded
 * while every other cookie stays.
 */
import type { IncomingMessage } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cookiesWithoutPreview, previewRequestOf } from '../../control-plane/preview-target.js';
import { portToken, previewUrlOf } from '../../protocol/preview-wire.js';

const id = fc.stringMatching(/^[a-f0-9]{12}$/);
const port = fc.integer({ min: 1, max: 65_535 });
const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/);
const appPath = fc.array(segment, { maxLength: 4 }).map((parts) => `/${parts.join('/')}`);
const query = fc.array(fc.tuple(segment, segment), { maxLength: 3 });
const token = fc.stringMatching(/^[A-Za-z0-9_-]{43}$/);

const requestOf = (url: string, headers: Record<string, string>): IncomingMessage =>
  ({ url, headers }) as unknown as IncomingMessage;

const search = (pairs: readonly (readonly [string, string])[]): string =>
  pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`;

describe('preview requests', () => {
  it('by path and by host name the same port and send the same path, without the token', () => {
    fc.assert(
      fc.property(id, port, appPath, query, token, (sandboxId, p, path, pairs, t) => {
        const withToken = `${search(pairs)}${pairs.length === 0 ? '?' : '&'}sdk_preview_token=${t}`;
        const byPath = previewRequestOf(
          requestOf(`/v1/sandboxes/${sandboxId}/ports/${String(p)}${path}${withToken}`, {
            host: '127.0.0.1:4780',
          }),
          'preview.test',
        );
        const byHost = previewRequestOf(
          requestOf(`${path}${withToken}`, { host: `${String(p)}-${sandboxId}.preview.test:4780` }),
          'preview.test',
        );
        const expected = { sandboxId, port: p, path: `${path}${search(pairs)}`, queryToken: t, token: t };
        expect(byPath).toEqual({ ...expected, cookiePath: `/v1/sandboxes/${sandboxId}/ports/${String(p)}/` });
        expect(byHost).toEqual({ ...expected, cookiePath: '/' });
      }),
    );
  });

  it('reads the token from the header, else the cookie; other cookies are forwarded untouched', () => {
    fc.assert(
      fc.property(
        id,
        port,
        token,
        token,
        fc.array(fc.tuple(segment, segment), { maxLength: 3 }),
        (sandboxId, p, header, cookie, others) => {
          const theirs = others.filter(([name]) => name !== 'sdk_preview').map(([k, v]) => `${k}=${v}`);
          const cookies = [...theirs, `sdk_preview=${cookie}`].join('; ');
          const url = `/v1/sandboxes/${sandboxId}/ports/${String(p)}/`;
          const withHeader = previewRequestOf(
            requestOf(url, { 'x-sdk-preview-token': header, cookie: cookies }),
            undefined,
          );
          const withCookie = previewRequestOf(requestOf(url, { cookie: cookies }), undefined);
          expect(withHeader).toMatchObject({ token: header });
          expect(withCookie).toMatchObject({ token: cookie });
          expect(withCookie).not.toHaveProperty('queryToken');
          expect(cookiesWithoutPreview(cookies)).toBe(theirs.length === 0 ? undefined : theirs.join('; '));
        },
      ),
    );
  });

  it('sends the path and query exactly as they came: no dot segment resolved, nothing re-encoded', () => {
    const sent = '/a/../b/./c%2Fd?q=a%20b+c&sdk_preview_token=t&z=%7E';
    expect(
      previewRequestOf(requestOf(`/v1/sandboxes/abc123abc123/ports/80${sent}`, {}), undefined),
    ).toMatchObject({
      path: '/a/../b/./c%2Fd?q=a%20b+c&z=%7E',
      token: 't',
    });
  });

  it('is not a preview elsewhere; the form without the slash after the port is sent there', () => {
    const plain = (url: string, host = '127.0.0.1:4780') =>
      previewRequestOf(requestOf(url, { host }), 'preview.test');
    expect(plain('/v1/sandboxes/abc123abc123')).toBeUndefined();
    expect(plain('/v1/sandboxes/abc123abc123/ports/x/')).toBeUndefined();
    expect(plain('/v1/sandboxes/abc123abc123/ports/8000')).toBe('add-slash');
    expect(plain('/v1/sandboxes', 'evil.example')).toBeUndefined();
    expect(plain('/', '8000-abc123abc123.other.test')).toBeUndefined(); // not the preview domain
    expect(
      previewRequestOf(requestOf('/', { host: '8000-abc123abc123.preview.test' }), undefined),
    ).toBeUndefined();
  });
});

describe('port tokens', () => {
  it('are HMAC-SHA256 of "port N" under the preview key, base64url (the Python SDK computes the same)', () => {
    expect(portToken('key-1', 8000)).toBe('Zo0Ud7XvkLiftlCun9BXKsKPzP91C2i_FGKbP1AmP-0');
    expect(previewUrlOf('http://h/v1/sandboxes/s/ports/{port}/', 8000, 'tok')).toBe(
      'http://h/v1/sandboxes/s/ports/8000/?sdk_preview_token=tok',
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), port, port, (key, a, b) => {
        fc.pre(a !== b);
        expect(portToken(key, a)).not.toBe(portToken(key, b));
      }),
    );
  });
});
