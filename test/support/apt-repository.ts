/**
 * A flat Debian repository made at test time (`deb [trusted=yes] <origin>/ ./`): tiny packages built
 * with `dpkg-deb` (part of dpkg, on every Debian host), their `Packages` index and an unsigned `Release`
 * naming its hashes, written by hand so no `dpkg-dev` or `apt-utils` is needed. Each package installs a
 * shell script at `/usr/bin/<name>` printing its marker, and a `postinst` that writes
 * `/etc/<name>.conf` with the uid it ran as, so a test sees that maintainer scripts ran as root.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A package of the test repository. */
export interface TestPackage {
  /** Debian package name, and the name of the program it installs in `/usr/bin`. */
  readonly name: string;
  /** What the program prints (one line). */
  readonly marker: string;
  readonly version?: string;
}

/** What `postinst` writes into `/etc/<name>.conf`: `installed-by=<uid>`. */
export const postinstConf = (name: string): string => `/etc/${name}.conf`;

/** The control fields of `pkg`, in the order `dpkg-deb` and the index both take. */
function controlFields(pkg: TestPackage): string {
  return [
    `Package: ${pkg.name}`,
    `Version: ${pkg.version ?? '1.0'}`,
    // `all`: installable whatever the sandbox's architecture.
    'Architecture: all',
    'Maintainer: sdk tests <tests@example.invalid>',
    'Installed-Size: 1',
    'Section: misc',
    'Priority: optional',
    `Description: test package printing ${pkg.marker}`,
  ].join('\n');
}

/** Builds `pkg` into `dir` and returns its file name there. */
function buildPackage(dir: string, pkg: TestPackage): string {
  // Written into a shell script and a control field as they are.
  if (!/^[a-z0-9][a-z0-9.+-]+$/.test(pkg.name) || !/^[\w .:=-]+$/.test(pkg.marker))
    throw new Error(`not a plain package name or marker: ${pkg.name} ${pkg.marker}`);
  const tree = join(dir, `${pkg.name}.tree`);
  mkdirSync(join(tree, 'DEBIAN'), { recursive: true });
  mkdirSync(join(tree, 'usr', 'bin'), { recursive: true });
  writeFileSync(join(tree, 'DEBIAN', 'control'), `${controlFields(pkg)}\n`);
  writeFileSync(
    join(tree, 'DEBIAN', 'postinst'),
    `#!/bin/sh\nset -e\nif [ "$1" = configure ]; then echo "installed-by=$(id -u)" > ${postinstConf(pkg.name)}; fi\n`,
  );
  writeFileSync(join(tree, 'usr', 'bin', pkg.name), `#!/bin/sh\necho '${pkg.marker}'\n`);
  for (const file of ['DEBIAN/postinst', `usr/bin/${pkg.name}`]) chmodSync(join(tree, file), 0o755);
  for (const folder of ['', 'DEBIAN', 'usr', 'usr/bin']) chmodSync(join(tree, folder), 0o755);
  const file = `${pkg.name}_${pkg.version ?? '1.0'}_all.deb`;
  // Owned by root:root whoever builds it; gzip, which every dpkg reads (the default differs by distribution).
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', tree, join(dir, file)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  rmSync(tree, { recursive: true, force: true });
  return file;
}

const digest = (algorithm: 'md5' | 'sha256', data: Buffer): string =>
  createHash(algorithm).update(data).digest('hex');

/**
 * Writes the repository of `packages` into `dir` (made if missing): the `.deb` files, `Packages` and
 * `Release`.
 */
export function writeAptRepository(dir: string, packages: readonly TestPackage[]): void {
  mkdirSync(dir, { recursive: true });
  const stanzas = packages.map((pkg) => {
    const file = buildPackage(dir, pkg);
    const data = readFileSync(join(dir, file));
    return [
      controlFields(pkg),
      `Filename: ./${file}`,
      `Size: ${String(data.length)}`,
      `MD5sum: ${digest('md5', data)}`,
      `SHA256: ${digest('sha256', data)}`,
    ].join('\n');
  });
  const index = Buffer.from(`${stanzas.join('\n\n')}\n`);
  writeFileSync(join(dir, 'Packages'), index);
  const size = String(statSync(join(dir, 'Packages')).size);
  // apt takes an index only when Release names it with its hash; unsigned, so sources say trusted=yes.
  writeFileSync(
    join(dir, 'Release'),
    [
      'Origin: sdk-test',
      'Label: sdk-test',
      `Date: ${new Date().toUTCString().replace('GMT', 'UTC')}`,
      'MD5Sum:',
      ` ${digest('md5', index)} ${size} Packages`,
      'SHA256:',
      ` ${digest('sha256', index)} ${size} Packages`,
      '',
    ].join('\n'),
  );
}
