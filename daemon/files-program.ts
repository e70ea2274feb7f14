/**
 * The files helper: the program sandboxd starts as the calling account for every files call
 * (`files-api.ts` routes the calls, `files-resident.ts` keeps the resident copy). It runs in the
 * sandbox as sandbox code, so sandboxd itself never opens a sandbox path.
 */
import { MAX_LIST_ANSWER_BYTES } from '../protocol/files-wire.js';

/**
 * The program each call runs as its account (CommonJS for `node -e`; arguments: the operation, paths):
 * `read` and `write` one a call, streaming; `serve` the resident one answering the JSON calls (root's
 * also makes the user's missing parents: `mkdir` and `parents` with the user's `uid:gid`).
 */
export const FILES_HELPER = String.raw`// sdk files helper
const fs = require('fs'), path = require('path');
const [op, a, b] = process.argv.slice(1);
const say = (v) => process.stdout.write(JSON.stringify(v) + '\n');
const fail = (e) => { say({ errno: (e && e.code) || 'EIO' }); process.exitCode = 1; };
const coded = (code) => Object.assign(new Error(), { code });
const C = fs.constants;
// Parents one component at a time, each made or found once, so the loop ends (a path has at most 2048
// components); with an owner ([uid, gid]: root making the user's parents) each one made is handed to it
// at once (one it cannot be handed to is taken back), as E2B's envd makes them. Not mkdirSync's
// recursive mode: it loops for ever where mkdir says ENOENT under a directory that is there (/proc,
// which the user's code can link into the path), retrying the parent and the child in turn. Here that
// ENOENT is the answer, as mkdir -p says; a component that is there but not a directory (a file,
// mkdir's EEXIST) is ENOTDIR. Each prefix is resolved by the kernel, so links and '..' mean what they
// mean to the user's own mkdir -p.
const mkdirs = (d, owner) => {
  try { if (fs.statSync(d).isDirectory()) return; } catch {}
  let at = '';
  for (const name of d.split('/')) {
    if (name === '') continue;
    at += '/' + name;
    try { fs.mkdirSync(at); } catch (e) {
      if (!e || e.code !== 'EEXIST') throw e;
      if (!fs.statSync(at).isDirectory()) throw coded('ENOTDIR');
      continue;
    }
    if (!owner) continue;
    try { fs.chownSync(at, owner[0], owner[1]); } catch (e) { try { fs.rmdirSync(at); } catch {} throw e; }
  }
};
// An owner as sent ('uid:gid'), or none.
const ownerOf = (b) =>
  typeof b === 'string' && /^[0-9]+:[0-9]+$/.test(b) ? b.split(':').map(Number) : undefined;
const TYPES = (s) => (s.isFile() ? 'file' : s.isDirectory() ? 'dir' : s.isSymbolicLink() ? 'symlink' : 'other');
const info = (p) => {
  const s = fs.lstatSync(p);
  const e = { name: path.basename(p), path: p, type: TYPES(s), size: s.size, mode: s.mode & 0o7777,
    uid: s.uid, gid: s.gid, modifiedTime: s.mtime.toISOString() };
  if (s.isSymbolicLink()) e.symlinkTarget = fs.readlinkSync(p);
  return e;
};
// A listing stops once its JSON would pass the answer's bound (the daemon holds the answer in memory).
const MAX_LIST = ${String(MAX_LIST_ANSWER_BYTES)};
const list = (dir, depth, out) => {
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    let e;
    try { e = info(p); } catch { continue; }
    out.size += Buffer.byteLength(JSON.stringify(e)) + 1;
    if (out.size > MAX_LIST) throw coded('E2BIG');
    out.entries.push(e);
    if (depth > 1 && d.isDirectory()) {
      try { list(p, depth - 1, out); } catch (e) { if (e && e.code === 'E2BIG') throw e; }
    }
  }
  return out;
};
// By hand rather than fs.rmSync, whose errors (Node 20) carry no errno to tell.
const remove = (p) => {
  if (!fs.lstatSync(p).isDirectory()) return fs.unlinkSync(p);
  for (const name of fs.readdirSync(p)) remove(path.join(p, name));
  fs.rmdirSync(p);
};
// Non-blocking, so a FIFO without a writer is refused rather than waited on; only a regular file.
const openForRead = (a) => {
  const fd = fs.openSync(a, C.O_RDONLY | C.O_NONBLOCK);
  const s = fs.fstatSync(fd);
  if (s.isDirectory() || !s.isFile()) { fs.closeSync(fd); throw coded(s.isDirectory() ? 'EISDIR' : 'EFTYPE'); }
  return { fd, s };
};
// A write's file, its parents made. A new file is made in place. A regular file that is there (the
// user's own, one link) is replaced whole: the bytes go to a temporary file beside it, renamed over it
// once all are written, so a write that fails leaves the old content. Where the user may not make that
// file (the directory is not theirs) or for anything else (a link, another's file), the file is
// rewritten in place. undo(): a write that failed (no space) or was ended (the upload broke off)
// leaves no partial file that could pass for the whole one: the temporary or new file goes, one
// rewritten in place is emptied.
const openForWrite = (a) => {
  mkdirs(path.dirname(a));
  const flags = C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NONBLOCK;
  let fd, created = false, temp;
  try { fd = fs.openSync(a, flags, 0o666); created = true; }
  catch (e) {
    if (e.code !== 'EEXIST') throw e;
    const old = fs.lstatSync(a);
    if (old.isFile() && old.nlink === 1 && old.uid === process.getuid()) {
      fs.accessSync(a, C.W_OK); // a file the user made read-only stays refused, as in place
      const name = path.join(path.dirname(a), '.' + path.basename(a) + '.sdk-' + require('crypto').randomBytes(6).toString('hex'));
      try { fd = fs.openSync(name, flags, 0o600); temp = name; }
      catch (e) { if (!['EACCES', 'EPERM', 'ENAMETOOLONG'].includes(e.code)) throw e; }
      if (temp) {
        try { fs.fchmodSync(fd, old.mode & 0o7777); } catch (e) { fs.closeSync(fd); fs.unlinkSync(temp); throw e; }
      }
    }
    if (!temp) {
      fd = fs.openSync(a, flags & ~C.O_EXCL, 0o666);
      if (!fs.fstatSync(fd).isFile()) { fs.closeSync(fd); throw coded('EFTYPE'); }
      fs.ftruncateSync(fd, 0);
    }
  }
  const undo = () => { try { if (temp) fs.unlinkSync(temp); else if (created) fs.unlinkSync(a); else fs.truncateSync(a, 0); } catch {} };
  return { fd, temp, undo };
};
// A small file whole, for the resident helper: its bytes (base64) when at most 'max', else its size
// alone (the daemon then streams it with a read helper of its own).
const readSmall = (a, max) => {
  const { fd, s } = openForRead(a);
  try {
    if (s.size > max) return { size: s.size, big: true };
    const buf = Buffer.alloc(s.size);
    let n = 0, got;
    while (n < s.size && (got = fs.readSync(fd, buf, n, s.size - n, n)) > 0) n += got;
    return { size: n, data: buf.subarray(0, n).toString('base64') };
  } finally { fs.closeSync(fd); }
};
// A small file written whole by the resident helper (the bytes in base64), as a write helper writes.
const writeSmall = (a, data) => {
  const bytes = Buffer.from(typeof data === 'string' ? data : '', 'base64');
  const w = openForWrite(a);
  try {
    for (let n = 0; n < bytes.length; ) n += fs.writeSync(w.fd, bytes, n, bytes.length - n);
    fs.closeSync(w.fd);
    if (w.temp) fs.renameSync(w.temp, a);
  } catch (e) { try { fs.closeSync(w.fd); } catch {} w.undo(); throw e; }
  return info(a);
};
// The JSON calls, for the resident helper: the answer to one request.
const answer = (op, a, b) => {
  try {
    if (op === 'list') {
      if (!fs.statSync(a).isDirectory()) throw coded('ENOTDIR');
      return { ok: { entries: list(a, Number(b), { entries: [], size: 0 }).entries } };
    }
    if (op === 'info') return { ok: info(a) };
    if (op === 'mkdir') {
      let there = false;
      try { there = fs.statSync(a).isDirectory(); } catch {}
      if (!there) mkdirs(a, ownerOf(b));
      return { ok: { created: !there } };
    }
    // A write's parents, made by root for the user (b: its 'uid:gid') before the user's helper writes.
    if (op === 'parents') { mkdirs(path.dirname(a), ownerOf(b)); return { ok: {} }; }
    if (op === 'remove') { remove(a); return { ok: {} }; }
    if (op === 'rename') { fs.renameSync(a, b); return { ok: info(b) }; }
    if (op === 'readsmall') return { ok: readSmall(a, Number(b)) };
    if (op === 'writesmall') return { ok: writeSmall(a, b) };
    return { errno: 'EINVAL' };
  } catch (e) { return { errno: (e && e.code) || 'EIO' }; }
};
try {
  if (op === 'serve') {
    // Resident: one answer line ({ id, ... }) a request line ({ id, op, a, b }), until stdin closes.
    require('readline').createInterface({ input: process.stdin })
      .on('line', (line) => {
        let q;
        try { q = JSON.parse(line); } catch { return; }
        if (q && typeof q === 'object') say({ id: q.id, ...answer(q.op, q.a, q.b) });
      })
      .on('close', () => process.exit(0));
  } else if (op === 'read') {
    const { fd, s } = openForRead(a);
    // The size when opened: the daemon sends it as content-length, and never more bytes than it.
    say({ ok: { size: s.size } });
    if (s.size === 0) fs.closeSync(fd);
    else fs.createReadStream(null, { fd, end: s.size - 1 }).on('error', () => process.exit(1)).pipe(process.stdout);
  } else if (op === 'write') {
    const w = openForWrite(a);
    const out = fs.createWriteStream(null, { fd: w.fd });
    process.once('SIGTERM', () => { w.undo(); process.exit(1); });
    require('stream').pipeline(process.stdin, out, (e) => {
      if (!e && w.temp) { try { fs.renameSync(w.temp, a); } catch (r) { e = r; } }
      process.removeAllListeners('SIGTERM');
      if (!e) return say({ ok: info(a) });
      w.undo();
      fail(e);
    });
  } else fail({ code: 'EINVAL' });
} catch (e) { fail(e); }
`;
