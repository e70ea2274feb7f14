/**
 * `console.log(sbx)` must not print the sandbox's access token: a `Sandbox` (native, and the E2B shim's
 * with its `native`) never shows the token, nor the operator key it was created with, in `util.inspect`
 * (any depth, hidden properties too), `JSON.stringify`, `String()` or an error; `sbx.accessToken` still
 * gives the token. A fake control plane and sandboxd on one loopback server stand in for the real ones.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { format, inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuthenticationError, Sandbox, SandboxError } from '../../../sdk/index.js';
import { Sandbox as E2BSandbox } from '../../../sdk/compat/e2b/index.js';
import { SECRET_VALUE, useFakeSandboxd } from './agent-fake-sandboxd.js';
import { fakeSandboxInfo } from './fake-sandbox-info.js';

const SANDBOX_ID = '0123456789ab';
const TOKEN = 'tok-SECRET-a1b2c3d4e5f6a7b8c9d0';
const OPERATOR_KEY = 'op-KEY-SECRET-5f4e3d2c1b0a';
const WRONG_TOKEN = 'wrong-tok-SECRET-99887766';

let server: Server;
let url: string;

const info = (state: 'running' | 'ended'): Record<string, unknown> => fakeSandboxInfo(SANDBOX_ID, state);

/** The fake: create needs the operator key, everything else the sandbox's token. */
function answer(req: IncomingMessage, res: ServerResponse): void {
  const json = (status: number, value: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const route = `${req.method ?? 'GET'} ${(req.url ?? '/').split('?')[0] ?? ''}`;
  const auth = req.headers.authorization;
  if (route === 'POST /v1/sandboxes') {
    if (auth !== `Bearer ${OPERATOR_KEY}`) {
      json(401, { code: 'unauthenticated', message: 'missing or invalid operator key' });
      return;
    }
    json(200, {
      ...info('running'),
      daemonUrl: url,
      accessToken: TOKEN,
      previewKey: 'k',
      previewUrl: '/{port}/',
    });
    return;
  }
  if (auth !== `Bearer ${TOKEN}`) {
    json(401, { code: 'unauthenticated', message: 'missing or invalid token' });
    return;
  }
  if (route === `POST /v1/sandboxes/${SANDBOX_ID}/connect`)
    json(200, { ...info('running'), daemonUrl: url, previewUrl: '/{port}/' });
  else if (route === `POST /v1/sandboxes/${SANDBOX_ID}/activity`) json(200, info('running'));
  else if (route === `GET /v1/sandboxes/${SANDBOX_ID}`) json(200, info('running'));
  else if (route === `DELETE /v1/sandboxes/${SANDBOX_ID}`) json(200, info('ended'));
  else if (route === 'GET /v1/gateways') json(200, { routes: {} });
  else if (route === 'PUT /v1/secrets') json(200, { names: [] });
  else json(404, { code: 'not_found', message: `no such endpoint: ${route}` });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  vi.stubEnv('SDK_CONTROL_PLANE_URL', url);
  vi.stubEnv('SDK_API_KEY', OPERATOR_KEY);
  vi.stubEnv('SDK_ACCESS_TOKEN', '');
  vi.stubEnv('E2B_DOMAIN', '');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

/** Every way a program or a logger shows a value. */
function renderings(value: unknown): Record<string, string> {
  return {
    inspect: inspect(value),
    'inspect depth Infinity': inspect(value, { depth: Infinity }),
    'inspect showHidden': inspect(value, { showHidden: true, depth: Infinity }),
    'inspect getters': inspect(value, { showHidden: true, depth: Infinity, getters: true }),
    'format %o': format('%o', value),
    'format %O': format('%O', value),
    'format %j': format('%j', value),
    'format %s': format('%s', value),
    'JSON.stringify': JSON.stringify(value),
    String: String(value),
  };
}

/** The renderings of `value` that show one of `secrets`, as `how: secret`. */
function leaks(value: unknown, secrets: readonly string[]): string[] {
  return Object.entries(renderings(value)).flatMap(([how, text]) =>
    secrets.filter((secret) => text.includes(secret)).map((secret) => `${how}: ${secret}`),
  );
}

/** The error `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error as Error,
  );
}

describe('the native Sandbox never shows its access token', () => {
  it('not in inspect (any depth, hidden too), JSON, String or format, of the handle or its parts', async () => {
    const sbx = await Sandbox.create({ template: 'sdk-base' });
    expect(sbx.accessToken).toBe(TOKEN); // the public getter still gives it
    for (const value of [sbx, sbx.commands, sbx.files, sbx.gateways, sbx.agent, [sbx], { sbx }]) {
      expect(leaks(value, [TOKEN, OPERATOR_KEY])).toEqual([]);
    }
    expect(JSON.parse(JSON.stringify(sbx))).toEqual({ sandboxId: SANDBOX_ID });
    expect(Object.keys(sbx)).not.toContain('accessToken');
    expect(inspect(sbx)).toContain(SANDBOX_ID);
  });

  it('a connected handle neither', async () => {
    const sbx = await Sandbox.connect(SANDBOX_ID, { accessToken: TOKEN, controlPlaneUrl: url });
    expect(sbx.accessToken).toBe(TOKEN);
    expect(leaks(sbx, [TOKEN])).toEqual([]);
    expect(JSON.parse(JSON.stringify(sbx))).toEqual({ sandboxId: SANDBOX_ID });
  });

  it('not in the errors of a refused token or of an ended sandbox', async () => {
    const error = await failure(
      Sandbox.connect(SANDBOX_ID, { accessToken: WRONG_TOKEN, controlPlaneUrl: url }),
    );
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(leaks(error, [WRONG_TOKEN])).toEqual([]);
    expect(`${error.message}\n${error.stack ?? ''}`).not.toContain(WRONG_TOKEN);

    const sbx = await Sandbox.create({ template: 'sdk-base' });
    await sbx.kill();
    const ended = await failure(sbx.kill());
    expect(ended).toBeInstanceOf(SandboxError);
    expect(leaks(ended, [TOKEN, OPERATOR_KEY])).toEqual([]);
    expect(`${ended.message}\n${ended.stack ?? ''}`).not.toContain(TOKEN);
  });
});

describe('a creating handle with gateways', () => {
  const world = useFakeSandboxd();

  it('shows neither its token, the operator key nor a gateway secret', () => {
    const { sbx, fake } = world;
    expect(sbx.accessToken).toBe(fake.accessToken);
    for (const value of [sbx, sbx.gateways, sbx.agent]) {
      expect(leaks(value, [fake.accessToken, 'operator-key', SECRET_VALUE])).toEqual([]);
    }
  });
});

describe("the E2B shim's Sandbox never shows the token", () => {
  // The shim remembers the token of each sandbox it made or connected, for the whole process; unit files
  // share modules (isolate: false), so a handle left alive lets a later file connect to SANDBOX_ID
  // without a token.
  const handles: E2BSandbox[] = [];
  afterEach(async () => {
    await Promise.all(handles.splice(0).map((sbx) => sbx.kill()));
  });

  it('not the shim handle, nor its native handle, nor the operator key', async () => {
    const sbx = await E2BSandbox.create();
    handles.push(sbx);
    expect(sbx.native.accessToken).toBe(TOKEN);
    for (const value of [sbx, sbx.native, sbx.files, sbx.commands, [sbx], { sbx }]) {
      expect(leaks(value, [TOKEN, OPERATOR_KEY])).toEqual([]);
    }
    expect(JSON.parse(JSON.stringify(sbx.native))).toEqual({ sandboxId: SANDBOX_ID });
  });

  it('a connected shim handle and a list paginator neither', async () => {
    const sbx = await E2BSandbox.connect(SANDBOX_ID, { accessToken: TOKEN });
    handles.push(sbx);
    expect(leaks(sbx, [TOKEN, OPERATOR_KEY])).toEqual([]);
    expect(leaks(sbx.native, [TOKEN, OPERATOR_KEY])).toEqual([]);
    expect(leaks(E2BSandbox.list(), [OPERATOR_KEY])).toEqual([]);
  });
});
