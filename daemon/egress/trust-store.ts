/**
 * Makes sandbox code trust the sandbox's CA (issue 27 item 2) without a manual step: the CA goes into
 * the template's system store (Debian's layout: `/usr/local/share/ca-certificates/`, so a later
 * `update-ca-certificates` keeps it, and appended to `/etc/ssl/certs/ca-certificates.crt` between
 * markers, replacing an earlier sandbox CA's block, such as a snapshot's original's), and every
 * toolchain's own variable points at that merged bundle or at the CA alone where the variable adds
 * (`TRUST_ENVIRONMENT`). Written by a program of sandbox code run as the sandbox's root, so sandboxd
 * never opens a sandbox path itself (`files-api.ts`). Only the CA's certificate is written, never its key.
 */
import { spawnInSandbox, type SandboxUser } from '../sandbox-spawn.js';

/** The CA alone, where Debian's `update-ca-certificates` reads local CAs. */
export const SANDBOX_CA_FILE = '/usr/local/share/ca-certificates/sandbox-egress-ca.crt';
/** The system bundle: the template's CAs and the sandbox's. */
export const TRUST_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

const BEGIN = '# sandbox egress CA begin';
const END = '# sandbox egress CA end';

/**
 * What every command's environment says so toolchains that ignore the system store trust the merged
 * bundle: some of these replace the trust store rather than add to it, hence the whole bundle. Node's
 * variable adds to its own roots, so it names the CA alone.
 */
export const TRUST_ENVIRONMENT: Readonly<Record<string, string>> = Object.freeze({
  SSL_CERT_FILE: TRUST_BUNDLE, // OpenSSL, Python's ssl and httpx, uv, Go
  REQUESTS_CA_BUNDLE: TRUST_BUNDLE, // Python requests (pip's too)
  PIP_CERT: TRUST_BUNDLE,
  CURL_CA_BUNDLE: TRUST_BUNDLE,
  GIT_SSL_CAINFO: TRUST_BUNDLE,
  CARGO_HTTP_CAINFO: TRUST_BUNDLE,
  NPM_CONFIG_CAFILE: TRUST_BUNDLE,
  NODE_EXTRA_CA_CERTS: SANDBOX_CA_FILE,
});

/** The script root runs: the CA from stdin into place, then the bundle rebuilt beside and renamed. */
const SCRIPT = `set -e
umask 022
mkdir -p ${dirOf(SANDBOX_CA_FILE)} ${dirOf(TRUST_BUNDLE)}
cat > ${SANDBOX_CA_FILE}.new
mv ${SANDBOX_CA_FILE}.new ${SANDBOX_CA_FILE}
{
  if [ -f ${TRUST_BUNDLE} ]; then sed '/^${BEGIN}$/,/^${END}$/d' ${TRUST_BUNDLE}; fi
  echo '${BEGIN}'
  cat ${SANDBOX_CA_FILE}
  echo '${END}'
} > ${TRUST_BUNDLE}.new
mv ${TRUST_BUNDLE}.new ${TRUST_BUNDLE}
`;

function dirOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/'));
}

/** Longest the write may take before it counts as failed. */
const WRITE_TIMEOUT_MS = 30_000;

/**
 * Writes `caPem` into the sandbox's trust store as its root.
 *
 * @throws Error when the program fails or does not end in time (the sandbox's root filesystem is full or
 * read-only, root's shell missing)
 */
export async function installSandboxCa(user: SandboxUser, caPem: string): Promise<void> {
  const { child, started } = spawnInSandbox({ cmd: SCRIPT, envs: {}, cwd: '/', account: 'root' }, user);
  child.stdout.resume();
  child.stderr.resume();
  child.stdin.on('error', () => undefined);
  await started;
  child.stdin.end(caPem);
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), WRITE_TIMEOUT_MS);
    child.once('close', (exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
  });
  if (code !== 0) throw new Error(`the sandbox's trust store could not be written (exit ${String(code)})`);
}
