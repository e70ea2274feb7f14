/**
 * The inspector page's files (`inspector/`, built into `dist/inspector/` by `npm run build`): served
 * from the package itself, never from a CDN, with the page's Content-Security-Policy.
 */
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SandboxError } from '../rules/errors.js';
import { PAGE_CSP } from './browser-policy.js';

/** Files of the page by the name the page asks for, with their types. */
const FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'inspector.css': 'text/css; charset=utf-8',
};

/** The built page: beside this module in the package (`dist/`), or `dist/` of a source checkout. */
function assetFolder(): string {
  const packaged = fileURLToPath(new URL('../inspector/', import.meta.url));
  return existsSync(`${packaged}app.js`)
    ? packaged
    : fileURLToPath(new URL('../dist/inspector/', import.meta.url));
}

/** One file to answer with. */
export interface Asset {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

const cache = new Map<string, Promise<Asset>>();

/**
 * The page's file `name` (`index.html`, `app.js`, `inspector.css`).
 *
 * @throws SandboxError `not_found` for any other name, or when the page was not built
 */
export function inspectorAsset(name: string): Promise<Asset> {
  const type = FILES[name];
  if (type === undefined) return Promise.reject(new SandboxError('no such file', { code: 'not_found' }));
  let asset = cache.get(name);
  if (asset === undefined) {
    asset = readFile(`${assetFolder()}${name}`).then(
      (body) => ({
        body,
        headers: { 'content-type': type, 'content-security-policy': PAGE_CSP, 'cache-control': 'no-cache' },
      }),
      () => {
        cache.delete(name);
        throw new SandboxError('the inspector page is not built (npm run build)', { code: 'not_found' });
      },
    );
    cache.set(name, asset);
  }
  return asset;
}
