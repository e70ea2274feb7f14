/**
 * DNS rebinding: a site whose name is made to resolve to the control plane's address is same-origin with
 * it in the browser's eyes, so the control plane answers only requests whose `Host` is its own (loopback's
 * names or the listening address, at any port) or a name it was given; any other is refused
 * with `forbidden_host` (403) before any route, the inspector page's files included.
 */
import { request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../../control-plane/control-plane.js';
import { createControlPlaneServer } from '../../../control-plane/http-api.js';
import { errorFromEnvelope } from '../../../protocol/error-envelope.js';
import { AuthenticationError } from '../../../rules/errors.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const OPERATOR_KEY = 'operator-key-for-host-tests-0123456789';

let world: MemoryPlaneWorld;
let plane: ControlPlane;
const servers: Server[] = [];

beforeEach(async () => {
  world = new MemoryPlaneWorld();
  plane = await world.start({ operatorKey: OPERATOR_KEY });
});
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await world.dispose();
});

async function serve(allowedHosts?: readonly string[]): Promise<number> {
  const server = createControlPlaneServer(plane, allowedHosts === undefined ? {} : { allowedHosts });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A GET to the server on 127.0.0.1:`port` with `Host: host` (node:http lets a test set it). */
function get(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        headers: { host, authorization: `Bearer ${OPERATOR_KEY}` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('the Host allowlist', () => {
  it("answers loopback's names, at any port (a proxy or a forwarded port in front)", async () => {
    const port = await serve();
    for (const name of ['127.0.0.1', 'localhost', 'LocalHost', '[::1]']) {
      for (const at of [`:${String(port)}`, `:${String(port + 1)}`, '']) {
        const answer = await get(port, '/v1/machines', `${name}${at}`);
        expect(answer.status, `${name}${at}`).toBe(200);
      }
    }
    // The SDK's client (undici) names the address of the URL it was given.
    const res = await request(`http://127.0.0.1:${String(port)}/v1/sandboxes`, {
      headers: { authorization: `Bearer ${OPERATOR_KEY}` },
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  });

  it('refuses any other name with forbidden_host before any route', async () => {
    const port = await serve();
    const p = String(port);
    for (const host of [
      `evil.example:${p}`,
      'evil.example',
      `localhost.evil.example:${p}`,
      'localhost.',
      '127.0.0.2',
      `10.0.0.1:${p}`,
      `[::2]:${p}`,
    ]) {
      for (const path of ['/v1/machines', '/inspector/', '/', '/v1/no-such-thing']) {
        const answer = await get(port, path, host);
        expect(answer.status, `${host} ${path}`).toBe(403);
        const envelope = JSON.parse(answer.body) as unknown;
        expect(envelope).toEqual({ code: 'forbidden_host', message: expect.any(String) as string });
        const error = errorFromEnvelope(envelope);
        expect(error).toBeInstanceOf(AuthenticationError);
        expect(error.code).toBe('forbidden_host');
      }
    }
    expect(plane.list()).toEqual([]);
  });

  it('refuses a request without Host', async () => {
    const port = await serve();
    // HTTP/1.0 may leave Host out (node:http's client always sends one): a raw request.
    const socket = connect(port, '127.0.0.1');
    socket.end('GET /v1/openapi.json HTTP/1.0\r\n\r\n');
    let text = '';
    for await (const chunk of socket) text += String(chunk);
    expect(text).toMatch(/^HTTP\/1\.[01] 403 /);
    expect(text).toContain('"forbidden_host"');
  });

  it('answers the names it was given, at any port', async () => {
    const port = await serve(['cp.example', 'CP2.Example', '::1']);
    for (const host of [
      `cp.example:${String(port)}`,
      'cp.example:8443',
      'cp2.example',
      `[::1]:${String(port)}`,
    ]) {
      expect((await get(port, '/v1/machines', host)).status, host).toBe(200);
    }
    expect((await get(port, '/v1/machines', 'cp3.example')).status).toBe(403);
  });
});
