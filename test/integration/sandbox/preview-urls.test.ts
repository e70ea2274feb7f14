/**
 * Preview URLs (issue 28) against a real namespace sandbox: a web app in the sandbox on its loopback,
 * reached through the control plane by path, with and without its port token (query, header, cookie),
 * server-sent events unbuffered, a WebSocket, public ports, a suspended sandbox woken by a request, an
 * ended one answering 410, and sandboxd's own ports never reached.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, WebSocket } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EGRESS_PORTS } from '../../../protocol/egress-wire.js';
import { PREVIEW_TOKEN_HEADER } from '../../../protocol/preview-wire.js';
import { SecretCache } from '../../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../../sdk/secret-store/secret-store.js';
import { SecretGateway } from '../../../sdk/secret-gateway.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';
import { PREVIEW_APP } from '../support/preview-app.js';

const APP_PORT = 8000;

/** Starts the app in `sbx` on `port` and waits for its line. */
async function startApp(sbx: Sandbox, port = APP_PORT): Promise<void> {
  await sbx.files.write('/tmp/app.mjs', PREVIEW_APP);
  await new Promise<void>((resolve, reject) => {
    sbx.commands
      .run(`node /tmp/app.mjs ${String(port)}`, {
        background: true,
        onStdout: (data) => {
          if (data.includes('listening')) resolve();
        },
      })
      .catch(reject);
  });
}

/** A GET of `url` (undici, no redirects followed): status, headers and body text. */
async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { headers });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

describe('preview URLs', { timeout: 120_000 }, () => {
  let cp: InProcessControlPlane;
  let sbx: Sandbox;
  let other: Sandbox;
  let dir: string;

  beforeAll(async () => {
    cp = await startControlPlane();
    dir = mkdtempSync(join(tmpdir(), 'sdk-preview-'));
    const store = new SecretStore({ file: join(dir, 'secrets.json') });
    await store.create('route-key', 'route-secret-value-1234');
    [sbx, other] = await Promise.all([
      cp.createSandbox({
        secretCache: new SecretCache({ store }),
        gateways: {
          // A route's listener on the sandbox's loopback: never a preview's target.
          api: new SecretGateway({
            upstream: 'https://upstream.invalid',
            headers: { authorization: 'route-key' },
            allow: [['GET', '/*']],
          }),
        },
      }),
      cp.createSandbox(),
    ]);
    await Promise.all([startApp(sbx), startApp(other)]);
  });

  afterAll(async () => {
    await Promise.all([sbx.kill().catch(() => undefined), other.kill().catch(() => undefined)]);
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('forwards HTTP by path with the port token, never passing the token on to sandbox code', async () => {
    const url = sbx.ports.url(APP_PORT);
    expect(url).toBe(
      `${cp.url}/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}/?sdk_preview_token=${sbx.ports.token(APP_PORT)}`,
    );
    const echoUrl = url.replace(`/${String(APP_PORT)}/?`, `/${String(APP_PORT)}/echo?a=1&`);
    const answer = await get(echoUrl, { cookie: 'theirs=1' });
    expect(answer.status).toBe(200);
    const seen = JSON.parse(answer.text) as { path: string; headers: Record<string, string> };
    expect(seen.path).toBe('/echo?a=1');
    expect(seen.headers['host']).toBe(`localhost:${String(APP_PORT)}`);
    expect(seen.headers['cookie']).toBe('theirs=1');
    expect(seen.headers['x-forwarded-prefix']).toBe(
      `/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}`,
    );
    expect(answer.text).not.toContain(sbx.ports.token(APP_PORT));

    // The header form, for programs; the header does not reach the app either.
    const base = `${cp.url}/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}`;
    const byHeader = await get(`${base}/echo`, { [PREVIEW_TOKEN_HEADER]: sbx.ports.token(APP_PORT) });
    expect(byHeader.status).toBe(200);
    expect(byHeader.text).not.toContain(sbx.ports.token(APP_PORT));
    // The form without the slash after the port is sent there (relative links need it).
    const bare = await get(base);
    expect(bare.status).toBe(308);
    expect(bare.headers['location']).toBe(`/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}/`);
  });

  it("refuses a private port without its token, with another port's, and with another sandbox's", async () => {
    const base = `${cp.url}/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}/echo`;
    for (const token of [
      undefined,
      sbx.ports.token(APP_PORT + 1),
      other.ports.token(APP_PORT),
      'x'.repeat(43),
    ]) {
      const answer = await get(base, token === undefined ? {} : { [PREVIEW_TOKEN_HEADER]: token });
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text)).toMatchObject({ code: 'unauthenticated' });
    }
    // The other sandbox's own token opens its own app.
    expect((await get(other.ports.url(APP_PORT))).status).toBe(200);
  });

  it("exchanges a link's token for an HTTP-only cookie scoped to the sandbox and port", async () => {
    const navigation = { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
    const first = await get(sbx.ports.url(APP_PORT).replace('/?', '/echo?b=2&'), navigation);
    expect(first.status).toBe(303);
    expect(first.headers['location']).toBe(
      `/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}/echo?b=2`,
    );
    const cookie = String(first.headers['set-cookie']);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain(`Path=/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}/`);
    const pair = cookie.split(';')[0] ?? '';
    const followed = await get(`${cp.url}${String(first.headers['location'])}`, {
      cookie: `${pair}; mine=2`,
    });
    expect(followed.status).toBe(200);
    const seen = JSON.parse(followed.text) as { headers: Record<string, string> };
    expect(seen.headers['cookie']).toBe('mine=2'); // the preview's cookie stays with the control plane
  });

  it('passes server-sent events as they come and WebSockets both ways', async () => {
    const base = `${cp.url}/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}`;
    const auth = { [PREVIEW_TOKEN_HEADER]: sbx.ports.token(APP_PORT) };
    const stream = await request(`${base}/sse`, { headers: auth });
    expect(stream.headers['content-type']).toBe('text/event-stream');
    const events: string[] = [];
    let text = '';
    for await (const chunk of stream.body) {
      text += (chunk as Buffer).toString();
      if (events.length === 0 && text.includes('data: one\n\n')) {
        events.push('one');
        // The second event is sent only once the first arrived here: a buffering proxy never gets it.
        expect((await get(`${base}/next`, auth)).text).toBe('released');
      }
    }
    expect(text).toBe('data: one\n\ndata: two\n\n');

    const ws = new WebSocket(`${base.replace('http', 'ws')}/ws`, { headers: auth });
    const reply = await new Promise<string>((resolve, reject) => {
      ws.onopen = () => ws.send('hi there');
      ws.onmessage = (message) => resolve(String(message.data));
      ws.onerror = () => reject(new Error('websocket failed'));
    });
    ws.close();
    expect(reply).toBe('echo:hi there');
  });

  it('lets anyone in to a public port, until it is private again', async () => {
    const open = `${cp.url}/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}/echo`;
    await sbx.ports.expose(APP_PORT, { public: true });
    expect(await sbx.ports.publicPorts()).toEqual([APP_PORT]);
    expect((await get(open)).status).toBe(200);
    await sbx.ports.expose(APP_PORT, { public: false });
    expect((await get(open)).status).toBe(401);
    await expect(sbx.ports.expose(0, { public: true })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
    });
    expect(() => sbx.ports.url(70_000)).toThrow(/port/);
  });

  it("never reaches sandboxd's own ports, and says when nothing listens", async () => {
    const route = sbx.gateways.get('api');
    const daemonPort = Number(
      new URL((await cp.plane.connect(sbx.sandboxId, sbx.accessToken)).daemonUrl).port,
    );
    const forbidden = [
      Number(new URL(route?.url ?? '').port),
      daemonPort,
      EGRESS_PORTS.tls,
      EGRESS_PORTS.dns,
    ];
    for (const port of forbidden) {
      const answer = await get(sbx.ports.url(port));
      expect(answer.status, `port ${String(port)}`).toBe(403);
      expect(JSON.parse(answer.text)).toMatchObject({ code: 'port_forbidden' });
    }
    const closed = await get(sbx.ports.url(8999));
    expect(closed.status).toBe(502);
    expect(JSON.parse(closed.text)).toMatchObject({ code: 'port_closed' });
  });

  it('wakes a paused sandbox for a request, and answers 410 for an ended one without waking anything', async () => {
    await other.pause();
    expect(cp.plane.get(other.sandboxId).state).toBe('suspended');
    const answer = await get(other.ports.url(APP_PORT).replace('/?', '/echo?'));
    expect(answer.status).toBe(200);
    expect(cp.plane.get(other.sandboxId).state).toBe('running');

    await other.kill();
    const gone = await get(other.ports.url(APP_PORT));
    expect(gone.status).toBe(410);
    expect(JSON.parse(gone.text)).toMatchObject({ code: 'sandbox_ended' });
  });
});

describe('preview URLs of a gVisor sandbox (through its box relay)', { timeout: 120_000 }, () => {
  let cp: InProcessControlPlane;
  let sbx: Sandbox;

  beforeAll(async () => {
    cp = await startControlPlane();
    sbx = await cp.createSandbox({ isolation: 'gvisor' });
    await startApp(sbx);
  });

  afterAll(async () => {
    await sbx.kill().catch(() => undefined);
    await cp.stop();
  });

  it("reaches the box's loopback: HTTP, events as they come, a WebSocket; a closed port is port_closed", async () => {
    const base = `${cp.url}/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}`;
    const auth = { [PREVIEW_TOKEN_HEADER]: sbx.ports.token(APP_PORT) };
    const echo = await get(`${base}/echo?x=1`, auth);
    expect(echo.status).toBe(200);
    expect((JSON.parse(echo.text) as { path: string }).path).toBe('/echo?x=1');

    const stream = await request(`${base}/sse`, { headers: auth });
    let text = '';
    for await (const chunk of stream.body) {
      text += (chunk as Buffer).toString();
      if (text === 'data: one\n\n') expect((await get(`${base}/next`, auth)).text).toBe('released');
    }
    expect(text).toBe('data: one\n\ndata: two\n\n');

    const ws = new WebSocket(`${base.replace('http', 'ws')}/ws`, { headers: auth });
    const reply = await new Promise<string>((resolve, reject) => {
      ws.onopen = () => ws.send('through the relay');
      ws.onmessage = (message) => resolve(String(message.data));
      ws.onerror = () => reject(new Error('websocket failed'));
    });
    ws.close();
    expect(reply).toBe('echo:through the relay');

    const closed = await get(sbx.ports.url(8999));
    expect(closed.status).toBe(502);
    expect(JSON.parse(closed.text)).toMatchObject({ code: 'port_closed' });
  });
});
