/**
 * Issue 14: `sdk doctor`: each host check PASS, WARN or FAIL with a one-line fix, `compatibility` FAIL
 * for a template whose sandboxd is older than the SDK's series (the fix names the rebuild command), and
 * a non-zero exit on any FAIL, also through the real CLI.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { doctor, formatChecks } from '../../../cli/doctor.js';
import { runChecks, type HostView } from '../../../sandbox-drivers/namespace/host-checks.js';
import { SERIES_VERSION } from '../../../protocol/versions.js';

const GIB = 2 ** 30;

/** A healthy host; `change` alters what a test needs. */
function host(
  change: Partial<HostView> & { memoryBytes?: number; templates?: Record<string, string> } = {},
): HostView {
  const { memoryBytes = 8 * GIB, templates = {}, ...rest } = change;
  return {
    uid: 0,
    readFile: (path) =>
      path === '/proc/meminfo'
        ? `MemTotal: 99 kB\nMemAvailable:    ${String(memoryBytes / 1024)} kB\n`
        : path === '/proc/sys/user/max_user_namespaces'
          ? '1000\n'
          : undefined,
    exists: () => true,
    commandExists: () => true,
    succeeds: () => true,
    manifests: () => Object.entries(templates).map(([name, text]) => ({ name, text })),
    ...rest,
  };
}

const manifest = (version: string) =>
  JSON.stringify({ name: 'x', sandboxdVersion: version, canCloseEgress: true });
const byName = (results: ReturnType<typeof runChecks>, name: string) => results.find((r) => r.name === name);

describe('sdk doctor', () => {
  it('passes a healthy host with current templates', () => {
    const results = runChecks('/state', host({ templates: { 'sdk-base': manifest(SERIES_VERSION) } }));
    expect(results.every((result) => result.status === 'PASS')).toBe(true);
    expect(byName(results, 'compatibility sdk-base')?.detail).toContain(SERIES_VERSION);
  });

  it('fails a template whose sandboxd is older than the series, naming the rebuild', () => {
    const results = runChecks(
      '/state',
      host({ templates: { 'sdk-agent': manifest('0.9.3'), 'sdk-base': manifest('0.11.0'), broken: '{' } }),
    );
    expect(byName(results, 'compatibility sdk-agent')).toMatchObject({ status: 'FAIL' });
    expect(byName(results, 'compatibility sdk-agent')?.fix).toBe(
      'rebuild it: sdk template build --name sdk-agent --force',
    );
    expect(byName(results, 'compatibility sdk-base')?.status).toBe('PASS'); // newer is fine
    expect(byName(results, 'compatibility broken')?.status).toBe('FAIL');
  });

  it('fails what the driver cannot work without, each with its fix', () => {
    const results = runChecks(
      '/state',
      host({
        uid: 1000,
        commandExists: (command) => command !== 'mmdebstrap',
        exists: (path) => !path.endsWith('/pids'),
        readFile: (path) => (path === '/proc/sys/user/max_user_namespaces' ? '0' : undefined),
      }),
    );
    expect(byName(results, 'root')?.status).toBe('FAIL');
    expect(byName(results, 'root')?.fix).toContain('root');
    expect(byName(results, 'mmdebstrap')).toMatchObject({
      status: 'FAIL',
      fix: 'apt-get install mmdebstrap',
    });
    expect(byName(results, 'cgroups')).toMatchObject({ status: 'FAIL', detail: 'missing: pids' });
    expect(byName(results, 'namespaces')?.status).toBe('FAIL');
    expect(byName(results, 'memory')?.status).toBe('WARN'); // unknown
  });

  it('warns on little free memory and fails on too little', () => {
    expect(byName(runChecks('/s', host({ memoryBytes: GIB })), 'memory')?.status).toBe('WARN');
    expect(byName(runChecks('/s', host({ memoryBytes: 256 * 2 ** 20 })), 'memory')?.status).toBe('FAIL');
  });

  it('prints one line per check with the fix under a problem', () => {
    const text = formatChecks([
      { name: 'mmdebstrap', status: 'FAIL', detail: 'mmdebstrap missing', fix: 'apt-get install mmdebstrap' },
      { name: 'root', status: 'PASS', detail: 'running as root' },
    ]);
    expect(text).toBe(
      'FAIL mmdebstrap: mmdebstrap missing\n     fix: apt-get install mmdebstrap\nPASS root: running as root',
    );
  });

  it('exits non-zero from the CLI when a template is too old', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'sdk-doctor-'));
    try {
      mkdirSync(join(stateDir, 'templates', 'sdk-agent'), { recursive: true });
      writeFileSync(join(stateDir, 'templates', 'sdk-agent', 'manifest.json'), manifest('0.9.0'));
      let printed = '';
      expect(doctor(stateDir, (text) => (printed += text))).toBe(1);
      expect(printed).toMatch(/^FAIL compatibility sdk-agent: sandboxd 0\.9\.0 is older/m);
      const cli = new URL('../../../dist/cli/sdk.js', import.meta.url).pathname;
      const outcome = await promisify(execFile)('node', [cli, 'doctor', '--state-dir', stateDir]).then(
        () => 0,
        (error: unknown) => {
          const { code, stdout } = error as { code: number; stdout: string };
          return stdout.includes('FAIL compatibility') ? code : -1;
        },
      );
      expect(outcome).toBe(1);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
