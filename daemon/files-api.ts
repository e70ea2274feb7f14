/**
 * The files API (`protocol/files-wire.ts`): each call is one small Node program started like every
 * command (`spawnAsUser`: the sandbox user's uid and gid, no groups, no capabilities, the commands'
 * cgroup), so sandboxd itself never opens a sandbox path, and a call reaches exactly what the user's own
 * code could (never `/proc/1/environ` or sandboxd's files). The program answers one JSON line on stdout
 * (`{ ok }` with a result, or `{ errno }`); a read follows its line with the file's bytes, a write reads
 * them from stdin. sandboxd only moves bytes between the socket and the program's pipes, with
 * backpressure, never a whole file in memory.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { z } from 'zod';
import {
  ERRNO_CODES,
  FILES_PATH,
  MAX_LIST_DEPTH,
  filePathProblem,
  pathBodySchema,
  renameBodySchema,
} from '../protocol/files-wire.js';
import type { RouteReply } from '../protocol/router.js';
import { spawnAsUser, type SandboxUser } from './managed-process.js';
import { killTree } from './process-tree.js';
import { RequestError } from './request-error.js';
import { quote } from './shell-quote.js';

/** The program each call runs as the user (CommonJS for `node -e`; arguments: the operation, paths). */
export const FILES_HELPER = String.raw`
const fs = require('fs'), path = require('path');
const [op, a, b] = process.argv.slice(1);
const say = (v) => process.stdout.write(JSON.stringify(v) + '\n');
const fail = (e) => { say({ errno: (e && e.code) || 'EIO' }); process.exitCode = 1; };
const TYPES = (s) => (s.isFile() ? 'file' : s.isDirectory() ? 'dir' : s.isSymbolicLink() ? 'symlink' : 'other');
const info = (p) => {
  const s = fs.lstatSync(p);
  const e = { name: path.basename(p), path: p, type: TYPES(s), size: s.size, mode: s.mode & 0o7777,
    uid: s.uid, gid: s.gid, modifiedTime: s.mtime.toISOString() };
  if (s.isSymbolicLink()) e.symlinkTarget = fs.readlinkSync(p);
  return e;
};
const list = (dir, depth, out) => {
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    try { out.push(info(p)); } catch { continue; }
    if (depth > 1 && d.isDirectory()) { try { list(p, depth - 1, out); } catch {} }
  }
  return out;
};
try {
  if (op === 'read') {
    const fd = fs.openSync(a, 'r');
    if (fs.fstatSync(fd).isDirectory()) throw Object.assign(new Error(), { code: 'EISDIR' });
    say({ ok: true });
    fs.createReadStream(null, { fd }).on('error', () => process.exit(1)).pipe(process.stdout);
  } else if (op === 'write') {
    fs.mkdirSync(path.dirname(a), { recursive: true });
    const out = fs.createWriteStream(null, { fd: fs.openSync(a, 'w') });
    require('stream').pipeline(process.stdin, out, (e) => (e ? fail(e) : say({ ok: info(a) })));
  } else if (op === 'list') {
    if (!fs.statSync(a).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
    say({ ok: { entries: list(a, Number(b), []) } });
  } else if (op === 'info') {
    say({ ok: info(a) });
  } else if (op === 'mkdir') {
    let there = false;
    try { there = fs.statSync(a).isDirectory(); } catch {}
    if (!there) fs.mkdirSync(a, { recursive: true });
    say({ ok: { created: !there } });
  } else if (op === 'remove') {
    fs.rmSync(a, { recursive: true });
    say({ ok: {} });
  } else if (op === 'rename') {
    fs.renameSync(a, b);
    say({ ok: info(b) });
  } else fail({ code: 'EINVAL' });
} catch (e) { fail(e); }
`;

/** How each errno is told (the message names the call, never the path). */
const ERRNO_TEXT: Readonly<Record<keyof typeof ERRNO_CODES, string>> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large',
};

/** Largest JSON answer of the helper (a long `list`). */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** Largest JSON request body of the files API. */
const MAX_BODY_BYTES = 64 * 1024;

const answerSchema = z.union([
  z.strictObject({ ok: z.unknown() }),
  z.strictObject({ errno: z.string().max(32) }),
]);

/** The error a helper's `errno` becomes. */
export function errnoError(call: string, errno: string): RequestError {
  if (Object.hasOwn(ERRNO_CODES, errno)) {
    const known = errno as keyof typeof ERRNO_CODES;
    return new RequestError(ERRNO_CODES[known], `${call}: ${ERRNO_TEXT[known]}`, undefined, { errno });
  }
  return new RequestError('sandbox_error', `${call} failed`, undefined, {
    errno: /^E[A-Z0-9]{1,15}$/.test(errno) ? errno : 'unknown',
  });
}

function helper(user: SandboxUser, args: readonly string[]): ChildProcessWithoutNullStreams {
  const cmd = ['exec', quote(process.execPath), '-e', quote(FILES_HELPER), '--', ...args.map(quote)];
  const child = spawnAsUser({ cmd: cmd.join(' '), envs: {}, cwd: '/' }, user);
  child.stderr.resume();
  child.stdin.on('error', () => undefined);
  return child;
}

function stop(child: ChildProcessWithoutNullStreams): void {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    void killTree(child.pid, 0).catch(() => undefined);
  }
}

/** The helper's first line (and what followed it in the same chunk), or why it had none. */
function firstLine(child: ChildProcessWithoutNullStreams, limit: number): Promise<[unknown, Buffer]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      const all = Buffer.concat(chunks);
      const end = all.indexOf(10);
      if (end < 0 && size <= limit) return;
      child.stdout.off('data', onData).off('end', onEnd).pause();
      if (end < 0) {
        stop(child);
        reject(new RequestError('sandbox_error', 'the files helper answered too much'));
        return;
      }
      try {
        resolve([JSON.parse(all.subarray(0, end).toString('utf8')), all.subarray(end + 1)]);
      } catch {
        reject(new RequestError('sandbox_error', 'the files helper answered malformed JSON'));
      }
    };
    const onEnd = (): void => reject(new RequestError('sandbox_error', 'the files helper did not answer'));
    child.stdout.on('data', onData).once('end', onEnd);
    child.once('error', () => reject(new RequestError('sandbox_error', 'the files helper did not start')));
  });
}

async function answerOf(call: string, child: ChildProcessWithoutNullStreams): Promise<[unknown, Buffer]> {
  const [value, rest] = await firstLine(child, MAX_ANSWER_BYTES);
  const parsed = answerSchema.safeParse(value);
  if (!parsed.success) throw new RequestError('sandbox_error', 'the files helper answered malformed JSON');
  if ('errno' in parsed.data) throw errnoError(call, parsed.data.errno);
  return [parsed.data.ok, rest];
}

/** Runs one helper call that answers JSON only. */
async function run(call: string, user: SandboxUser, args: readonly string[]): Promise<unknown> {
  const child = helper(user, args);
  child.stdin.end();
  try {
    return (await answerOf(call, child))[0];
  } finally {
    stop(child);
  }
}

function queryPath(url: URL, call: string): string {
  const path = url.searchParams.get('path') ?? '';
  const problem = filePathProblem(path);
  if (problem !== undefined) throw new RequestError('invalid_argument', `${call}: path ${problem}`);
  return path;
}

async function jsonBody<T extends z.ZodType>(
  req: IncomingMessage,
  schema: T,
  call: string,
): Promise<z.output<T>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new RequestError('invalid_argument', `${call}: body too large`);
    chunks.push(chunk as Buffer);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new RequestError('invalid_argument', `${call}: body is not JSON`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RequestError(
      'invalid_argument',
      `${call}: ${issue?.path.join('.') || 'body'} ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** `GET /v1/files/content`: the helper's bytes after its first line, as the body. */
async function sendFile(res: ServerResponse, user: SandboxUser, path: string): Promise<void> {
  const child = helper(user, ['read', path]);
  child.stdin.end();
  let rest: Buffer;
  try {
    [, rest] = await answerOf('files.read', child);
  } catch (error) {
    stop(child);
    throw error;
  }
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' });
  if (rest.length > 0) res.write(rest);
  child.stdout.pipe(res, { end: false });
  child.once('close', (code) => {
    if (code === 0) res.end();
    else res.destroy(); // a read that failed midway: the client sees a broken body, not a short file
  });
  res.once('close', () => {
    if (!res.writableFinished) stop(child);
  });
}

/** `PUT /v1/files/content`: the body into the helper's stdin; its answer once it has written all. */
async function receiveFile(req: IncomingMessage, user: SandboxUser, path: string): Promise<unknown> {
  const child = helper(user, ['write', path]);
  req.on('error', () => undefined);
  req.pipe(child.stdin);
  const brokeOff = new Promise<'broke off'>((resolve) => {
    req.once('close', () => {
      if (!req.complete) resolve('broke off');
    });
  });
  const answer = answerOf('files.write', child);
  answer.catch(() => undefined);
  try {
    const outcome = await Promise.race([answer, brokeOff]);
    if (outcome === 'broke off')
      throw new RequestError('invalid_argument', 'files.write: the upload broke off');
    return outcome[0];
  } finally {
    req.unpipe(child.stdin);
    stop(child);
  }
}

type FilesHandler = (call: { req: IncomingMessage; res: ServerResponse; url: URL }) => Promise<RouteReply>;

/** The files API's endpoints, for sandboxd's router. */
export function filesRoutes(user: SandboxUser): Record<string, FilesHandler> {
  const ok = (body: unknown): RouteReply => ({ status: 200, body });
  return {
    [`GET ${FILES_PATH}/content`]: async ({ res, url }) => {
      await sendFile(res, user, queryPath(url, 'files.read'));
      return 'streamed';
    },
    [`PUT ${FILES_PATH}/content`]: async ({ req, url }) =>
      ok(await receiveFile(req, user, queryPath(url, 'files.write'))),
    [`GET ${FILES_PATH}/list`]: async ({ url }) => {
      const path = queryPath(url, 'files.list');
      const depth = Number(url.searchParams.get('depth') ?? '1');
      if (!Number.isInteger(depth) || depth < 1 || depth > MAX_LIST_DEPTH) {
        throw new RequestError(
          'invalid_argument',
          `files.list: depth must be 1 to ${String(MAX_LIST_DEPTH)}`,
        );
      }
      return ok(await run('files.list', user, ['list', path, String(depth)]));
    },
    [`GET ${FILES_PATH}/info`]: async ({ url }) =>
      ok(await run('files.getInfo', user, ['info', queryPath(url, 'files.getInfo')])),
    [`POST ${FILES_PATH}/dir`]: async ({ req }) => {
      const { path } = await jsonBody(req, pathBodySchema, 'files.makeDir');
      return ok(await run('files.makeDir', user, ['mkdir', path]));
    },
    [`POST ${FILES_PATH}/remove`]: async ({ req }) => {
      const { path } = await jsonBody(req, pathBodySchema, 'files.remove');
      return ok(await run('files.remove', user, ['remove', path]));
    },
    [`POST ${FILES_PATH}/rename`]: async ({ req }) => {
      const { from, to } = await jsonBody(req, renameBodySchema, 'files.rename');
      return ok(await run('files.rename', user, ['rename', from, to]));
    },
  };
}
