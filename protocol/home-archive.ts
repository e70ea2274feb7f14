/**
 * sandboxd's home archive (home persistence, SPEC "Persistence and pools"): the sandbox user's home as
 * one gzip tar stream, both ways, never whole in memory on either side.
 *
 *   GET /v1/home/archive   200 `application/gzip`, chunked: `tar -czf - .` of the home run as the
 *                          sandbox user, streamed as tar writes it, then the trailer `sdk-archive-exit`
 *                          with tar's exit code (`0`), or `signal:<name>` when it was killed. The
 *                          archive is whole only when the body ended cleanly AND the trailer says `0`.
 *   PUT /v1/home/archive   body `application/gzip` (chunked), extracted into the home as the sandbox
 *                          user as it arrives → 200 `{}` once tar exited 0, else `sandbox_error`
 *                          naming tar's exit code (never its output: it names sandbox files).
 *
 * Why a trailer: tar finds an unreadable file or a failed read only as it goes, after the status line
 * went out, and GNU tar still writes a well-formed archive without that file. Only its exit code tells,
 * so the status comes after the bytes, and a reader that got no trailer (a cut connection, a proxy that
 * drops trailers) must treat the archive as failed.
 */

/** The endpoint of both calls. */
export const HOME_ARCHIVE_PATH = '/v1/home/archive';

/** Content type of the archive, both ways. */
export const HOME_ARCHIVE_TYPE = 'application/gzip';

/** The trailer that carries tar's exit status after the archive's last byte. */
export const ARCHIVE_EXIT_TRAILER = 'sdk-archive-exit';

/** The trailer value for a process that ended with `exitCode` or was killed by `signal`. */
export function archiveExitValue(exitCode: number | null, signal: string | null): string {
  return exitCode === null ? `signal:${signal ?? 'unknown'}` : String(exitCode);
}

/**
 * Why the archive read with these trailers is not whole, or undefined when it is (trailer `0`).
 *
 * @param trailers - the response's trailers, names in lower case, read once the body has ended
 */
export function archiveFailure(trailers: Readonly<Record<string, unknown>>): string | undefined {
  const value = trailers[ARCHIVE_EXIT_TRAILER];
  if (value === '0') return undefined;
  if (typeof value !== 'string') return 'the archive ended without its exit status';
  return /^(?:\d{1,3}|signal:[A-Z0-9]{1,16})$/.test(value)
    ? `tar ended with ${value}`
    : 'the archive ended with a malformed exit status';
}
