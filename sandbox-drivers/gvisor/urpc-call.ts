/**
 * One call over runsc's control socket (urpc: one JSON request, one JSON reply, on a connection of its
 * own): how sandboxd lists and signals a box's processes (`daemon/gvisor-processes.ts`) and how the
 * driver stops and resumes a box's kernel around a checkpoint (`box-checkpoint.ts`). Calls that pass
 * descriptors are `gvisor-exec`'s (Node cannot send them).
 */
import { connect } from 'node:net';

/** Longest one call may take: the box's kernel answers at once unless it is frozen (a paused sandbox). */
const CALL_TIMEOUT_MS = 10_000;

/** One urpc call on a connection of its own; rejects with the kernel's error. */
export function urpcCall(socket: string, method: string, arg: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const connection = connect(socket);
    let reply = '';
    const timer = setTimeout(() => {
      connection.destroy();
      reject(new Error(`${method}: no answer from the box`));
    }, CALL_TIMEOUT_MS);
    const settle = (outcome: () => void): void => {
      clearTimeout(timer);
      connection.destroy();
      outcome();
    };
    connection.setEncoding('utf8');
    connection.once('error', (error) => settle(() => reject(error)));
    connection.once('connect', () => connection.write(JSON.stringify({ method, arg })));
    connection.on('data', (chunk: string) => {
      reply += chunk;
      let parsed: { success?: boolean; err?: string; result?: unknown };
      try {
        parsed = JSON.parse(reply) as typeof parsed;
      } catch {
        return; // more to come
      }
      settle(() =>
        parsed.success === true
          ? resolve(parsed.result)
          : reject(new Error(`${method}: ${parsed.err ?? ''}`)),
      );
    });
    connection.once('end', () => settle(() => reject(new Error(`${method}: the box closed the call`))));
  });
}
