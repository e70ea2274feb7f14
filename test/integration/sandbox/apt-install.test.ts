/**
 * Issue 25: root in a sandbox installs system packages. In `sdk-base`, root runs `apt-get update` and
 * `apt-get install` against a Debian mirror its open egress reaches (a local one in a test namespace,
 * `test/support/apt-mirror.ts`: no test reaches deb.debian.org), the package's maintainer script runs as
 * root, and the sandbox user runs the installed program; the user becomes root with `sudo` and no
 * password (the templates follow E2B's convention). What root installs is written into its sandbox's
 * copy-on-write view only: another sandbox of the template, and the template's image on the host, do not
 * have it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandRunOptions } from '../../../sdk/commands.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { startAptMirror, type AptMirror } from '../../support/apt-mirror.js';
import { postinstConf } from '../../support/apt-repository.js';
import { useControlPlane } from '../support/control-plane-hooks.js';

const cp = useControlPlane();
/** Where the driver keeps template images (`runtime-image.ts`). */
const IMAGES = '/run/sdk/images';
const PACKAGE = { name: 'sdk-test-hello', marker: 'hello from the test mirror' };
/** Options of a command run in the foreground. */
type RunOptions = CommandRunOptions & { background?: false };

const AS_ROOT: RunOptions = { user: 'root', envs: { DEBIAN_FRONTEND: 'noninteractive' } };

let mirror: AptMirror;
beforeAll(async () => {
  mirror = await startAptMirror(0, [PACKAGE]);
});
afterAll(async () => {
  await mirror.stop();
});

/** A sandbox of `sdk-base` (egress open: the mirror is another network). */
const openSandbox = (): Promise<Sandbox> =>
  cp.createSandbox({ template: 'sdk-base', allowInternetAccess: true });

/** Runs `cmd` in `sbx`, expecting exit 0 (its stderr shown when not), and gives its stdout. */
async function succeed(sbx: Sandbox, cmd: string, options: RunOptions = {}): Promise<string> {
  const { exitCode, stdout, stderr } = await sbx.commands.run(cmd, options);
  expect(exitCode, `${cmd}: ${stderr}`).toBe(0);
  return stdout;
}

describe('system packages installed by root', () => {
  let installed: Sandbox;

  it('come from the mirror, run their maintainer scripts as root, and run for the user', async () => {
    installed = await openSandbox();
    // The mirror alone: the image's own sources name deb.debian.org, which no test may depend on.
    await succeed(
      installed,
      `rm -f /etc/apt/sources.list /etc/apt/sources.list.d/* && echo '${mirror.sourceLine}' > /etc/apt/sources.list.d/sdk-test.list`,
      AS_ROOT,
    );
    // Without --error-on=any, apt-get update exits 0 when a source cannot be fetched.
    await succeed(installed, 'apt-get update --error-on=any', AS_ROOT);
    await succeed(installed, `apt-get install -y ${PACKAGE.name}`, AS_ROOT);
    expect(mirror.requests()).toContain(`/${PACKAGE.name}_1.0_all.deb`);

    expect(await succeed(installed, `cat ${postinstConf(PACKAGE.name)}`)).toBe('installed-by=0\n');
    expect(await succeed(installed, `stat -c '%u %a' /usr/bin/${PACKAGE.name}`)).toBe('0 755\n');
    expect(await succeed(installed, `id -u; ${PACKAGE.name}`)).toBe(`1000\n${PACKAGE.marker}\n`);
  });

  it('the user becomes root with sudo, no password asked', async () => {
    expect(await succeed(installed, 'sudo -n id -u')).toBe('0\n');
    // As programs written for E2B do: the user installs through sudo.
    await succeed(
      installed,
      `sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall ${PACKAGE.name}`,
    );
    // The sudoers file is root's (sudo reads no other), and not the user's to read.
    expect(await succeed(installed, 'test -r /etc/sudoers.d/user || echo unreadable')).toBe('unreadable\n');
  });

  it('stay in their own sandbox: another sandbox of the template and the image do not have them', async () => {
    expect(await succeed(installed, `command -v ${PACKAGE.name}`)).toBe(`/usr/bin/${PACKAGE.name}\n`);
    const other = await openSandbox();
    expect(
      await succeed(
        other,
        `command -v ${PACKAGE.name} || echo no-program; dpkg-query -W ${PACKAGE.name} 2>/dev/null || echo no-package; ` +
          `test -e ${postinstConf(PACKAGE.name)} || echo no-conf; test -e /etc/apt/sources.list.d/sdk-test.list || echo no-list`,
      ),
    ).toBe('no-program\nno-package\nno-conf\nno-list\n');
    // Nor does any template image on the host, the one both stand on among them.
    for (const image of readdirSync(IMAGES).filter((name) => name.startsWith('template-'))) {
      expect(existsSync(join(IMAGES, image, 'usr', 'bin', PACKAGE.name))).toBe(false);
      expect(existsSync(join(IMAGES, image, postinstConf(PACKAGE.name)))).toBe(false);
    }
    await Promise.all([installed.kill(), other.kill()]);
  });
});
