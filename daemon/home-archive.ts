/**
 * The home archive endpoints (`protocol/home-archive.ts`): the sandbox user's home as one gzip tar
 * stream, made or extracted by GNU tar started like every command (`spawnAsUser`): as the user, in the
 * commands' cgroup. So tar reads and writes exactly what the user could, its memory is sandbox code's,
 * and sandboxd only moves bytes between the socket and tar's pipes, with backpressure both ways.
 *
 * Extraction is safe by who runs it first: an unprivileged user in the sandbox's own namespaces cannot
 * write anything its own code could not. On top, tar's defaults (no `-P`) refuse members with `..`,
 * strip a leading `/`, and create a symlink pointing outside only after every other member, so no
 * member is written through one; device nodes fail (no `CAP_MKNOD`), which fails the whole call. The
 * flags: `--no-same-owner` (everything is the user's), `--preserve-permissions` (modes as saved, not cut
 * by a umask), `--no-overwrite-dir` (the home itself, and any directory already there, keeps its owner
 * and mode).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  ARCHIVE_EXIT_TRAILER,
  HOME_ARCHIVE_PATH,
  HOME_ARCHIVE_TYPE,
  archiveExitValue,
} from '../protocol/home-archive.js';
import type { RouteReply } from '../protocol/router.js';
import { countPassedOn } from './buffer-collection.js';
import { killProcessTree, spawnAsUser, type SandboxUser } from './sandbox-spawn.js';
import { RequestError } from './request-error.js';
import { quote } from '../rules/shell-quote.js';

/**
 * `tar` writing the home to stdout (`exec`: the process sandboxd started is tar itself). `--sparse`: a
 * file of holes (`truncate -s 20G`) is saved as holes, so it neither streams for an hour nor comes back
 * as 20 GB of zeros that no home can hold.
 */
export const archiveCommand = (home: string): string =>
  `exec tar --create --sparse --gzip --file=- --directory=${quote(home)} .`;

/** `tar` extracting stdin into the home (flags: see the module comment). */
export const extractCommand = (home: string): string =>
  `exec tar --extract --gzip --file=- --directory=${quote(home)} --no-same-owner --preserve-permissions --no-overwrite-dir`;

/** How a process ended: its exit code, or the signal that ended it. */
interface Ending {
  readonly code: number | null;
  readonly signal: string | null;
}

function start(
  command: string,
  user: SandboxUser,
): { tar: ChildProcessWithoutNullStreams; ended: Promise<Ending> } {
  const tar = spawnAsUser({ cmd: command, envs: {}, cwd: user.home }, user);
  const ended = new Promise<Ending>((resolve) => {
    tar.once('close', (code, signal) => resolve({ code, signal }));
    // Not started at all (no `close` may follow).
    tar.once('error', () => resolve({ code: null, signal: 'SPAWN' }));
  });
  // Its messages name sandbox files: read and dropped, so a long list never blocks tar on a full pipe.
  tar.stderr.resume();
  return { tar, ended };
}

/** Ends tar and whatever it started (gzip). */
function stop(tar: ChildProcessWithoutNullStreams): void {
  void killProcessTree(tar, 0).catch(() => undefined);
}

/**
 * `GET /v1/home/archive`: streams tar's output as the body, then its exit status as the trailer. A
 * client that goes away ends tar.
 */
export function sendHomeArchive(res: ServerResponse, user: SandboxUser): void {
  const { tar, ended } = start(archiveCommand(user.home), user);
  tar.stdin.end();
  res.writeHead(200, {
    'content-type': HOME_ARCHIVE_TYPE,
    'cache-control': 'no-store',
    trailer: ARCHIVE_EXIT_TRAILER,
  });
  tar.stdout.pipe(res, { end: false });
  void ended.then(({ code, signal }) => {
    // `close` comes after stdout's end, so every byte tar wrote was handed to `res` before this.
    res.addTrailers({ [ARCHIVE_EXIT_TRAILER]: archiveExitValue(code, signal) });
    res.end();
  });
  res.once('close', () => {
    if (!res.writableFinished) stop(tar);
  });
}

/**
 * `PUT /v1/home/archive`: extracts the body into the home as it arrives; answers once tar has ended.
 *
 * @throws RequestError `sandbox_error` naming tar's exit status when it failed (a malformed archive, a
 *   member it refused), `invalid_argument` when the body broke off
 */
export async function receiveHomeArchive(req: IncomingMessage, user: SandboxUser): Promise<void> {
  const { tar, ended } = start(extractCommand(user.home), user);
  tar.stdout.resume();
  // tar may end before the body does (a malformed archive): its exit status says why, not EPIPE.
  tar.stdin.on('error', () => undefined);
  req.on('error', () => undefined); // a client that went away: `close` below tells
  req.pipe(tar.stdin);
  countPassedOn(req);
  const brokeOff = new Promise<'broke off'>((resolve) => {
    req.once('close', () => {
      if (!req.complete) resolve('broke off');
    });
  });
  const outcome = await Promise.race([ended, brokeOff]);
  if (outcome === 'broke off') {
    stop(tar);
    await ended;
    throw new RequestError('invalid_argument', 'the archive upload broke off');
  }
  if (outcome.code !== 0) {
    req.unpipe(tar.stdin);
    throw new RequestError(
      'sandbox_error',
      `the home archive could not be extracted (tar ended with ${archiveExitValue(outcome.code, outcome.signal)})`,
    );
  }
}

/** The two endpoints, for sandboxd's router. */
export function homeArchiveRoutes(
  user: SandboxUser,
): Record<string, (call: { req: IncomingMessage; res: ServerResponse }) => RouteReply | Promise<RouteReply>> {
  return {
    [`GET ${HOME_ARCHIVE_PATH}`]: ({ res }) => {
      sendHomeArchive(res, user);
      return 'streamed';
    },
    [`PUT ${HOME_ARCHIVE_PATH}`]: async ({ req }) => {
      await receiveHomeArchive(req, user);
      return { status: 200, body: {} };
    },
  };
}
