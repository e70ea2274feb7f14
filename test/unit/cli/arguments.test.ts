/**
 * `sdk`'s arguments: `--help` prints the usage and exits 0; an unknown option or command, a malformed
 * number (a port, the warm pool, the metrics interval), an unreadable `--gateway-ca` or `--webhook-secret-file`, or a `--webhook` that is not an http(s)
 * URL ends with one line naming the problem, the usage and exit 2,
 * before anything is started (no state folder is made).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const cli = new URL('../../../dist/cli/sdk.js', import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), 'sdk-cli-args-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function sdk(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('sdk arguments', () => {
  it('prints the usage for --help, and exits 0', async () => {
    for (const args of [['--help'], ['serve', '-h'], ['template', 'build', '--help']]) {
      const { code, stdout } = await sdk(...args);
      expect(code).toBe(0);
      expect(stdout).toMatch(/^usage: sdk serve/);
    }
  });

  it.each([
    [['serve', '--bogus'], /Unknown option '--bogus'/],
    [['frobnicate'], /unknown command: frobnicate/],
    [['doctor', 'extra'], /unknown command: doctor extra/],
    [['serve', '--port', 'abc'], /--port must be a whole number from 0 to 65535/],
    [['serve', '--port', '70000'], /--port must be a whole number/],
    [['serve', '--warm-pool', '-1'], /--warm-pool/],
    [['serve', '--metrics-interval-ms', '99'], /--metrics-interval-ms must be a whole number from 100/],
    [['serve', '--metrics-interval-ms', 'often'], /--metrics-interval-ms must be a whole number/],
    [
      ['serve', '--gateway-ca', '/nonexistent/ca.pem'],
      /--gateway-ca: cannot read \/nonexistent\/ca.pem \(ENOENT\)/,
    ],
    [['serve', '--webhook', 'ftp://127.0.0.1/hook'], /--webhook must be an http or https URL/],
    [['serve', '--webhook', 'http://user:pass@127.0.0.1/'], /--webhook must be an http or https URL/],
    [
      ['serve', '--webhook-secret-file', '/nonexistent/secret'],
      /--webhook-secret-file: cannot read \/nonexistent\/secret \(ENOENT\)/,
    ],
  ])('refuses %j with the problem and the usage, exit 2, starting nothing', async (args, problem) => {
    const state = join(scratch, 'state');
    const { code, stderr } = await sdk(...args, '--state-dir', state);
    expect(code).toBe(2);
    expect(stderr).toMatch(problem);
    expect(stderr).toMatch(/usage: sdk serve/);
    expect(existsSync(state)).toBe(false);
  });
});
