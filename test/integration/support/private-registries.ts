/**
 * Real package servers that require a token, for the credential broker tests (issue 27): a git server
 * speaking smart HTTP through the host's own `git http-backend` (clone and push), an npm registry and a
 * PEP 503 simple index (PyPI-style). One request handler serves all three, chosen by the Host header, so
 * a test serves them from one HTTPS server whose certificate names the three hosts. Every artifact is
 * built at start by the host's own tools (git, tar, python3's zipfile), so the clients meet real bytes.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';

/** The three servers. */
export type RegistryKind = 'git' | 'npm' | 'pypi';

/** What one server answered: requests with the right Authorization, and those refused with a 401. */
export interface RegistryCounts {
  readonly authorized: number;
  readonly refused: number;
}

/** The three servers, ready for an HTTPS server of the caller's. */
export interface PrivateRegistries {
  /**
   * Request handler for `node:https` `createServer`: dispatches on the Host header (port and case
   * aside) to one of the three servers; any other host is a 404.
   */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** The host names served. */
  readonly hosts: Readonly<Record<RegistryKind, string>>;
  /**
   * The Authorization header value each host requires, compared exactly:
   * - git: `Basic base64("x-access-token:<token>")` (GitHub's form for a token over HTTPS);
   * - npm: `Bearer <token>` (what npm sends for a `//host/:_authToken=<token>` line);
   * - pypi: `Basic base64("__token__:<token>")`, which pip sends from an index URL
   *   `https://__token__:<token>@<host>/simple/` (pip has no other way to send a header).
   */
  readonly authorization: Readonly<Record<RegistryKind, string>>;
  /** The raw tokens inside `authorization` (hex, so they fit in a URL as they are). */
  readonly tokens: Readonly<Record<RegistryKind, string>>;
  /** Requests `host` has answered so far. */
  seen(host: RegistryKind): RegistryCounts;
  /** The bare repository served as `https://<git host>/repo.git`, for `git --git-dir <it> log`. */
  readonly gitRepository: string;
  /** What the package servers hold. */
  readonly packages: {
    /**
     * `private-hello@1.0.0`: `require('private-hello') === 'hello from the private registry'`. Its
     * packument (`GET /private-hello`) gives the tarball as `https://<Host header>/private-hello/-/…tgz`,
     * so a port the client dialled stays in it.
     */
    readonly npm: { readonly name: string; readonly version: string; readonly integrity: string };
    /** `private-hello==1.0`: `import private_hello; private_hello.GREETING == 'hello from the private index'`. */
    readonly pypi: {
      readonly name: string;
      readonly version: string;
      readonly wheel: string;
      readonly sha256: string;
    };
    /**
     * `private-hello 0.1.0` in a cargo registry on the git host: its index is the git repository
     * `https://<git host>/cargo-index.git` (a `config.json` whose `dl` is `https://<git host>/crates`), its
     * `.crate` is served at `/crates/private-hello/0.1.0/download`, both behind the git host's token.
     */
    readonly cargo: {
      readonly name: string;
      readonly version: string;
      readonly index: string;
      readonly cksum: string;
    };
  };
  /** Ends any git http-backend still running and removes the files made at start. */
  stop(): void;
}

/** Options of {@link startPrivateRegistries}. */
export interface PrivateRegistriesOptions {
  /** Host names to serve instead of `git.private.test`, `npm.private.test`, `pypi.private.test`. */
  readonly hosts?: Partial<Record<RegistryKind, string>>;
}

const DEFAULT_HOSTS: Record<RegistryKind, string> = {
  git: 'git.private.test',
  npm: 'npm.private.test',
  pypi: 'pypi.private.test',
};

const NPM = { name: 'private-hello', version: '1.0.0', greeting: 'hello from the private registry' };
const PYPI = {
  name: 'private-hello',
  module: 'private_hello',
  version: '1.0',
  greeting: 'hello from the private index',
};

const CARGO = { name: 'private-hello', version: '0.1.0' };

/** Runs a command, throwing with its stderr on failure. */
function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; input?: string } = {},
): string {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], ...options });
}

/** Git as the test's fixed author, free of the host's and the user's configuration. */
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Private Registry',
  GIT_AUTHOR_EMAIL: 'registry@private.test',
  GIT_COMMITTER_NAME: 'Private Registry',
  GIT_COMMITTER_EMAIL: 'registry@private.test',
};

/** A bare repository `root/repo.git` on branch `main` with one commit (a README), open to pushes. */
function makeGitRepository(root: string): string {
  const bare = join(root, 'repo.git');
  const env = { ...process.env, ...GIT_ENV };
  const git = (args: readonly string[], input?: string): string =>
    execFileSync('git', args, { encoding: 'utf8', env, input, stdio: ['pipe', 'pipe', 'pipe'] }).trim();
  git(['init', '--quiet', '--bare', '--initial-branch=main', bare]);
  const blob = git(['--git-dir', bare, 'hash-object', '-w', '--stdin'], '# private repository\n');
  const tree = git(['--git-dir', bare, 'mktree'], `100644 blob ${blob}\tREADME.md\n`);
  const commit = git(['--git-dir', bare, 'commit-tree', tree, '-m', 'Initial commit']);
  git(['--git-dir', bare, 'update-ref', 'refs/heads/main', commit]);
  // An explicit true lets http-backend run receive-pack (its default needs REMOTE_USER as well).
  git(['--git-dir', bare, 'config', 'http.receivepack', 'true']);
  return bare;
}

/** A bare repository of `files` (path → content, one directory level at most) on branch `main`. */
function makeTreeRepository(bare: string, files: Readonly<Record<string, string>>): void {
  const env = { ...process.env, ...GIT_ENV };
  const git = (args: readonly string[], input?: string): string =>
    execFileSync('git', args, { encoding: 'utf8', env, input, stdio: ['pipe', 'pipe', 'pipe'] }).trim();
  git(['init', '--quiet', '--bare', '--initial-branch=main', bare]);
  const mktree = (entries: readonly string[]): string =>
    git(['--git-dir', bare, 'mktree'], `${entries.join('\n')}\n`);
  const blob = (content: string): string => git(['--git-dir', bare, 'hash-object', '-w', '--stdin'], content);
  // Nested paths (`pr/iv/private-hello`) as trees of trees.
  const tree = (prefix: string): string => {
    const names = new Map<string, string>();
    for (const path of Object.keys(files).filter((p) => p.startsWith(prefix))) {
      const rest = path.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash < 0) names.set(rest, `100644 blob ${blob(files[path] ?? '')}\t${rest}`);
      else
        names.set(
          rest.slice(0, slash),
          `040000 tree ${tree(`${prefix}${rest.slice(0, slash + 1)}`)}\t${rest.slice(0, slash)}`,
        );
    }
    return mktree([...names.values()]);
  };
  const commit = git(['--git-dir', bare, 'commit-tree', tree(''), '-m', 'Initial commit']);
  git(['--git-dir', bare, 'update-ref', 'refs/heads/main', commit]);
}

/** `private-hello`'s `.crate` (a gzip tar of `private-hello-0.1.0/`), made by the host's tar. */
function makeCrate(root: string): Buffer {
  const top = `${CARGO.name}-${CARGO.version}`;
  mkdirSync(join(root, 'cargo', top, 'src'), { recursive: true });
  writeFileSync(
    join(root, 'cargo', top, 'Cargo.toml'),
    `[package]\nname = "${CARGO.name}"\nversion = "${CARGO.version}"\nedition = "2021"\n`,
  );
  writeFileSync(
    join(root, 'cargo', top, 'src', 'lib.rs'),
    'pub const GREETING: &str = "hello from the private crates";\n',
  );
  const file = join(root, 'cargo', `${top}.crate`);
  run('tar', ['-czf', file, '--owner=0', '--group=0', '--numeric-owner', '-C', join(root, 'cargo'), top]);
  return readFileSync(file);
}

/** The npm tarball of `private-hello`, made by the host's tar as npm would pack it (`package/…`, uid 0). */
function makeNpmTarball(root: string): Buffer {
  const staging = join(root, 'npm', 'package');
  mkdirSync(staging, { recursive: true });
  const manifest = { name: NPM.name, version: NPM.version, main: 'index.js', license: 'UNLICENSED' };
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(staging, 'index.js'), `module.exports = ${JSON.stringify(NPM.greeting)};\n`);
  const tarball = join(root, 'npm', `${NPM.name}-${NPM.version}.tgz`);
  run('tar', [
    '-czf',
    tarball,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '-C',
    join(root, 'npm'),
    'package',
  ]);
  return readFileSync(tarball);
}

/** Writes a wheel of the given files, with a RECORD of their sha256s, using Python's zipfile. */
const WHEEL_BUILDER = `
import base64, hashlib, json, sys, zipfile
out, files, record = sys.argv[1], json.load(sys.stdin), sys.argv[2]
lines = []
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as wheel:
    for name, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
        lines.append(f'{name},sha256={digest},{len(data)}')
        wheel.writestr(name, data)
    lines.append(f'{record},,')
    wheel.writestr(record, '\\n'.join(lines) + '\\n')
`;

/** The wheel of `private-hello` 1.0 (pure Python, any platform). */
function makeWheel(root: string): { file: string; bytes: Buffer } {
  const distInfo = `${PYPI.module}-${PYPI.version}.dist-info`;
  const files = {
    [`${PYPI.module}/__init__.py`]: `GREETING = ${JSON.stringify(PYPI.greeting)}\n`,
    [`${distInfo}/METADATA`]: `Metadata-Version: 2.1\nName: ${PYPI.name}\nVersion: ${PYPI.version}\n`,
    [`${distInfo}/WHEEL`]:
      'Wheel-Version: 1.0\nGenerator: private-registries\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
  };
  const file = `${PYPI.module}-${PYPI.version}-py3-none-any.whl`;
  const path = join(root, file);
  run('python3', ['-c', WHEEL_BUILDER, path, `${distInfo}/RECORD`], { input: JSON.stringify(files) });
  return { file, bytes: readFileSync(path) };
}

/** A body with its type and a status, the one shape the npm and PyPI servers answer with. */
function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Splits a CGI answer's header block into a status and headers (RFC 3875 §6.3). */
function parseCgiHeaders(block: string): { status: number; headers: [string, string][] } {
  let status = 200;
  const headers: [string, string][] = [];
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
    else headers.push([name, value]);
  }
  return { status, headers };
}

/**
 * Runs `git http-backend` for one request as a CGI script: the request body streams into it (gzip
 * bodies too: it inflates them itself when told the Content-Encoding) and its answer streams back.
 */
function gitHttpBackend(
  projectRoot: string,
  children: Set<ChildProcess>,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const url = new URL(req.url ?? '/', 'https://git.invalid');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    ...GIT_ENV,
    GIT_PROJECT_ROOT: projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    REMOTE_USER: 'x-access-token',
    REMOTE_ADDR: req.socket.remoteAddress ?? '',
  };
  const header = (name: string): string | undefined => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  for (const [variable, name] of [
    ['CONTENT_TYPE', 'content-type'],
    ['CONTENT_LENGTH', 'content-length'], // absent for a chunked body: http-backend then reads to EOF
    ['HTTP_CONTENT_ENCODING', 'content-encoding'],
    ['GIT_PROTOCOL', 'git-protocol'],
  ] as const) {
    const value = header(name);
    if (value !== undefined) env[variable] = value;
  }
  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.on('error', () => undefined); // it may answer (and exit) before reading the whole body
  req.pipe(child.stdin);

  let head = Buffer.alloc(0);
  let started = false;
  const onData = (chunk: Buffer): void => {
    if (started) return;
    head = Buffer.concat([head, chunk]);
    const match = /\r?\n\r?\n/.exec(head.toString('latin1'));
    if (match === null) return;
    started = true;
    child.stdout.off('data', onData);
    child.stdout.pause();
    const { status, headers } = parseCgiHeaders(head.subarray(0, match.index).toString('latin1'));
    res.statusCode = status;
    for (const [name, value] of headers) res.appendHeader(name, value);
    res.write(head.subarray(match.index + match[0].length));
    child.stdout.pipe(res);
  };
  child.stdout.on('data', onData);
  child.on('error', (error) => {
    children.delete(child);
    if (!res.headersSent) send(res, 500, 'text/plain', `git http-backend: ${error.message}\n`);
    else res.destroy(error);
  });
  child.on('close', (code) => {
    children.delete(child);
    if (started) return;
    send(res, 500, 'text/plain', `git http-backend exited with ${String(code)} before a header: ${stderr}`);
  });
  res.on('close', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill();
  });
}

/**
 * Builds the three servers' content in a fresh folder under `dir`, with fresh random tokens: the
 * caller serves {@link PrivateRegistries.handler} over HTTPS with a certificate for
 * {@link PrivateRegistries.hosts}.
 *
 * @example
 * const registries = startPrivateRegistries(dir);
 * const pki = makeTestPki(dir, 'registries', ['127.0.0.1'], Object.values(registries.hosts));
 * const server = createServer({ cert, key }, registries.handler).listen(0, '127.0.0.1');
 * // git -c http.extraHeader="Authorization: ${registries.authorization.git}" clone https://git.private.test:<port>/repo.git
 */
export function startPrivateRegistries(
  dir: string,
  options: PrivateRegistriesOptions = {},
): PrivateRegistries {
  const hosts = { ...DEFAULT_HOSTS, ...options.hosts };
  const root = mkdtempSync(join(dir, 'private-registries-'));
  const children = new Set<ChildProcess>();
  const counts: Record<RegistryKind, { authorized: number; refused: number }> = {
    git: { authorized: 0, refused: 0 },
    npm: { authorized: 0, refused: 0 },
    pypi: { authorized: 0, refused: 0 },
  };
  let gitRepository: string;
  let tarball: Buffer;
  let wheel: { file: string; bytes: Buffer };
  let crate: Buffer;
  try {
    gitRepository = makeGitRepository(root);
    tarball = makeNpmTarball(root);
    wheel = makeWheel(root);
    crate = makeCrate(root);
    const cksum = createHash('sha256').update(crate).digest('hex');
    const entry = { name: CARGO.name, vers: CARGO.version, deps: [], cksum, features: {}, yanked: false };
    makeTreeRepository(join(root, 'cargo-index.git'), {
      'config.json': `${JSON.stringify({ dl: `https://${hosts.git}/crates` })}\n`,
      [`${CARGO.name.slice(0, 2)}/${CARGO.name.slice(2, 4)}/${CARGO.name}`]: `${JSON.stringify(entry)}\n`,
    });
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const token = (): string => randomBytes(24).toString('hex');
  const tokens = { git: token(), npm: token(), pypi: token() };
  const basic = (user: string, password: string): string =>
    `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const authorization = {
    git: basic('x-access-token', tokens.git),
    npm: `Bearer ${tokens.npm}`,
    pypi: basic('__token__', tokens.pypi),
  };

  const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
  const shasum = createHash('sha1').update(tarball).digest('hex');
  const tarballPath = `/${NPM.name}/-/${NPM.name}-${NPM.version}.tgz`;
  // The tarball's URL names the origin the client asked for (the Host header, port and all).
  const packument = (origin: string): string =>
    JSON.stringify({
      _id: NPM.name,
      name: NPM.name,
      'dist-tags': { latest: NPM.version },
      versions: {
        [NPM.version]: {
          _id: `${NPM.name}@${NPM.version}`,
          name: NPM.name,
          version: NPM.version,
          main: 'index.js',
          dist: { tarball: `https://${origin}${tarballPath}`, integrity, shasum },
        },
      },
    });
  const wheelSha256 = createHash('sha256').update(wheel.bytes).digest('hex');

  const serveNpm = (req: IncomingMessage, res: ServerResponse, path: string): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      send(res, 405, 'application/json', '{"error":"method"}');
    else if (path === `/${NPM.name}`)
      send(res, 200, 'application/json', packument(req.headers.host ?? hosts.npm));
    else if (path === tarballPath) send(res, 200, 'application/octet-stream', tarball);
    else send(res, 404, 'application/json', '{"error":"not found"}');
  };
  const servePypi = (req: IncomingMessage, res: ServerResponse, path: string): void => {
    const html = (body: string): void =>
      send(res, 200, 'text/html; charset=utf-8', `<!DOCTYPE html>\n<html><body>\n${body}\n</body></html>\n`);
    if (req.method !== 'GET' && req.method !== 'HEAD') send(res, 405, 'text/plain', 'method\n');
    else if (path === '/simple/') html(`<a href="/simple/${PYPI.name}/">${PYPI.name}</a>`);
    else if (path === `/simple/${PYPI.name}/`)
      html(`<a href="/packages/${wheel.file}#sha256=${wheelSha256}">${wheel.file}</a>`);
    else if (path === '/simple' || path === `/simple/${PYPI.name}`) {
      res.writeHead(301, { location: `${path}/` }).end();
    } else if (path === `/packages/${wheel.file}`) send(res, 200, 'application/octet-stream', wheel.bytes);
    else send(res, 404, 'text/plain', 'not found\n');
  };
  const refuse: Record<RegistryKind, (res: ServerResponse) => void> = {
    git: (res) => {
      res.setHeader('www-authenticate', 'Basic realm="private"');
      send(res, 401, 'text/plain', 'unauthorized\n');
    },
    npm: (res) => {
      res.setHeader('www-authenticate', 'Bearer realm="private"');
      send(res, 401, 'application/json', '{"error":"unauthorized"}');
    },
    pypi: (res) => {
      res.setHeader('www-authenticate', 'Basic realm="private"');
      send(res, 401, 'text/plain', 'unauthorized\n');
    },
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const kind = (Object.keys(hosts) as RegistryKind[]).find((k) => hosts[k].toLowerCase() === host);
    if (kind === undefined) {
      send(res, 404, 'text/plain', `no registry at ${host}\n`);
      return;
    }
    if (req.headers.authorization !== authorization[kind]) {
      counts[kind].refused++;
      req.resume();
      refuse[kind](res);
      return;
    }
    counts[kind].authorized++;
    const path = new URL(req.url ?? '/', 'https://registry.invalid').pathname;
    if (kind === 'git' && path === `/crates/${CARGO.name}/${CARGO.version}/download`) {
      send(res, 200, 'application/octet-stream', crate);
    } else if (kind === 'git') gitHttpBackend(root, children, req, res);
    else if (kind === 'npm') serveNpm(req, res, path);
    else servePypi(req, res, path);
  };

  return {
    handler,
    hosts,
    authorization,
    tokens,
    seen: (kind) => ({ ...counts[kind] }),
    gitRepository,
    packages: {
      npm: { name: NPM.name, version: NPM.version, integrity },
      pypi: { name: PYPI.name, version: PYPI.version, wheel: wheel.file, sha256: wheelSha256 },
      cargo: {
        name: CARGO.name,
        version: CARGO.version,
        index: `https://${hosts.git}/cargo-index.git`,
        cksum: createHash('sha256').update(crate).digest('hex'),
      },
    },
    stop: () => {
      for (const child of children) child.kill('SIGKILL');
      children.clear();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
