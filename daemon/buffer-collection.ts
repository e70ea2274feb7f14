/**
 * Frees the Buffers sandboxd has passed on. V8 counts a Buffer's bytes outside its heap and frees a dead
 * one only at its next collection, which comes after enough *heap* allocation; bytes moving from a socket
 * to a pipe allocate almost none (a 64 KiB chunk is a few hundred bytes of objects), so dead chunks pile
 * up to V8's external-memory limit (64 MiB) before a collection frees them: 200 MB of stdin took sandboxd
 * from 67 to 131 MiB resident against its bound of 128 (daemon/README.md, "Bounds"). A young-generation
 * collection after every 4 MiB passed on keeps the pile to a few MiB, for well under a millisecond each.
 * Needs `--expose-gc` (`SANDBOXD_NODE_FLAGS`); without it (sandboxd's code run in a test) it does nothing.
 */

const COLLECT_EVERY_BYTES = 4 * 2 ** 20;

type Collect = (options: { type: 'minor' }) => void;
const collect = (globalThis as { gc?: Collect }).gc;
let sinceCollection = 0;

/** Counts `bytes` of Buffers sandboxd has passed on and no longer holds. */
export function passedOn(bytes: number): void {
  sinceCollection += bytes;
  if (sinceCollection < COLLECT_EVERY_BYTES) return;
  sinceCollection = 0;
  collect?.({ type: 'minor' });
}

/** Counts every chunk `stream` gives as passed on (for a body piped elsewhere). */
export function countPassedOn(stream: NodeJS.ReadableStream): void {
  stream.on('data', (chunk: Buffer) => passedOn(chunk.length));
}
