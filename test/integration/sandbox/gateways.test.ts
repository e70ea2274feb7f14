import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InspectionRecord } from '../../../actors/actor-system.js';
import { SecretGateway } from '../../../sdk/secret-gateway.js';
import { SecretCache } from '../../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../../sdk/secret-store/secret-store.js';
import { IdlePolicy } from '../../../sdk/idle-policy.js';
import { PoolConfig } from '../../../sdk/pool-config.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { SandboxPool } from '../../../sdk/sandbox-pool.js';
import { InvalidArgumentError, SandboxError, SecretNotFoundError } from '../../../rules/errors.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';
import { useGatewayWorld } from '../support/gateway-world.js';

const world = useGatewayWorld(6);
const VALUE = 'sk-e2e-planted-secret-0123456789abcdef';
let cp: InProcessControlPlane;
let dir: string;
let cache: SecretCache;

beforeAll(async () => {
  cp = await startControlPlane({ gatewayCa: world.pki.caPem });
  dir = mkdtempSync(join(tmpdir(), 'sdk-secrets-'));
  const store = new SecretStore({ file: join(dir, 'secrets.json') });
  await store.create('llm-key', VALUE);
  cache = new SecretCache({ store });
});

afterAll(async () => {
  await cp.stop();
  rmSync(dir, { recursive: true, force: true });
});

const gateway = (secret: string) =>
  new SecretGateway({
    upstream: world.upstream.origin,
    headers: { 'x-api-key': secret },
    allow: [['GET', '/*']],
  });

const create = (secret: string, keepOnFailure = false) =>
  Sandbox.create({
    template: 'sdk-base-caps',
    allowInternetAccess: false,
    controlPlaneUrl: cp.url,
    gateways: { llm: gateway(secret) },
    secretCache: cache,
    keepOnFailure,
  });

describe('a gateway inside a sandbox with closed egress', () => {
  it('lets sandbox code use the secret through the route but never read it', async () => {
    const sbx = await create('llm-key');
    const route = sbx.gateways.get('llm');
    expect(route).toMatchObject({ lastErrorClass: undefined });
    expect(route?.url).toBe(`http://127.0.0.1:${String(route?.port)}`);
    const fetchThrough = (url: string) =>
      `node -e "fetch('${url}').then((r) => r.text()).then(console.log, (e) => console.log('failed', e.cause?.code ?? e.message))"`;

    // Through the gateway: the upstream receives the injected header (this upstream echoes it back).
    expect((await sbx.commands.run(fetchThrough(`${route?.url ?? ''}/echo`))).stdout).toContain(VALUE);
    // Directly: closed egress refuses sandbox code.
    expect((await sbx.commands.run(fetchThrough(`${world.upstream.origin}/echo`))).stdout).toMatch(/^failed/);
    // Nowhere else in reach of sandbox code: environment, files, process list, command lines.
    // The pattern travels base64-encoded into a file, so no command line carries it.
    const pattern = Buffer.from(VALUE.slice(0, 20)).toString('base64');
    const search = await sbx.commands.run(
      `echo ${pattern} | base64 -d > /tmp/.p; { env; ps -eo args; cat /proc/[0-9]*/cmdline; cat /proc/[0-9]*/environ; } 2>/dev/null | grep -a -c -F -f /tmp/.p; grep -rs -l -F -f /tmp/.p /home /tmp /run /var /etc --exclude=.p; echo end`,
    );
    expect(search.stdout).toBe('0\nend\n');
    expect(search.stdout + search.stderr).not.toContain(VALUE.slice(0, 20));
    await sbx.kill();
  });

  it('raises SecretNotFoundError for a missing secret and terminates the new sandbox', async () => {
    const before = await cp.driver.list();
    await expect(create('no-such-secret')).rejects.toBeInstanceOf(SecretNotFoundError);
    await expect.poll(async () => (await cp.driver.list()).length).toBe(before.length);
  });

  it('reports a configuration the daemon refuses with its failure class and terminates the new sandbox', async () => {
    const store = new SecretStore({ file: join(dir, 'secrets.json') });
    await store.create('newline-key', `${VALUE}\nx-smuggled: 1`);
    const before = await cp.driver.list();
    const error = await create('newline-key').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as SandboxError).failureClass).toBe('InvalidHeaderValueError');
    expect((error as Error).message).toContain('InvalidHeaderValueError');
    expect((error as Error).message).not.toContain(VALUE);
    await expect.poll(async () => (await cp.driver.list()).length).toBe(before.length);
  });

  it('lets a connected handle read gateway state, never definitions or values', async () => {
    const sbx = await create('llm-key');
    const other = await Sandbox.connect(sbx.sandboxId, {
      accessToken: sbx.accessToken,
      controlPlaneUrl: cp.url,
    });
    expect(other.gateways.get('llm')).toEqual(sbx.gateways.get('llm'));
    await other.gateways.refresh(); // only re-reads state
    expect(JSON.stringify([...other.gateways])).not.toContain(VALUE);
    await sbx.kill();
  });

  it('keeps the injected header over one sandbox code sends, and answers 403, 429 and 502 as SPEC says', async () => {
    const sbx = await Sandbox.create({
      template: 'sdk-base-caps',
      allowInternetAccess: false,
      controlPlaneUrl: cp.url,
      secretCache: cache,
      gateways: {
        llm: new SecretGateway({
          upstream: world.upstream.origin,
          headers: { 'x-api-key': 'llm-key' },
          allow: [['GET', '/echo']],
          ratePerMinute: 1,
        }),
        broken: new SecretGateway({
          upstream: world.upstream.untrustedOrigin,
          headers: { 'x-api-key': 'llm-key' },
          allow: [['GET', '/*']],
        }),
      },
    });
    const llm = sbx.gateways.get('llm')?.url ?? '';
    const broken = sbx.gateways.get('broken')?.url ?? '';
    const script = `
      const show = async (url, headers) => { const r = await fetch(url, { headers }); console.log(r.status, (await r.text()).replace(/\\s+/g, ' ')); };
      await show('${llm}/echo', { 'x-api-key': 'mine', 'X_API_KEY': 'mine-too' });
      await show('${llm}/echo;admin');
      await show('${llm}/other');
      await show('${llm}/echo');
      await show('${broken}/echo');
    `;
    const { stdout } = await sbx.commands.run(`node --input-type=module -e "${script.replace(/"/g, '\\"')}"`);
    const [first, traversal, outside, limited, tls] = stdout.trim().split('\n');
    expect(first).toMatch(/^200 /);
    expect(first).toContain(VALUE);
    expect(first).not.toContain('mine');
    expect(traversal).toBe('403 {"code":"path_forbidden"}');
    expect(outside).toBe('403 {"code":"not_allowed"}');
    expect(limited).toBe('429 {"code":"rate_limited"}');
    expect(tls).toBe('502 {"code":"upstream_error"}');
    await sbx.kill();
  });

  it('rotates the value on a live keep-alive connection when the creating handle refreshes', async () => {
    const rotating = new SecretStore({ file: join(dir, 'rotating.json') });
    await rotating.create('rotating-key', 'sk-rotation-first-000000000');
    const sbx = await Sandbox.create({
      template: 'sdk-base-caps',
      allowInternetAccess: false,
      controlPlaneUrl: cp.url,
      secretCache: new SecretCache({ store: rotating }),
      gateways: { llm: gateway('rotating-key') },
    });
    const url = sbx.gateways.get('llm')?.url ?? '';
    const port = sbx.gateways.get('llm')?.port;
    // One client, one connection: request, wait for /tmp/go, request again on the same socket.
    const script = `
      const http = await import('node:http');
      const fs = await import('node:fs');
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const get = () => new Promise((ok) => http.get('${url}/echo', { agent }, (r) => { const p = r.socket.localPort; let b = ''; r.on('data', (d) => (b += d)); r.on('end', () => ok([p, b])); }));
      const [portA, a] = await get();
      console.log('first', a.includes('sk-rotation-first'));
      while (!fs.existsSync('/tmp/go')) await new Promise((r) => setTimeout(r, 20));
      const [portB, b] = await get();
      console.log('second', b.includes('sk-rotation-second'), b.includes('sk-rotation-first'), portA === portB);
      agent.destroy();
    `;
    let printed = '';
    const client = await sbx.commands.run(`node --input-type=module -e "${script.replace(/"/g, '\\"')}"`, {
      background: true,
      onStdout: (data) => (printed += data),
    });
    await expect.poll(() => printed, { timeout: 10_000 }).toContain('first');
    await rotating.update('rotating-key', 'sk-rotation-second-00000000');
    await sbx.gateways.refresh();
    expect(sbx.gateways.get('llm')?.port).toBe(port);
    await sbx.commands.run('touch /tmp/go');
    const { stdout, stderr } = await client.wait();
    expect(stderr).toBe('');
    expect(stdout).toBe('first true\nsecond true false true\n');
    await sbx.kill();
  });

  it('keeps the creating handle gateways across pause and connect(), and reincarnates only there', async () => {
    const sbx = await create('llm-key');
    const before = sbx.gateways.get('llm');
    await sbx.pause();
    await sbx.connect();
    expect(sbx.gateways.get('llm')).toEqual(before);
    const { stdout } = await sbx.commands.run(
      `node -e "fetch('${before?.url ?? ''}/echo').then((r) => r.text()).then(console.log)"`,
    );
    expect(stdout).toContain(VALUE);

    const connected = await Sandbox.connect(sbx.sandboxId, {
      accessToken: sbx.accessToken,
      controlPlaneUrl: cp.url,
    });
    await expect(connected.reincarnate()).rejects.toBeInstanceOf(InvalidArgumentError);
    const next = await sbx.reincarnate();
    expect(next.sandboxId).not.toBe(sbx.sandboxId);
    expect(next.gateways.get('llm')?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await sbx.kill();
    await next.kill();
  });
});

describe('gateway routes in the inspection feed', () => {
  it("shows a route's transitions, read from sandboxd's event stream", async () => {
    const records: InspectionRecord[] = [];
    const subscription = cp.plane.inspect$.subscribe((record) => records.push(record));
    try {
      const sbx = await create('llm-key');
      const route = `${sbx.sandboxId}/llm`;
      // The route actor inside sandboxd: configured (open), then bound to its port; then refreshed.
      await expect
        .poll(() => records.filter((r) => r.actorId === route).map((r) => [r.kind, r.event.type, r.state]))
        .toEqual([
          ['gateway_route', 'configure', 'open'],
          ['gateway_route', 'listening', 'open'],
        ]);
      await sbx.gateways.refresh();
      await expect
        .poll(() => records.filter((r) => r.actorId === route).map((r) => [r.event.type, r.seq]))
        .toEqual([
          ['configure', 1],
          ['listening', 2],
          ['configure', 3],
        ]);
      expect(JSON.stringify(records)).not.toContain(VALUE);
      await sbx.kill();
    } finally {
      subscription.unsubscribe();
    }
  });
});

describe('SandboxPool', () => {
  it('keeps hot slots without gateways and opens gateways at take', async () => {
    const before = await cp.driver.list();
    const pool = new SandboxPool(
      new PoolConfig({ size: 2, template: 'sdk-base-caps', allowInternetAccess: false }),
      {
        controlPlaneUrl: cp.url,
      },
    );
    try {
      await expect.poll(() => pool.ready, { timeout: 20_000, interval: 50 }).toBe(2);
      await expect(Sandbox.create({ pool, gateways: { llm: gateway('llm-key') } })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      const plain = await Sandbox.create({ pool });
      expect(plain.gateways.size).toBe(0);
      const taken = await pool.take({ gateways: { llm: gateway('llm-key') }, secretCache: cache });
      const url = taken.gateways.get('llm')?.url ?? '';
      const { stdout } = await taken.commands.run(
        `node -e "fetch('${url}/echo').then((r) => r.text()).then(console.log)"`,
      );
      expect(stdout).toContain(VALUE);
      await expect.poll(() => pool.ready, { timeout: 20_000, interval: 50 }).toBe(2); // refilled
      await plain.kill();
      await taken.kill();
    } finally {
      await pool.close();
    }
    expect(await cp.driver.list()).toEqual(before);
  });
});

describe('the idle policy with gateway traffic', () => {
  it('counts requests through the gateway as traffic: busy routes keep the sandbox running', async () => {
    const sbx = await Sandbox.create({
      template: 'sdk-base-caps',
      allowInternetAccess: false,
      controlPlaneUrl: cp.url,
      gateways: { llm: gateway('llm-key') },
      secretCache: cache,
      idlePolicy: new IdlePolicy({ maxIdleSeconds: 2 }),
    });
    const url = sbx.gateways.get('llm')?.url ?? '';
    // Requests every 200 ms for 5 s from the first one on, which the test waits for.
    let answered: () => void = () => undefined;
    const firstAnswer = new Promise<void>((resolve) => (answered = resolve));
    const loop = await sbx.commands.run(
      `node -e "const end = Date.now() + 5000; (async () => { while (Date.now() < end) { await fetch('${url}/echo').then((r) => r.text()); console.log('answered'); await new Promise((r) => setTimeout(r, 200)); } })()"`,
      { background: true, onStdout: () => answered() },
    );
    await firstAnswer;
    await new Promise((resolve) => setTimeout(resolve, 4_500)); // more than twice the idle time
    expect((await sbx.getInfo()).state).toBe('running');
    await loop.wait();
    await expect
      .poll(async () => (await sbx.getInfo()).state, { timeout: 10_000, interval: 200 })
      .toBe('suspended');
    await sbx.kill();
  });
});

describe('an image older than 0.6.0', () => {
  it('gives UnimplementedError for gateways and terminates the new sandbox unless keepOnFailure', async () => {
    // A template whose manifest records sandboxd 0.5.0: its daemon reports that version.
    const legacy = join(cp.stateDir, 'templates', 'sdk-legacy');
    cpSync(join(cp.stateDir, 'templates', 'sdk-base-caps'), legacy, {
      recursive: true,
      verbatimSymlinks: true,
    });
    writeFileSync(
      join(legacy, 'manifest.json'),
      JSON.stringify({ name: 'sdk-legacy', sandboxdVersion: '0.5.0', canCloseEgress: true }),
    );
    const before = await cp.driver.list();
    const attempt = (keepOnFailure: boolean) =>
      Sandbox.create({
        template: 'sdk-legacy',
        allowInternetAccess: false,
        controlPlaneUrl: cp.url,
        gateways: { llm: gateway('llm-key') },
        secretCache: cache,
        keepOnFailure,
      });
    const error = await attempt(false).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as SandboxError).failureClass).toBe('UnimplementedError');
    expect((error as Error).message).toContain('UnimplementedError');
    expect(await cp.driver.list()).toEqual(before);
    await expect(attempt(true)).rejects.toBeInstanceOf(SandboxError);
    const kept = (await cp.driver.list()).filter((id) => !before.includes(id));
    expect(kept).toHaveLength(1);
    for (const id of kept) await cp.driver.destroy(id);
  });
});

describe('gateway time-outs inside a sandbox', () => {
  it('answers 504 upstream_timeout to sandbox code when no response headers arrive in time', async () => {
    const fast = await startControlPlane({
      gatewayCa: world.pki.caPem,
      gatewayTimeouts: { connectMs: 10_000, headersMs: 500 },
    });
    try {
      const sbx = await Sandbox.create({
        template: 'sdk-base-caps',
        allowInternetAccess: false,
        controlPlaneUrl: fast.url,
        gateways: { llm: gateway('llm-key') },
        secretCache: cache,
      });
      const url = sbx.gateways.get('llm')?.url ?? '';
      const { stdout } = await sbx.commands.run(
        `node -e "fetch('${url}/hang').then(async (r) => console.log(r.status, await r.text()))"`,
      );
      expect(stdout.trim()).toBe('504 {"code":"upstream_timeout"}');
      await sbx.kill();
    } finally {
      await fast.stop();
    }
  });
});
