/**
 * The base templates of the namespace driver (DESIGN.md §4), built from a curated read-only set of this
 * host's Debian userland: `/usr` read-only (with `/usr/local` hidden), and a template-owned `/etc`
 * holding only what programs need to run (users `root` and `user`, hosts, the dynamic linker cache,
 * `alternatives`, public CA certificates). No host home, no `/etc/shadow`, no private keys, no cloud
 * credentials, no secret store file: none of them is in the set.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOXD_VERSION } from '../../protocol/versions.js';
import { AGENT_TEMPLATE } from '../../rules/names.js';
import type { TemplateManifest } from '../sandbox-driver.js';

/**
 * The templates built here: `sdk-base` (egress always open), `sdk-base-caps` (can close egress), and
 * `sdk-agent`, which is `sdk-base-caps` plus the agents' runtime the driver binds at /opt/agents (built
 * by `npm run template:agent`, see templates/README.md).
 */
export const BASE_TEMPLATES: readonly TemplateManifest[] = [
  { name: 'sdk-base', sandboxdVersion: SANDBOXD_VERSION, canCloseEgress: false },
  { name: 'sdk-base-caps', sandboxdVersion: SANDBOXD_VERSION, canCloseEgress: true },
  { name: AGENT_TEMPLATE, sandboxdVersion: SANDBOXD_VERSION, canCloseEgress: true },
];

/** Files and folders of the host's /etc copied into a template (all world-readable, none secret). */
const ETC_COPIED = [
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'ssl/certs',
  'ssl/openssl.cnf',
];

const ETC_WRITTEN: Readonly<Record<string, string>> = {
  passwd:
    'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
  group: 'root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n',
  hosts: '127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n',
  hostname: 'sandbox\n',
  'nsswitch.conf': 'passwd: files\ngroup: files\nhosts: files dns\n',
  'resolv.conf': '',
};

/** Where a template's root of files lives under `stateDir`. */
export function templateDir(stateDir: string, name: string): string {
  return join(stateDir, 'templates', name);
}

/**
 * Builds the base templates under `stateDir` once; a template whose manifest names this sandboxd
 * version is reused as it is.
 */
export function ensureBaseTemplates(stateDir: string): void {
  for (const manifest of BASE_TEMPLATES) {
    const dir = templateDir(stateDir, manifest.name);
    const manifestFile = join(dir, 'manifest.json');
    if (existsSync(manifestFile) && readFileSync(manifestFile, 'utf8') === JSON.stringify(manifest)) continue;
    rmSync(dir, { recursive: true, force: true });
    const etc = join(dir, 'etc');
    mkdirSync(join(etc, 'ssl'), { recursive: true });
    for (const entry of ETC_COPIED) {
      const from = join('/etc', entry);
      if (existsSync(from)) cpSync(from, join(etc, entry), { recursive: true, verbatimSymlinks: true });
    }
    for (const [name, text] of Object.entries(ETC_WRITTEN)) writeFileSync(join(etc, name), text);
    writeFileSync(manifestFile, JSON.stringify(manifest));
  }
}

/** The manifest of a template, if it exists; a name that would leave `templates/` names none. */
export function readManifest(stateDir: string, name: string): TemplateManifest | undefined {
  if (name.includes('/') || name === '.' || name === '..') return undefined;
  try {
    return JSON.parse(
      readFileSync(join(templateDir(stateDir, name), 'manifest.json'), 'utf8'),
    ) as TemplateManifest;
  } catch {
    return undefined;
  }
}
