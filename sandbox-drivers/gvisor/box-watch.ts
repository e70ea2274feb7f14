/**
 * Hears of a gVisor box's death: its gVisor kernel's host process (the sandbox process runsc started,
 * named in runsc's state) looked at every `SANDBOXD_POLL_MS` by pid and start time. When the kernel
 * ends (it crashed, or the host killed it) the sandbox has no code left and ends as failed.
 */
import { startOf, watchProcess } from '../namespace/sandboxd-watch.js';
import { readBoxState, type BoxPaths } from './runsc-box.js';

/** Calls `onDead` once when the box's kernel has ended (at once when it is not found). Returns the stop. */
export function watchBox(paths: BoxPaths, id: string, onDead: () => void): () => void {
  const kernel = readBoxState(paths, id).then(async (state) => {
    if (state === undefined) return undefined;
    const pid = String(state.pid);
    const start = await startOf(pid);
    return start === undefined ? undefined : { pid, start };
  });
  return watchProcess(kernel, onDead);
}
