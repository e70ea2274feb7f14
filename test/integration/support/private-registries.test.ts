/**
 * The private registries of the credential broker tests, met by the host's real clients (git, npm, pip)
 * with their own ways of carrying a token, and without one. The clients run in a mount namespace of
 * their own where /etc/hosts names the three hosts 127.0.0.1, where the server listens: nothing leaves
 * loopback, and the host's /etc/hosts is untouched.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateRegistries, type PrivateRegistries } from './private-registries.js';
import { makeTestPki } from './test-ca.js';

let dir: string;
let registries: PrivateRegistries;
let server: Server;
let port: number;
let caFile: string;
let hostsFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-private-registries-'));
  registries = startPrivateRegistries(dir);
  const names = Object.values(registries.hosts);
  const pki = makeTestPki(dir, 'registries', ['127.0.0.1'], names);
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, pki.caPem);
  hostsFile = join(dir, 'hosts');
  writeFileSync(hostsFile, `127.0.0.1 localhost ${names.join(' ')}\n`);
  mkdirSync(join(dir, 'home'));
  const tls = { cert: readFileSync(pki.certFile), key: readFileSync(pki.keyFile) };
  server = createServer(tls, registries.handler).listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
  registries.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface ClientResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a client with `hostsFile` as its /etc/hosts (a bind mount in a mount namespace of its own), in a
 * bare environment: no proxy, no user configuration, no prompt. Asynchronous: the server answering it
 * runs in this process.
 */
async function client(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<ClientResult> {
  const child = spawn(
    'unshare',
    ['--mount', '--', 'sh', '-c', 'mount --bind "$0" /etc/hosts && exec "$@"', hostsFile, command, ...args],
    {
      cwd: options.cwd ?? dir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: join(dir, 'home'),
        LANG: 'C.UTF-8',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_TERMINAL_PROMPT: '0',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 90_000,
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** `git` trusting the test CA, with `header` (if any) on every request. */
function git(args: readonly string[], header?: string, env?: Record<string, string>): Promise<ClientResult> {
  const auth = header === undefined ? [] : ['-c', `http.extraHeader=Authorization: ${header}`];
  return client('git', ['-c', `http.sslCAInfo=${caFile}`, '-c', 'credential.helper=', ...auth, ...args], {
    env: {
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@private.test',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@private.test',
      ...env,
    },
  });
}

/** Git on the bare repository itself (no server: a look at what a push left, or a change to serve). */
function bareGit(args: readonly string[]): string {
  const env = { ...process.env, GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@private.test' };
  const committer = { GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@private.test' };
  return execFileSync('git', ['--git-dir', registries.gitRepository, ...args], {
    encoding: 'utf8',
    env: { ...env, ...committer },
  }).trim();
}

describe('the git server', () => {
  const repoUrl = (): string => `https://${registries.hosts.git}:${String(port)}/repo.git`;

  it('clones and takes a push with the token, through git http-backend', async () => {
    const before = registries.seen('git');
    const work = join(dir, 'git-work');
    const cloned = await git(['clone', repoUrl(), work], registries.authorization.git);
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(readFileSync(join(work, 'README.md'), 'utf8')).toBe('# private repository\n');

    writeFileSync(join(work, 'small.txt'), 'pushed from sandbox code\n');
    // Over http.postBuffer (1 MiB, random so it stays that large packed): git sends the pack chunked, with no Content-Length.
    writeFileSync(join(work, 'large.bin'), randomBytes(3 << 20));
    expect((await git(['-C', work, 'add', '.'])).code).toBe(0);
    expect((await git(['-C', work, 'commit', '-q', '-m', 'Pushed from the test'])).code).toBe(0);
    const pushed = await git(['-C', work, 'push', 'origin', 'main'], registries.authorization.git, {
      GIT_TRACE_CURL: '1',
      GIT_TRACE_CURL_NO_DATA: '1',
    });
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stderr).toMatch(/Send header: Transfer-Encoding: chunked/i);
    expect(bareGit(['log', '--format=%s', 'main']).split('\n')).toEqual([
      'Pushed from the test',
      'Initial commit',
    ]);

    const after = registries.seen('git');
    expect(after.authorized).toBeGreaterThan(before.authorized);
    expect(after.refused).toBe(before.refused);
  });

  it('inflates a gzip request body (a fetch with many wants)', async () => {
    // 40 branches on 40 commits: the clone's fetch request is over 1 KiB, which git sends gzipped.
    const tree = bareGit(['rev-parse', 'main^{tree}']);
    for (let i = 0; i < 40; i++) {
      const commit = bareGit(['commit-tree', tree, '-m', `Branch ${String(i)}`]);
      bareGit(['update-ref', `refs/heads/many-${String(i)}`, commit]);
    }
    const cloned = await git(
      ['clone', '--mirror', repoUrl(), join(dir, 'git-mirror')],
      registries.authorization.git,
      {
        GIT_TRACE_CURL: '1',
        GIT_TRACE_CURL_NO_DATA: '1',
      },
    );
    expect(cloned.code, cloned.stderr).toBe(0);
    expect(cloned.stderr).toMatch(/Send header: Content-Encoding: gzip/i);
    const branches = await client('git', [
      '--git-dir',
      join(dir, 'git-mirror'),
      'branch',
      '--list',
      'many-*',
    ]);
    expect(branches.stdout.trim().split('\n')).toHaveLength(40);
  });

  it('refuses a clone and a push without the token or with another (401, Basic realm)', async () => {
    const before = registries.seen('git');
    const none = await git(['clone', repoUrl(), join(dir, 'git-none')]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/Authentication failed|could not read Username/);
    const wrong = await git(
      ['clone', repoUrl(), join(dir, 'git-wrong')],
      `Basic ${Buffer.from('x-access-token:not-the-token').toString('base64')}`,
    );
    expect(wrong.code).not.toBe(0);
    // A push from the clone of the first test, without its token: the repository is unchanged.
    const work = join(dir, 'git-work');
    await git(['-C', work, 'commit', '-q', '--allow-empty', '-m', 'Refused push']);
    const push = await git(['-C', work, 'push', 'origin', 'main']);
    expect(push.code).not.toBe(0);
    expect(bareGit(['log', '--format=%s', 'main']).split('\n')).not.toContain('Refused push');
    const after = registries.seen('git');
    expect(after.refused).toBeGreaterThanOrEqual(before.refused + 3);
    expect(after.authorized).toBe(before.authorized);
  });
});

describe('the npm registry', () => {
  /** A project whose .npmrc points at the registry, with `authToken` if given. */
  function project(name: string, authToken?: string): string {
    const projectDir = join(dir, name);
    mkdirSync(projectDir);
    writeFileSync(
      join(projectDir, 'package.json'),
      JSON.stringify({ name, version: '1.0.0', private: true }),
    );
    const registry = `//${registries.hosts.npm}:${String(port)}/`;
    const lines = [
      `registry=https:${registry}`,
      `cafile=${caFile}`,
      'audit=false',
      'fund=false',
      'update-notifier=false',
    ];
    if (authToken !== undefined) lines.push(`${registry}:_authToken=${authToken}`);
    writeFileSync(join(projectDir, '.npmrc'), `${lines.join('\n')}\n`);
    return projectDir;
  }
  /** `npm install private-hello` in `projectDir`, with a cache of its own (so every run asks the server). */
  const install = (projectDir: string): Promise<ClientResult> =>
    client('npm', ['install', registries.packages.npm.name, '--cache', join(projectDir, '.npm-cache')], {
      cwd: projectDir,
    });

  it('installs the package with the token of .npmrc, packument and tarball alike', async () => {
    const before = registries.seen('npm');
    const projectDir = project('npm-with-token', registries.tokens.npm);
    const installed = await install(projectDir);
    expect(installed.code, installed.stderr).toBe(0);
    const required = await client('node', ['-p', `require('${registries.packages.npm.name}')`], {
      cwd: projectDir,
    });
    expect(required.stdout.trim()).toBe('hello from the private registry');
    const lock = JSON.parse(readFileSync(join(projectDir, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version: string; integrity: string; resolved: string }>;
    };
    expect(lock.packages['node_modules/private-hello']).toMatchObject({
      version: '1.0.0',
      integrity: registries.packages.npm.integrity,
    });
    const after = registries.seen('npm');
    expect(after.authorized).toBeGreaterThanOrEqual(before.authorized + 2); // packument and tarball
    expect(after.refused).toBe(before.refused);
  });

  it('refuses an install without the token or with another (E401)', async () => {
    const before = registries.seen('npm');
    const none = await install(project('npm-without-token'));
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/E401/);
    const wrong = await install(project('npm-wrong-token', 'not-the-token'));
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/E401/);
    expect(registries.seen('npm').refused).toBeGreaterThanOrEqual(before.refused + 2);
  });
});

describe('the PyPI index', () => {
  /** `pip install --target` from the index, credentials (if any) in its URL, with nothing of the host's pip configuration. */
  const install = (target: string, credentials?: string, verbose = false): Promise<ClientResult> => {
    const userinfo = credentials === undefined ? '' : `${credentials}@`;
    return client('python3', [
      ...['-m', 'pip', 'install', '--isolated', '--no-input', '--keyring-provider', 'disabled'],
      ...(verbose ? ['-vv'] : []), // pip tells a 401 of the index only at its debug level

      ...['--no-cache-dir', '--disable-pip-version-check', '--cert', caFile, '--target', target],
      ...['--index-url', `https://${userinfo}${registries.hosts.pypi}:${String(port)}/simple/`],
      registries.packages.pypi.name,
    ]);
  };

  it('installs the wheel with the token in the index URL (pip sends it as Basic)', async () => {
    const before = registries.seen('pypi');
    const target = join(dir, 'pip-with-token');
    const installed = await install(target, `__token__:${registries.tokens.pypi}`);
    expect(installed.code, installed.stderr).toBe(0);
    const imported = await client('python3', ['-c', 'import private_hello; print(private_hello.GREETING)'], {
      env: { PYTHONPATH: target },
    });
    expect(imported.stdout.trim()).toBe('hello from the private index');
    const after = registries.seen('pypi');
    expect(after.authorized).toBeGreaterThanOrEqual(before.authorized + 2); // project page and wheel
    expect(after.refused).toBe(before.refused);
  });

  it('refuses an install without the token or with another (401)', async () => {
    const before = registries.seen('pypi');
    const none = await install(join(dir, 'pip-without-token'), undefined, true);
    expect(none.code).not.toBe(0);
    expect(`${none.stdout}${none.stderr}`).toMatch(/401 Client Error: Unauthorized/);
    const wrong = await install(join(dir, 'pip-wrong-token'), '__token__:not-the-token', true);
    expect(wrong.code).not.toBe(0);
    expect(`${wrong.stdout}${wrong.stderr}`).toMatch(/401 Client Error: Unauthorized/);
    expect(registries.seen('pypi').refused).toBeGreaterThanOrEqual(before.refused + 2);
  });
});

/** A GET without Authorization, as `host`, straight to the server. */
function bare(
  host: string,
  path: string,
): Promise<{ status: number | undefined; challenge: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const ca = readFileSync(caFile);
    const options = {
      host: '127.0.0.1',
      port,
      path,
      ca,
      servername: registries.hosts.npm,
      headers: { host },
    };
    get(options, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode, challenge: res.headers['www-authenticate'], body }),
      );
    }).on('error', reject);
  });
}

it('answers a request without Authorization with the 401 of its host, and another host with a 404', async () => {
  const { git, npm, pypi } = registries.hosts;
  expect(await bare(`${git}:${String(port)}`, '/repo.git/info/refs?service=git-upload-pack')).toMatchObject({
    status: 401,
    challenge: 'Basic realm="private"',
  });
  expect(await bare(npm, '/private-hello')).toMatchObject({ status: 401, body: '{"error":"unauthorized"}' });
  expect(await bare(pypi, '/simple/')).toMatchObject({ status: 401, challenge: 'Basic realm="private"' });
  expect((await bare('other.test', '/')).status).toBe(404);
});
