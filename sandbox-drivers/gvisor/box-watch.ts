/**
 * Hears of a gVisor box's death: its gVisor kernel's host process (the sandbox process runsc started,
 * named in runsc's state) looked at every `SANDBOXD_POLL_MS` by pid and start time. When the kernel
 * ends (it crashed, or the host killed it) the sandbox has no code left and ends as failed.
 */
import { SANDBOXD_POLL_MS, startOf } from '../namespace/sandboxd-watch.js';
import { readBoxState, type BoxPaths } from './runsc-box.js';

/** Calls `onDead` once when the box's kernel has ended (at once when it is not found). Returns the stop. */
export function watchBox(paths: BoxPaths, id: string, onDead: () => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const dead = (): void => {
    if (stopped) return;
    stopped = true;
    onDead();
  };
  void readBoxState(paths, id).then(async (state) => {
    const pid = state?.pid;
    const start = pid === undefined ? undefined : await startOf(String(pid));
    if (pid === undefined || start === undefined) {
      dead();
      return;
    }
    const look = (): void => {
      if (stopped) return;
      timer = setTimeout(() => {
        void startOf(String(pid)).then((now) => (now === start ? look() : dead()));
      }, SANDBOXD_POLL_MS);
      timer.unref();
    };
    look();
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
