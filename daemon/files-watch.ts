/**
 * `GET /v1/files/watch`: a directory's changes as NDJSON. A helper program runs as the calling account
 * (so it watches only what that account could read) with Node's `fs.watch`, one non-recursive watcher
 * a directory (Node 20's own recursive mode loses a directory once it is renamed). `fs.watch` says only `rename`
 * (something appeared or went) or `change`; the helper tells fsnotify's five kinds from a map of what
 * it last saw under each name (inode, size, times, mode): a name that went whose inode shows up under
 * another name in the same batch of events is `rename` (then `create` for the new name), else
 * `remove`; a `change` that moved the size or the modification time is `write`, one that only moved the
 * mode or the owner is `chmod`; a file put over a file from outside the watch's view (`files.write`
 * writes an existing file to a hidden temporary `.<name>.sdk-<hex>` renamed over it, never shown) is
 * `write`. Best effort, as inotify is: a name created and gone between two reads
 * of the kernel's queue may be missed, and a move out of the tree reads as `remove`.
 */
import type { ServerResponse } from 'node:http';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { watchLineSchema } from '../protocol/files-wire.js';
import type { SandboxAccount } from '../protocol/sandbox-accounts.js';
import type { SandboxUser } from './sandbox-spawn.js';
import { z } from 'zod';
import {
  ANSWER_DEADLINE_MS,
  LineSplitter,
  answerOf,
  clientGone,
  spawnHelper,
  stopHelper,
} from './files-helper.js';

/**
 * The watch program (CommonJS for `node -e`; arguments: the directory, `true` for its whole tree). It
 * ends when its stdin closes (sandboxd went away) or the watched directory does.
 */
export const WATCH_HELPER = String.raw`// sdk files watch
const fs = require('fs'), path = require('path');
const [root, deep] = [process.argv[1], process.argv[2] === 'true'];
const say = (v) => process.stdout.write(JSON.stringify(v) + '\n');
const MAX_DIRS = 8192;
// files.write's temporary file (FILES_HELPER's write): not the user's, so never news.
const OURS = /^\..*\.sdk-[0-9a-f]{12}$/;
const full = (rel) => (rel === '' ? root : path.join(root, rel));
const seen = (s) => ({ ino: s.ino, size: s.size, mtime: s.mtimeMs, ctime: s.ctimeMs, mode: s.mode, uid: s.uid, gid: s.gid, dir: s.isDirectory() });
const look = (rel) => { try { return seen(fs.lstatSync(full(rel))); } catch { return undefined; } };
const known = new Map(), watchers = new Map();
let top, batch = [], flushing = false;
const emit = (type, name) => say({ type, name });
const under = (rel) => (k) => k.startsWith(rel + '/');
function unwatch(rel) {
  for (const k of [...watchers.keys()].filter((k) => k === rel || under(rel)(k))) { watchers.get(k).close(); watchers.delete(k); }
  for (const k of [...known.keys()].filter(under(rel))) known.delete(k);
}
function watch(rel, announce) {
  if (watchers.size >= MAX_DIRS) return;
  const w = fs.watch(full(rel), (type, name) => name != null && raw(type, rel, String(name)));
  w.on('error', () => unwatch(rel));
  watchers.set(rel, w);
  let names = [];
  try { names = fs.readdirSync(full(rel)); } catch {}
  for (const n of names) {
    if (OURS.test(n)) continue;
    const child = rel === '' ? n : rel + '/' + n, s = look(child);
    if (!s || known.has(child)) continue;
    known.set(child, s);
    if (announce) emit('create', child);
    if (deep && s.dir) { try { watch(child, announce); } catch {} }
  }
}
function raw(type, dir, name) {
  if (OURS.test(name)) return;
  const rel = dir === '' ? name : dir + '/' + name, s = look(rel);
  // A watcher's event about its own directory comes named after it: no such child, not news.
  // (The root's own, when it goes, ends the watch at the batch's end.)
  if (!(name === path.basename(full(dir)) && !s && !known.has(rel))) batch.push({ type, rel, s });
  if (!flushing) { flushing = true; setImmediate(flush); }
}
function differs(a, b) { return a.mode !== b.mode || a.uid !== b.uid || a.gid !== b.gid || a.mtime !== b.mtime || a.ctime !== b.ctime; }
function flush() {
  const events = batch, left = new Map(), gone = new Set(), came = new Set();
  batch = [];
  flushing = false;
  for (const e of events) {
    if (e.type !== 'rename') continue;
    left.set(e.rel, (left.get(e.rel) || 0) + 1);
    const before = known.get(e.rel);
    if (before && (!e.s || e.s.ino !== before.ino)) gone.add(before.ino);
    if (e.s && (!before || e.s.ino !== before.ino)) came.add(e.s.ino);
  }
  for (const { type, rel, s } of events) {
    const before = known.get(rel);
    if (type === 'change') {
      if (!s) continue;
      known.set(rel, s);
      const wrote = !before || before.size !== s.size || before.mtime !== s.mtime;
      emit(!wrote && (before.mode !== s.mode || before.uid !== s.uid || before.gid !== s.gid) ? 'chmod' : 'write', rel);
      continue;
    }
    const later = left.get(rel) - 1;
    left.set(rel, later);
    if (before && later === 0 && s && s.ino === before.ino) {
      // Still itself: an attribute change (a directory's comes as 'rename').
      known.set(rel, s);
      if (differs(before, s)) emit('chmod', rel);
      continue;
    }
    if (before && !(later === 0 && s)) {
      known.delete(rel);
      if (before.dir) unwatch(rel);
      emit(came.has(before.ino) ? 'rename' : 'remove', rel);
      continue;
    }
    // Appeared (or put in place of what was there, by a rename over it).
    if (before && before.dir) unwatch(rel);
    known.set(rel, s || { ino: -1, size: -1, mtime: -1, ctime: -1, mode: -1, uid: -1, gid: -1, dir: false });
    // A file put over a file from no name the watch knew (files.write's temporary file, an editor's
    // save) is that file written; one moved from a known name is the new name of a rename.
    const replaced = before && s && !before.dir && !s.dir && !gone.has(s.ino);
    emit(replaced ? 'write' : 'create', rel);
    if (deep && s && s.dir && !watchers.has(rel)) { try { watch(rel, !gone.has(s.ino)); } catch {} }
  }
  let now;
  try { now = fs.statSync(root); } catch {}
  if (!now || now.ino !== top.ino || now.dev !== top.dev) process.exit(0);
}
try {
  top = fs.statSync(root);
  if (!top.isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
  fs.accessSync(root, fs.constants.R_OK | fs.constants.X_OK);
  watch('', false);
  say({ ok: true });
  process.stdin.on('end', () => process.exit(0)).resume();
  process.stdout.on('error', () => process.exit(0));
} catch (e) { say({ errno: (e && e.code) || 'EIO' }); process.exitCode = 1; }
`;

/** Longest line the watch program may write (an event with a path of `MAX_FILE_PATH`). */
const MAX_LINE_BYTES = 16 * 1024;

/**
 * Streams the changes under `path` to `res` until the client goes away (the helper is ended) or the
 * helper ends (the directory went: the stream ends; the helper failed: the stream is cut). The helper
 * runs as `account` (the caller has checked that root is there). A helper not
 * set up within `ANSWER_DEADLINE_MS` is ended and the call fails with `sandbox_error`. Lines are
 * checked and passed on one by one, with backpressure: a client that does not read holds the helper.
 */
export async function streamWatch(
  res: ServerResponse,
  user: SandboxUser,
  path: string,
  recursive: boolean,
  account: SandboxAccount = 'user',
): Promise<void> {
  const child = spawnHelper(WATCH_HELPER, user, [path, String(recursive)], account);
  // From the start: a client that leaves while the helper sets up (a large tree takes a while) ends it.
  const gone = clientGone(res);
  gone.addEventListener('abort', () => stopHelper(child));
  let rest: Buffer;
  try {
    [, rest] = await answerOf(
      'files.watchDir',
      child,
      MAX_LINE_BYTES,
      z.literal(true),
      AbortSignal.timeout(ANSWER_DEADLINE_MS),
    );
  } catch (error) {
    stopHelper(child);
    throw error;
  }
  if (gone.aborted) return;
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  res.write('{"type":"watching"}\n');
  passLines(child, res, rest);
  child.once('close', (code) => {
    if (code === 0) res.end();
    else res.destroy();
  });
}

/** The helper's event lines, checked, into `res`; anything malformed or too long ends the watch. */
function passLines(child: ChildProcessWithoutNullStreams, res: ServerResponse, first: Buffer): void {
  const splitter = new LineSplitter(MAX_LINE_BYTES);
  const take = (chunk: Buffer): void => {
    const { lines, tooLong } = splitter.take(chunk);
    for (const line of lines) {
      const parsed = parseLine(line);
      if (parsed === undefined) {
        stopHelper(child);
        res.destroy();
        return;
      }
      if (!res.write(`${parsed}\n`)) child.stdout.pause();
    }
    if (tooLong) {
      stopHelper(child);
      res.destroy();
    }
  };
  res.on('drain', () => child.stdout.resume());
  child.stdout.on('data', take);
  if (first.length > 0) take(first);
  child.stdout.resume();
}

function parseLine(line: Buffer): string | undefined {
  try {
    const parsed = watchLineSchema.safeParse(JSON.parse(line.toString('utf8')));
    return parsed.success && parsed.data.type !== 'watching' ? JSON.stringify(parsed.data) : undefined;
  } catch {
    return undefined;
  }
}
