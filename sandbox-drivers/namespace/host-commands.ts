/** Runs the host tools the driver uses (ip, nft), failing with their stderr, never with secrets. */
import { execFile } from 'node:child_process';

/** Runs `command args`, with optional stdin; rejects with the tool's message on failure. */
export function run(command: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout);
      else
        reject(
          new Error(`${command} ${args.slice(0, 3).join(' ')} failed: ${stderr.trim() || error.message}`),
        );
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Like `run`, but a failure is ignored (for removing what may already be gone). */
export async function runQuietly(command: string, args: readonly string[]): Promise<void> {
  await run(command, args).catch(() => undefined);
}
