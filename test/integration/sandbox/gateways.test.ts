import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretGateway } from '../../../sdk/secret-gateway.js';
import { SecretCache } from '../../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../../sdk/secret-store/secret-store.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { SecretNotFoundError } from '../../../spec/errors.js';
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
});
