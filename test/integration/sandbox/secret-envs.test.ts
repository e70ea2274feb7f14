/**
 * `Sandbox.create({ secrets })` in a real sandbox (SPEC "What the service does" 6): each secret's value
 * is an environment variable of every command, readable by sandbox code by design, with a command's own
 * `envs` winning; it is in no process's command line on the host, no record of sandboxd or of the
 * control plane, no journal, and no error when another secret is missing (the new sandbox then ends).
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, takeWhile, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxRecord } from '../../../control-plane/sandbox-records.js';
import { SecretNotFoundError } from '../../../rules/errors.js';
import { SecretRef } from '../../../sdk/secret-ref.js';
import { SecretCache } from '../../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../../sdk/secret-store/secret-store.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';

const VALUE = 'sk-planted-env-secret-5f1e0c9a7b3d';
let cp: InProcessControlPlane;
let dir: string;
let cache: SecretCache;

beforeAll(async () => {
  cp = await startControlPlane();
  dir = mkdtempSync(join(tmpdir(), 'sdk-secret-envs-'));
  const store = new SecretStore({ file: join(dir, 'secrets.json') });
  await store.create('env-key', VALUE);
  cache = new SecretCache({ store });
});

afterAll(async () => {
  await cp.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Every process's command line on the host (as root: every process of every sandbox included). */
function hostCommandLines(): string {
  const lines: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      lines.push(readFileSync(`/proc/${pid}/cmdline`, 'latin1'));
    } catch {
      // gone meanwhile
    }
  }
  return lines.join('\n');
}

/** The control plane's files at the top of its state folder (its journal among them). */
function planeFiles(): string {
  return readdirSync(cp.stateDir)
    .map((name) => join(cp.stateDir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, 'latin1'))
    .join('\n');
}

/** A snapshot of the records the control plane holds for a sandbox. */
function planeRecords(sandboxId: string, token: string): SandboxRecord[] {
  const seen: SandboxRecord[] = [];
  cp.plane
    .records(sandboxId, token)
    .subscribe((record) => seen.push(record))
    .unsubscribe();
  return seen;
}

describe('secrets as environment variables of a real sandbox', () => {
  it("are every command's environment, a command's own envs win, and no record, command line or journal holds them", async () => {
    const sbx = await cp.createSandbox({
      secrets: { API_KEY: 'env-key', BY_REF: new SecretRef({ name: 'env-key' }) },
      secretCache: cache,
    });
    expect((await sbx.commands.run('echo "$API_KEY"')).stdout).toBe(`${VALUE}\n`);
    expect((await sbx.commands.run('echo "$BY_REF"')).stdout).toBe(`${VALUE}\n`);
    expect((await sbx.commands.run('echo "$API_KEY"', { envs: { API_KEY: 'own' } })).stdout).toBe('own\n');

    // While a command runs (its setpriv stages done), no command line on the host carries the value;
    // inside, neither does any process's (the pattern travels base64-encoded, so no line carries it).
    const sleeper = await sbx.commands.run('sleep 30', { background: true });
    expect(hostCommandLines()).not.toContain(VALUE);
    const pattern = Buffer.from(VALUE).toString('base64');
    const inside = await sbx.commands.run(
      `echo ${pattern} | base64 -d > /tmp/.p; { ps -eo args; cat /proc/[0-9]*/cmdline; } 2>/dev/null | grep -a -c -F -f /tmp/.p; echo end`,
    );
    expect(inside.stdout).toBe('0\nend\n');
    await sleeper.kill();

    await sbx.commands.run('echo marker-done');
    const records = await firstValueFrom(
      sbx.events$.pipe(
        takeWhile(
          (e) => !(e.type === 'process' && e.event === 'start' && e.command === 'echo marker-done'),
          true,
        ),
        toArray(),
      ),
    );
    expect(records).toContainEqual(expect.objectContaining({ type: 'call', endpoint: 'PUT /v1/secrets' }));
    expect(JSON.stringify(records)).not.toContain(VALUE);
    await expect
      .poll(() => JSON.stringify(planeRecords(sbx.sandboxId, sbx.accessToken)))
      .toContain('marker-done');
    expect(JSON.stringify(planeRecords(sbx.sandboxId, sbx.accessToken))).not.toContain(VALUE);
    await sbx.kill();
    expect(JSON.stringify(cp.plane.list())).not.toContain(VALUE);
    expect(planeFiles()).not.toContain(VALUE);
  });

  it('raise SecretNotFoundError for a missing second secret, leak nothing, and end the new sandbox', async () => {
    const before = new Set(cp.plane.list().map((s) => s.sandboxId));
    const error: unknown = await cp
      .createSandbox({ secrets: { API_KEY: 'env-key', OTHER: 'no-such-secret' }, secretCache: cache })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretNotFoundError);
    expect(`${String(error)} ${JSON.stringify(error)}`).not.toContain(VALUE);
    const created = cp.plane.list().filter((s) => !before.has(s.sandboxId));
    expect(created).toHaveLength(1);
    await expect.poll(() => cp.plane.get(created[0]?.sandboxId ?? '').state).toBe('ended');
    expect(planeFiles()).not.toContain(VALUE);
  });
});
