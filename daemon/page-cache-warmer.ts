/**
 * `prefetch` of agent templates (SPEC "Image tooling"): the runtime binaries read into the page cache
 * when sandboxd starts and again after every resume, so the first agent run after either does not wait
 * on the disk. A resume is seen as a gap in a coarse timer: a frozen sandbox's timers do not fire, so a
 * tick that comes much later than it was due means the sandbox was paused meanwhile.
 */
import { Prefetch } from './runtime-standby.js';

/** How often the timer ticks, and how late a tick must be to count as a resume, ms. */
export const RESUME_CHECK = { everyMs: 1000, gapMs: 3000 } as const;

/**
 * Reads `files` now (after the current turn, so the start is not slowed) and after each resume; the
 * returned function stops it. `read` and `now` are replaceable for tests.
 */
export function warmPageCache(
  files: readonly string[],
  read: (path: string) => void = (path) => new Prefetch().read(path),
  now: () => number = Date.now,
): () => void {
  if (files.length === 0) return () => undefined;
  const readAll = (): void => {
    for (const file of files) read(file);
  };
  const first = setImmediate(readAll);
  let last = now();
  const timer = setInterval(() => {
    const at = now();
    if (at - last > RESUME_CHECK.gapMs) readAll();
    last = at;
  }, RESUME_CHECK.everyMs);
  timer.unref();
  return () => {
    clearImmediate(first);
    clearInterval(timer);
  };
}
