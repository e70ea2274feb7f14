import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Commands } from '../../../sdk/commands.js';
import { DaemonClient } from '../../../sdk/daemon-client.js';
import { SandboxError } from '../../../rules/errors.js';
import { gatewayStateSchema } from '../../../protocol/gateway-wire.js';
import { useGatewayWorld } from '../support/gateway-world.js';
import { startSandboxd, type LocalSandboxd } from '../support/sandboxd.js';

const world = useGatewayWorld(5);
const OLD = 'sk-daemon-old-value-0123456789';
const NEW = 'sk-daemon-new-value-9876543210';
let daemon: LocalSandboxd;
let client: DaemonClient;
let commands: Commands;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'sdk-home-'));
  chmodSync(home, 0o777);
  daemon = await startSandboxd(home, {}, { gatewayCa: world.pki.caPem });
  client = new DaemonClient({ url: daemon.url, accessToken: daemon.token });
  commands = new Commands(client);
});

afterAll(async () => {
  await daemon.stop();
  rmSync(home, { recursive: true, force: true });
});

const configure = (value: string) =>
  client.call('POST', '/v1/gateways', gatewayStateSchema, { routes: { llm: world.route(value) } });

/** What sandbox code (uid 1000) gets from the route. */
async function fromSandboxCode(url: string): Promise<string> {
  const { stdout } = await commands.run(
    `node -e "fetch('${url}/echo').then((r) => r.text()).then(console.log)"`,
  );
  return stdout;
}

describe('sandboxd gateways (ConfigureSandbox, ConfigureStatus)', () => {
  it('opens a route that injects the value for the sandbox user, and reports state without values', async () => {
    const state = await configure(OLD);
    const route = state.routes.llm;
    expect(route).toMatchObject({ lastErrorClass: null });
    expect(route?.url).toBe(`http://127.0.0.1:${String(route?.port)}`);
    expect(await fromSandboxCode(route?.url ?? '')).toContain(OLD);
    const status = await client.call('GET', '/v1/gateways', gatewayStateSchema);
    expect(status).toEqual(state);
    expect(JSON.stringify(status)).not.toContain(OLD);
  });

  it('keeps the port on refresh and uses the new value from the next request', async () => {
    const before = (await client.call('GET', '/v1/gateways', gatewayStateSchema)).routes.llm;
    const after = (await configure(NEW)).routes.llm;
    expect(after?.port).toBe(before?.port);
    const seen = await fromSandboxCode(after?.url ?? '');
    expect(seen).toContain(NEW);
    expect(seen).not.toContain(OLD);
  });

  it('refuses a value with a newline with the failure class, keeping the previous configuration', async () => {
    const error = await configure(`${NEW}\nx-evil: 1`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as SandboxError).code).toBe('configuration_rejected');
    expect((error as SandboxError).failureClass).toBe('InvalidHeaderValueError');
    expect((error as Error).message).toContain('InvalidHeaderValueError');
    expect((error as Error).message).not.toContain(NEW);
    const status = (await client.call('GET', '/v1/gateways', gatewayStateSchema)).routes.llm;
    expect(status?.lastErrorClass).toBe('InvalidHeaderValueError');
    expect(await fromSandboxCode(status?.url ?? '')).toContain(NEW);
  });

  it.each([
    [
      '9 routes',
      () => Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`r${String(i)}`, world.route(OLD)])),
    ],
    [
      '17 headers',
      () => ({
        llm: world.route(OLD, {
          headers: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`x-h${String(i)}`, OLD])),
        }),
      }),
    ],
    [
      '33 allow rules',
      () => ({
        llm: world.route(OLD, { allow: Array.from({ length: 33 }, () => ['GET', '/x'] as const) }),
      }),
    ],
  ])('refuses %s as the SDK does (LimitExceededError)', async (_, routes) => {
    const error = await client
      .call('POST', '/v1/gateways', gatewayStateSchema, { routes: routes() })
      .catch((e: unknown) => e);
    expect((error as SandboxError).failureClass).toBe('LimitExceededError');
  });
});
