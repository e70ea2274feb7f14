/**
 * The E2B shim's `getHost` on the preview URLs (issue 28): E2B's host without a scheme, here the port's
 * preview URL without its scheme, its token and the slash after the port, for a control plane that
 * answers previews by path and one that answers them by host (`sdk serve --preview-domain`); computed
 * with no call, the port checked; the host routed by the control plane's own reading of a preview
 * request to the sandbox's port and the program's path. `trafficAccessToken` (E2B's one token for all
 * ports) is refused by name. A recording HTTP server stands where the control plane would be, answering
 * `connect` with the preview pattern a test sets.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { previewRequestOf } from '../../control-plane/preview-target.js';
import { portToken } from '../../protocol/preview-wire.js';
import { InvalidArgumentError as NativeInvalidArgumentError } from '../../rules/errors.js';
import {
  InvalidArgumentError,
  NotSupportedError,
  Sandbox,
  SandboxError,
} from '../../sdk/compat/e2b/index.js';
import { fakeSandboxInfo } from './sdk/fake-sandbox-info.js';

const SBX = '0123456789ab';
const PREVIEW_KEY = 'preview-key';

let server: Server;
let url: string;
const requests: string[] = [];
/** The `previewUrl` the fake control plane answers `connect` with (`{port}` for the port). */
let pattern = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method ?? ''} ${req.url ?? ''}`);
    const info = fakeSandboxInfo(SBX, 'running');
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method === 'POST' && req.url === `/v1/sandboxes/${SBX}/connect`) {
      send(200, { ...info, daemonUrl: url, previewUrl: pattern, previewKey: PREVIEW_KEY });
    } else if (req.method === 'GET' && req.url === `/v1/sandboxes/${SBX}`) {
      send(200, info);
    } else {
      send(401, { code: 'unauthenticated', message: 'not faked' });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  process.env.SDK_CONTROL_PLANE_URL = url;
});

afterAll(() => {
  server.close();
  Reflect.deleteProperty(process.env, 'SDK_CONTROL_PLANE_URL');
});

beforeEach(() => {
  requests.length = 0;
});

/** A shim handle connected to the fake control plane, which answers with `previewUrl`. */
async function connected(previewUrl: string): Promise<Sandbox> {
  pattern = previewUrl;
  const sbx = await Sandbox.connect(SBX, { accessToken: 'sandbox-token' });
  requests.length = 0;
  return sbx;
}

/** What the control plane makes of `GET http://${host}${path}` (its preview domain, if any). */
function routed(host: string, path: string, domain?: string): ReturnType<typeof previewRequestOf> {
  const target = new URL(`http://${host}${path}`);
  const req = { url: `${target.pathname}${target.search}`, headers: { host: target.host } };
  return previewRequestOf(req as unknown as IncomingMessage, domain);
}

describe("getHost: E2B's host of a port, on the preview URLs", () => {
  it('by path: the control plane host and the path to the port, no scheme, token or trailing slash', async () => {
    const sbx = await connected(`${url}/v1/sandboxes/${SBX}/ports/{port}/`);
    const host = sbx.getHost(3000);
    expect(host).toBe(`${url.slice('http://'.length)}/v1/sandboxes/${SBX}/ports/3000`);
    expect(sbx.getHost(8000)).toBe(`${url.slice('http://'.length)}/v1/sandboxes/${SBX}/ports/8000`);
    expect(host).not.toContain(portToken(PREVIEW_KEY, 3000));
    expect(host).not.toMatch(/^[a-z]+:\/\/|[?#]|\/$/);
    // The native URL is the same place with the token: getHost is it without scheme, token and slash.
    expect(sbx.native.ports.url(3000)).toBe(
      `http://${host}/?sdk_preview_token=${portToken(PREVIEW_KEY, 3000)}`,
    );
    expect(requests).toEqual([]); // no call
    // As E2B's programs use it: a path appended after a slash reaches that path of the port.
    expect(routed(host, '/api/items?q=1')).toMatchObject({
      sandboxId: SBX,
      port: 3000,
      path: '/api/items?q=1',
    });
    expect(routed(host, '/')).toMatchObject({ sandboxId: SBX, port: 3000, path: '/' });
    // The bare host is answered with a redirect to itself with a slash.
    expect(routed(host, '')).toBe('add-slash');
  });

  it("by host (sdk serve --preview-domain): E2B's own shape, <port>-<id>.<domain>, with the control plane's port", async () => {
    const sbx = await connected(`http://{port}-${SBX}.preview.test:4780/`);
    const host = sbx.getHost(3000);
    expect(host).toBe(`3000-${SBX}.preview.test:4780`);
    expect(requests).toEqual([]);
    expect(routed(host, '/api?q=1', 'preview.test')).toMatchObject({
      sandboxId: SBX,
      port: 3000,
      path: '/api?q=1',
      cookiePath: '/',
    });
    expect(routed(host, '/', 'preview.test')).toMatchObject({ sandboxId: SBX, port: 3000, path: '/' });
  });

  it("by host on port 80: exactly E2B's shape", async () => {
    const sbx = await connected(`http://{port}-${SBX}.preview.test/`);
    expect(sbx.getHost(5173)).toBe(`5173-${SBX}.preview.test`);
  });

  it("checks the port before anything, as E2B's InvalidArgumentError (also the native class)", async () => {
    const sbx = await connected(`${url}/v1/sandboxes/${SBX}/ports/{port}/`);
    for (const port of [0, 65_536, 80.5, Number.NaN, '3000' as unknown as number]) {
      let error: unknown;
      try {
        sbx.getHost(port);
      } catch (thrown) {
        error = thrown;
      }
      expect(error, String(port)).toBeInstanceOf(InvalidArgumentError);
      expect(error).toBeInstanceOf(NativeInvalidArgumentError);
    }
    expect(sbx.getHost(1)).toMatch(/\/ports\/1$/);
    expect(sbx.getHost(65_535)).toMatch(/\/ports\/65535$/);
    expect(requests).toEqual([]);
  });
});

describe('trafficAccessToken: per sandbox in E2B, per port here', () => {
  it('is NotSupportedError naming it and the per-port token, and never shows in the handle', async () => {
    const sbx = await connected(`${url}/v1/sandboxes/${SBX}/ports/{port}/`);
    let error: unknown;
    try {
      expect.fail(`not refused: ${String(sbx.trafficAccessToken)}`);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(NotSupportedError);
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({ feature: 'trafficAccessToken', code: 'not_supported' });
    expect((error as Error).message).toMatch(
      /per port.*sbx\.native\.ports\.token\(port\).*x-sdk-preview-token/,
    );
    // A getter on the prototype: the handle's own keys never show it, and listing them never calls it.
    expect(Object.keys(sbx)).not.toContain('trafficAccessToken');
    expect(() => Object.entries(sbx)).not.toThrow();
    expect(requests).toEqual([]);
  });
});
