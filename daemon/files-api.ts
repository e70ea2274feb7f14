/**
 * The files API (`protocol/files-wire.ts`): every call runs in a small Node program started like every
 * command (`spawnAsUser`: the calling account's ids, the sandbox user's unless the call asks for root,
 * the commands' cgroup), so sandboxd itself never opens a sandbox path, and a call reaches exactly what
 * that account's own code could (never `/proc/1/environ` or sandboxd's files). Inside a sandbox the
 * user's missing parents are made by root (E2B's envd does so: the user has `sudo` anyway) and handed to
 * the user before the user's program writes. A read or a write of a file over 64 KiB is a program of its own,
 * which answers one JSON line on stdout (`{ ok }`, or `{ errno }`); a read follows its line with the
 * file's bytes, a write reads them from stdin. sandboxd only moves bytes between the socket and the
 * program's pipes, with backpressure, never a whole file in memory. Reading or writing something that
 * is not a regular file (a FIFO could block forever, a device never end) is refused after a non-blocking
 * open and `fstat`. The JSON calls, and reads and writes of 64 KiB or less (whole, base64 in one line),
 * share one resident program (`files-resident.ts`); a watch
 * (`files-watch.ts`) is one long-lived program of its own.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { z } from 'zod';
import {
  FILES_PATH,
  MAX_LIST_DEPTH,
  entryInfoSchema,
  filePathProblem,
  listAnswerSchema,
  makeDirAnswerSchema,
  pathBodySchema,
  renameBodySchema,
} from '../protocol/files-wire.js';
import type { RouteReply } from '../protocol/router.js';
import type { SandboxAccount } from '../protocol/sandbox-accounts.js';
import { countPassedOn, passedOn } from './buffer-collection.js';
import { rootAvailable, type SandboxUser } from './sandbox-spawn.js';
import { checkedAccount, queryAccount } from './sandbox-account.js';
import { ANSWER_DEADLINE_MS, answerOf, clientGone, spawnHelper, stopHelper } from './files-helper.js';
import { FILES_HELPER } from './files-program.js';
import { ResidentFilesHelper } from './files-resident.js';
import { streamWatch } from './files-watch.js';
import { RequestError } from './request-error.js';
import { readBody, readJson } from './request-body.js';

/** Largest first line of a read or write helper. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** A read helper's first line: the file's size when it was opened. */
const readAnswerSchema = z.strictObject({ size: z.number().int().nonnegative() });

/**
 * A file this small is read or written whole by the resident helper (its bytes in one answer or
 * request line, base64); a larger one streams through a helper of its own.
 */
const SMALL_FILE_BYTES = 64 * 1024;

/** The resident helper's answer to `readsmall`: the bytes, or only the size of a larger file. */
const smallReadSchema = z.union([
  z.strictObject({ size: z.number().int().nonnegative(), data: z.string() }),
  z.strictObject({
    size: z.number().int().nonnegative(),
    big: z.literal(true),
    data: z.undefined().optional(),
  }),
]);

/** Largest JSON request body of the files API. */
const MAX_BODY_BYTES = 64 * 1024;

/** Runs `FILES_HELPER` as `account` with `args` (the operation, paths). */
const helper = (
  user: SandboxUser,
  account: SandboxAccount,
  args: readonly string[],
): ChildProcessWithoutNullStreams => spawnHelper(FILES_HELPER, user, args, account);

function queryPath(url: URL, call: string): string {
  const path = url.searchParams.get('path') ?? '';
  const problem = filePathProblem(path);
  if (problem !== undefined) throw new RequestError('invalid_argument', `${call}: path ${problem}`);
  return path;
}

/**
 * `GET /v1/files/content`: the helper's bytes after its first line, as the body, `content-length` the
 * size the helper found on opening the file, and never more bytes than that (a file that grows, or a
 * helper the user's code tampers with, cannot make sandboxd send more than it announced).
 */
async function sendFile(
  res: ServerResponse,
  user: SandboxUser,
  account: SandboxAccount,
  path: string,
): Promise<void> {
  const child = helper(user, account, ['read', path]);
  child.stdin.end();
  // From the start: a client that leaves while the helper opens the file ends it too.
  const gone = clientGone(res);
  gone.addEventListener('abort', () => stopHelper(child));
  let size: number;
  let rest: Buffer;
  try {
    [{ size }, rest] = await answerOf(
      'files.read',
      child,
      MAX_ANSWER_BYTES,
      readAnswerSchema,
      AbortSignal.timeout(ANSWER_DEADLINE_MS),
    );
  } catch (error) {
    stopHelper(child);
    throw error;
  }
  if (gone.aborted) return;
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'cache-control': 'no-store',
    'content-length': size,
  });
  let unsent = size;
  const send = (chunk: Buffer): void => {
    const part = chunk.length > unsent ? chunk.subarray(0, unsent) : chunk;
    unsent -= part.length;
    passedOn(part.length);
    if (part.length > 0 && !res.write(part)) child.stdout.pause();
    if (unsent === 0) {
      child.stdout.off('data', send);
      stopHelper(child);
      res.end();
    }
  };
  res.on('drain', () => child.stdout.resume());
  child.once('close', () => {
    // A read that failed midway, or a file that shrank: the client sees a broken body, not a short file.
    if (!res.writableEnded) res.destroy();
  });
  if (size === 0) {
    res.end();
    return;
  }
  child.stdout.on('data', send);
  if (rest.length > 0) send(rest);
  child.stdout.resume();
}

/**
 * `PUT /v1/files/content`: the body into the helper's stdin; its answer once it has written all. The
 * helper is ended when the client leaves, whether mid-upload or after it (a helper that has all the
 * bytes but has not answered is not left behind), and when it has not answered `ANSWER_DEADLINE_MS`
 * after the upload's end (the call fails with `sandbox_error`). While the upload lasts, the client's
 * pace is the helper's: it reads as fast as the body comes.
 */
async function receiveFile(
  req: IncomingMessage,
  res: ServerResponse,
  user: SandboxUser,
  account: SandboxAccount,
  path: string,
): Promise<unknown> {
  const child = helper(user, account, ['write', path]);
  req.on('error', () => undefined);
  req.pipe(child.stdin);
  countPassedOn(req);
  const gone = clientGone(res);
  const left = new Promise<'left'>((resolve) => {
    gone.addEventListener('abort', () => resolve('left'), { once: true });
    req.once('close', () => {
      if (!req.complete) resolve('left');
    });
  });
  const deadline = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const startDeadline = (): void => {
    timer ??= setTimeout(() => deadline.abort(), ANSWER_DEADLINE_MS);
  };
  if (req.complete) startDeadline();
  else req.once('end', startDeadline);
  const answer = answerOf('files.write', child, MAX_ANSWER_BYTES, entryInfoSchema, deadline.signal);
  answer.catch(() => undefined);
  try {
    const outcome = await Promise.race([answer, left]);
    if (outcome === 'left') {
      throw new RequestError('invalid_argument', 'files.write: the upload broke off');
    }
    return outcome[0];
  } finally {
    clearTimeout(timer);
    req.off('end', startDeadline);
    req.unpipe(child.stdin);
    // SIGTERM first: a helper still writing (the upload broke off) removes its partial file; SIGKILL
    // after 2 s, for one the user's code stopped.
    stopHelper(child, 2_000);
    await discardRest(req);
  }
}

/**
 * Reads and drops what is left of an upload that failed early (no space), so the client, still
 * sending, gets to read the typed error instead of a connection reset.
 */
async function discardRest(req: IncomingMessage): Promise<void> {
  if (req.complete || req.destroyed) return;
  const done = new Promise((resolve) => {
    req.once('end', resolve).once('close', resolve);
  });
  req.resume();
  await done;
}

type FilesHandler = (call: { req: IncomingMessage; res: ServerResponse; url: URL }) => Promise<RouteReply>;

/**
 * The files API's endpoints, for sandboxd's router. Each call acts as the account it names (`?user=`
 * or the body's `user`; the user by default), checked before anything starts: root only inside a
 * sandbox. There, the user's missing parents (a write's, a new directory's) are made by root's resident
 * helper and handed to the user, as E2B's envd makes them; the file itself is written as the user.
 */
export function filesRoutes(user: SandboxUser): Record<string, FilesHandler> {
  const ok = (body: unknown): RouteReply => ({ status: 200, body });
  const residents: Record<SandboxAccount, ResidentFilesHelper> = {
    user: new ResidentFilesHelper(FILES_HELPER, user, 'user'),
    root: new ResidentFilesHelper(FILES_HELPER, user, 'root'),
  };
  /** Who makes `account`'s missing folders, and for whom (`uid:gid`): root for the user, where it can. */
  const folderMaker = (account: SandboxAccount): { by: SandboxAccount; owner: string[] } =>
    account === 'user' && rootAvailable(user)
      ? { by: 'root', owner: [`${String(user.uid)}:${String(user.gid)}`] }
      : { by: account, owner: [] };

  return {
    [`GET ${FILES_PATH}/content`]: async ({ res, url }) => {
      const path = queryPath(url, 'files.read');
      const account = queryAccount(url, 'files.read', user);
      // A small file whole from the resident helper (about a millisecond); a larger one streamed by a
      // read helper of its own (a Node start, but never the file in sandboxd's memory).
      const small = await residents[account].call(
        'files.read',
        'readsmall',
        [path, String(SMALL_FILE_BYTES)],
        smallReadSchema,
        clientGone(res),
      );
      if (small.data === undefined) {
        await sendFile(res, user, account, path);
        return 'streamed';
      }
      const bytes = Buffer.from(small.data, 'base64');
      if (bytes.length > SMALL_FILE_BYTES)
        throw new RequestError('sandbox_error', 'the files helper answered too much');
      passedOn(bytes.length);
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'cache-control': 'no-store',
        'content-length': bytes.length,
      });
      res.end(bytes);
      return 'streamed';
    },
    [`PUT ${FILES_PATH}/content`]: async ({ req, res, url }) => {
      const path = queryPath(url, 'files.write');
      const account = queryAccount(url, 'files.write', user);
      const maker = folderMaker(account);
      if (maker.by !== account) {
        // The parents first (a stat when they are there), so the user's helper finds them made.
        await residents[maker.by]
          .call('files.write', 'parents', [path, ...maker.owner], z.strictObject({}), clientGone(res))
          .catch(async (error: unknown) => {
            await discardRest(req);
            throw error;
          });
      }
      // A small upload (its length announced) is written whole by the resident helper, as a write
      // helper writes it; any other streams through a write helper of its own.
      const length = Number(req.headers['content-length'] ?? Number.NaN);
      if (Number.isInteger(length) && length <= SMALL_FILE_BYTES) {
        const bytes = await readBody(req, SMALL_FILE_BYTES, 'files.write');
        passedOn(bytes.length);
        return ok(
          await residents[account].call(
            'files.write',
            'writesmall',
            [path, bytes.toString('base64')],
            entryInfoSchema,
            clientGone(res),
          ),
        );
      }
      return ok(await receiveFile(req, res, user, account, path));
    },
    [`GET ${FILES_PATH}/list`]: async ({ res, url }) => {
      const path = queryPath(url, 'files.list');
      const depth = Number(url.searchParams.get('depth') ?? '1');
      if (!Number.isInteger(depth) || depth < 1 || depth > MAX_LIST_DEPTH) {
        throw new RequestError(
          'invalid_argument',
          `files.list: depth must be 1 to ${String(MAX_LIST_DEPTH)}`,
        );
      }
      const account = queryAccount(url, 'files.list', user);
      return ok(
        await residents[account].call(
          'files.list',
          'list',
          [path, String(depth)],
          listAnswerSchema,
          clientGone(res),
        ),
      );
    },
    [`GET ${FILES_PATH}/info`]: async ({ res, url }) => {
      const path = queryPath(url, 'files.getInfo');
      const account = queryAccount(url, 'files.getInfo', user);
      return ok(
        await residents[account].call('files.getInfo', 'info', [path], entryInfoSchema, clientGone(res)),
      );
    },
    [`POST ${FILES_PATH}/dir`]: async ({ req, res }) => {
      const body = await readJson(req, pathBodySchema, MAX_BODY_BYTES, 'files.makeDir');
      const maker = folderMaker(checkedAccount('files.makeDir', body.user, user));
      return ok(
        await residents[maker.by].call(
          'files.makeDir',
          'mkdir',
          [body.path, ...maker.owner],
          makeDirAnswerSchema,
          clientGone(res),
        ),
      );
    },
    [`POST ${FILES_PATH}/remove`]: async ({ req, res }) => {
      const body = await readJson(req, pathBodySchema, MAX_BODY_BYTES, 'files.remove');
      const account = checkedAccount('files.remove', body.user, user);
      return ok(
        await residents[account].call(
          'files.remove',
          'remove',
          [body.path],
          z.strictObject({}),
          clientGone(res),
        ),
      );
    },
    [`GET ${FILES_PATH}/watch`]: async ({ res, url }) => {
      const recursive = url.searchParams.get('recursive') ?? 'false';
      if (recursive !== 'true' && recursive !== 'false') {
        throw new RequestError('invalid_argument', 'files.watchDir: recursive must be true or false');
      }
      const path = queryPath(url, 'files.watchDir');
      const account = queryAccount(url, 'files.watchDir', user);
      await streamWatch(res, user, path, recursive === 'true', account);
      return 'streamed';
    },
    [`POST ${FILES_PATH}/rename`]: async ({ req, res }) => {
      const body = await readJson(req, renameBodySchema, MAX_BODY_BYTES, 'files.rename');
      const account = checkedAccount('files.rename', body.user, user);
      return ok(
        await residents[account].call(
          'files.rename',
          'rename',
          [body.from, body.to],
          entryInfoSchema,
          clientGone(res),
        ),
      );
    },
  };
}
