/**
 * A gVisor box's memory in a snapshot: the box's kernel is stopped (urpc `Pause`), the caller saves the
 * box's files meanwhile (`../namespace/saved-files.ts`), runsc writes the kernel's state (processes,
 * memory, its own tmpfs mounts, the network stack) into the snapshot's `memory/` folder with the box
 * left running, and resumes it. sandboxd is not in the box, so nothing of its (a gateway's value, the
 * access token) is in the image. A box started from it (`restoreArgs`) continues every process that is
 * the box's own (the spawner's children: `gvisor-exec/spawner.c`); the bridges and the gateway's relay
 * of the old sandboxd are gone, so its commands' stdin ends and their output is dropped.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../namespace/host-commands.js';
import { readBoxState, runscArgs, type BoxPaths } from './runsc-box.js';
import { urpcCall } from './urpc-call.js';

/** The folder of a snapshot that holds the box's memory. */
export const MEMORY_DIR = 'memory';

/**
 * Saves box `id`'s memory into `dir`/memory, calling `whileStopped` while its processes are stopped;
 * the box runs again afterwards, whatever failed.
 */
export async function checkpointBox(
  runsc: string,
  paths: BoxPaths,
  id: string,
  dir: string,
  whileStopped: () => Promise<void>,
): Promise<void> {
  const image = join(dir, MEMORY_DIR);
  await mkdir(image, { mode: 0o700 });
  const socket = (await readBoxState(paths, id))?.socket;
  if (socket === undefined) throw new Error(`no box ${id}`);
  // Stopped and resumed over the control socket: a runsc process for each cost some 12 ms.
  await urpcCall(socket, 'containerManager.Pause', null);
  try {
    await whileStopped();
    await run(runsc, runscArgs(paths, ['checkpoint', `--image-path=${image}`, '--leave-running', id]));
  } finally {
    await urpcCall(socket, 'containerManager.Resume', null);
  }
}

/**
 * runsc's command to start box `id` from the memory saved in the snapshot folder `dir`. Its
 * specification differs from the saved one in one way runsc checks: the sandbox's ids map to another
 * host range (each sandbox has its own; its files were shifted into it, `saved-files.ts`), which is
 * what the box's kernel never sees. So the check only warns, in runsc's own log.
 */
export function restoreArgs(paths: BoxPaths, id: string, dir: string): string[] {
  return [
    '--restore-spec-validation=warning',
    'restore',
    '--detach',
    `--image-path=${join(dir, MEMORY_DIR)}`,
    `--bundle=${paths.bundle}`,
    id,
  ];
}
