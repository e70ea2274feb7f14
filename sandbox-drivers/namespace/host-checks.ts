/**
 * `sdk doctor`'s checks of this host and its templates, each PASS, WARN or FAIL with a one-line fix:
 * root, user namespaces, the cgroup controllers the driver uses, nftables and the other
 * host commands, free memory, and `compatibility` (SPEC "Versioning": FAIL when the sandboxd a template
 * was built with is older than this SDK's series).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { meetsVersion, SERIES_VERSION } from '../../protocol/versions.js';
import { AGENT_TEMPLATE } from '../../rules/names.js';
import { RUNSC, runscPath } from '../gvisor/runsc.js';
import { commandExists, HOST_PACKAGES } from './host-requirements.js';

/** How a check came out. */
export type CheckStatus = 'PASS' | 'WARN' | 'FAIL';

/** One check's outcome. */
export interface CheckResult {
  readonly name: string;
  readonly status: CheckStatus;
  /** What was found. */
  readonly detail: string;
  /** One line saying how to fix it; absent on PASS. */
  readonly fix?: string;
}

/** What the checks read; the real host by default (tests give their own). */
export interface HostView {
  readonly uid: number;
  readFile(path: string): string | undefined;
  exists(path: string): boolean;
  commandExists(command: string): boolean;
  /** Runs a command, true when it exits 0. */
  succeeds(command: string, args: readonly string[]): boolean;
  /** Template names under `stateDir/templates` with their manifest's text. */
  manifests(stateDir: string): readonly { readonly name: string; readonly text: string | undefined }[];
}

/** The real host. */
export const REAL_HOST: HostView = {
  uid: process.getuid?.() ?? -1,
  readFile: (path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  },
  exists: existsSync,
  commandExists,
  succeeds: (command, args) => {
    try {
      execFileSync(command, [...args], { stdio: 'ignore', timeout: 10_000 });
      return true;
    } catch {
      return false;
    }
  },
  manifests: (stateDir) => {
    const dir = join(stateDir, 'templates');
    if (!existsSync(dir)) return [];
    return readdirSync(dir).map((name) => ({
      name,
      text: REAL_HOST.readFile(join(dir, name, 'manifest.json')),
    }));
  },
};

const pass = (name: string, detail: string): CheckResult => ({ name, status: 'PASS', detail });
const problem = (status: 'WARN' | 'FAIL', name: string, detail: string, fix: string): CheckResult => ({
  name,
  status,
  detail,
  fix,
});

/** Available memory below which sandboxes hardly fit (one `sdk-agent` sandbox is 1 GiB by default). */
const MEMORY_FAIL_BYTES = 512 * 2 ** 20;
const MEMORY_WARN_BYTES = 2 * 2 ** 30;

function memoryCheck(host: HostView): CheckResult {
  const line = /^MemAvailable:\s+(\d+) kB$/m.exec(host.readFile('/proc/meminfo') ?? '');
  if (line === null) return problem('WARN', 'memory', 'MemAvailable unknown', 'check /proc/meminfo');
  const bytes = Number(line[1]) * 1024;
  const detail = `${String(Math.round(bytes / 2 ** 20))} MiB available`;
  if (bytes < MEMORY_FAIL_BYTES) {
    return problem('FAIL', 'memory', detail, 'free memory: a sandbox needs at least 512 MiB');
  }
  if (bytes < MEMORY_WARN_BYTES) {
    return problem('WARN', 'memory', detail, 'room for one or two sandboxes only; free memory for more');
  }
  return pass('memory', detail);
}

function cgroupCheck(host: HostView): CheckResult {
  const missing = ['memory', 'pids', 'cpu'].filter(
    (controller) => !host.exists(`/sys/fs/cgroup/${controller}`),
  );
  if (!host.exists('/sys/fs/cgroup/unified/cgroup.controllers'))
    missing.push('cgroup2 at /sys/fs/cgroup/unified');
  return missing.length === 0
    ? pass('cgroups', 'v1 memory, pids, cpu and cgroup2 (freeze, kill) mounted')
    : problem(
        'FAIL',
        'cgroups',
        `missing: ${missing.join(', ')}`,
        'boot with cgroup v1 controllers and cgroup2 at /sys/fs/cgroup/unified (DESIGN.md §4)',
      );
}

function userNamespaceCheck(host: HostView): CheckResult {
  const max = Number(host.readFile('/proc/sys/user/max_user_namespaces') ?? '0');
  return max > 0
    ? pass('namespaces', `user namespaces allowed (${String(max)})`)
    : problem('FAIL', 'namespaces', 'user namespaces disabled', 'sysctl -w user.max_user_namespaces=15000');
}

function commandsCheck(host: HostView): CheckResult[] {
  return Object.entries(HOST_PACKAGES).map(([command, pkg]) =>
    host.commandExists(command)
      ? pass(command, `${command} found`)
      : problem('FAIL', command, `${command} missing`, `apt-get install ${pkg}`),
  );
}

/**
 * `gvisor`: runsc (pinned, built from the Go module proxy once per host) is there and runs; without it
 * gVisor sandboxes still work once Go can build it, so this WARNs, never FAILs.
 */
function gvisorCheck(host: HostView): CheckResult {
  const runsc = runscPath();
  if (host.exists(runsc)) {
    return host.succeeds(runsc, ['--version'])
      ? pass('gvisor', `runsc ${RUNSC.version} built (platform systrap)`)
      : problem(
          'WARN',
          'gvisor',
          `${runsc} does not run`,
          `remove ${runsc}: the next gVisor launch builds it again`,
        );
  }
  return host.commandExists('go') || host.exists('/usr/local/go/bin/go')
    ? problem(
        'WARN',
        'gvisor',
        `runsc ${RUNSC.version} not built yet (the first gVisor sandbox builds it, about 2 minutes)`,
        'build it now: sdk serve --isolation gvisor',
      )
    : problem(
        'WARN',
        'gvisor',
        'no go command: gVisor sandboxes cannot be had here',
        'install Go 1.26 (runsc is built from the Go module proxy)',
      );
}

function nftablesCheck(host: HostView): CheckResult {
  if (!host.commandExists('nft'))
    return problem('FAIL', 'nftables', 'nft missing', 'apt-get install nftables');
  return host.succeeds('nft', ['list', 'tables'])
    ? pass('nftables', 'nft lists tables')
    : problem('FAIL', 'nftables', 'nft cannot list tables', 'run as root on a kernel with nf_tables');
}

/**
 * `compatibility`: every template's sandboxd must be of this SDK's series or later. A template older
 * than the series FAILs and names the command that rebuilds it.
 */
export function compatibilityChecks(host: HostView, stateDir: string): CheckResult[] {
  const templates = host.manifests(stateDir);
  if (templates.length === 0) {
    return [pass('compatibility', `no templates in ${stateDir} yet (the control plane builds them)`)];
  }
  return templates.map(({ name, text }) => {
    let manifest: { sandboxdVersion?: unknown; agent?: unknown } = {};
    try {
      manifest = (JSON.parse(text ?? '') as typeof manifest | null) ?? {};
    } catch {
      // unreadable: reported below
    }
    const rebuild =
      manifest.agent !== undefined || name === AGENT_TEMPLATE
        ? `rebuild it: sdk template build --name ${name} --force`
        : `rebuild it: restart the control plane (sdk serve), which rebuilds base templates of another version`;
    const version = manifest.sandboxdVersion;
    if (typeof version !== 'string') {
      return problem('FAIL', `compatibility ${name}`, 'no readable manifest', rebuild);
    }
    return meetsVersion(version, SERIES_VERSION)
      ? pass(`compatibility ${name}`, `sandboxd ${version}, series ${SERIES_VERSION}`)
      : problem(
          'FAIL',
          `compatibility ${name}`,
          `sandboxd ${version} is older than the series ${SERIES_VERSION}`,
          rebuild,
        );
  });
}

/** Every check, host first, then the templates of `stateDir`. */
export function runChecks(stateDir: string, host: HostView = REAL_HOST): CheckResult[] {
  return [
    host.uid === 0
      ? pass('root', 'running as root')
      : problem(
          'FAIL',
          'root',
          `uid ${String(host.uid)}`,
          'run as root: the driver makes namespaces, cgroups and nftables tables',
        ),
    userNamespaceCheck(host),
    cgroupCheck(host),
    nftablesCheck(host),
    ...commandsCheck(host),
    memoryCheck(host),
    gvisorCheck(host),
    ...compatibilityChecks(host, stateDir),
  ];
}
