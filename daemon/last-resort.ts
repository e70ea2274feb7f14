/**
 * sandboxd's last resort: a fault nothing else caught (an uncaught exception or an unhandled rejection)
 * is written as one line and the daemon keeps serving, so one faulty request or route does not end the
 * sandbox's daemon. The line holds the error's name, code and stack frames, never its message: messages
 * can carry values (a header, a token, command output).
 */

/** Where faults come from: `process`, or an emitter standing in for it. */
export interface FaultSource {
  on(event: 'uncaughtException' | 'unhandledRejection', listener: (fault: unknown) => void): unknown;
}

/** Frames kept per line; the innermost ones say where it happened. */
const MAX_FRAMES = 12;
/** A stack frame line as V8 writes it. */
const FRAME = /^\s+at \S/;
/** What may stand before the message in a stack's first line: `Name: `, `Name [CODE]: ` or nothing. */
const HEADER_PREFIX = /^(?:[A-Za-z_$][\w$]*(?: \[[\w.:-]+\])?: )?$/;
const NAME = /^[A-Za-z_$][\w$]{0,63}$/;
/** Codes are identifiers (`ECONNRESET`, `UND_ERR_SOCKET`, `invalid_argument`), never free text. */
const CODE = /^[A-Za-z]\w{0,63}$/;

function nameOf(error: Error): string | null {
  const name: unknown = error.name;
  return typeof name === 'string' && NAME.test(name) ? name : null;
}

function codeOf(error: Error): string | number | null {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number' && Number.isFinite(code)) return code;
  return typeof code === 'string' && CODE.test(code) ? code : null;
}

/**
 * The frames of `error.stack` after its message. When the message cannot be located exactly where V8
 * puts it (the message was changed after the stack was taken), no frame is shown: the old message
 * could still be in the stack.
 */
function framesOf(error: Error): string[] {
  const stack: unknown = error.stack;
  if (typeof stack !== 'string') return [];
  const message = typeof error.message === 'string' ? error.message : '';
  let rest: string;
  if (message === '') {
    const end = stack.indexOf('\n');
    const first = end < 0 ? stack : stack.slice(0, end);
    if (!HEADER_PREFIX.test(`${first}: `)) return [];
    rest = end < 0 ? '' : stack.slice(end);
  } else {
    const at = stack.indexOf(message);
    if (at < 0 || !HEADER_PREFIX.test(stack.slice(0, at))) return [];
    rest = stack.slice(at + message.length);
  }
  // Belt and braces: a frame line holding any longer line of the message is dropped too.
  const pieces = message.split('\n').filter((piece) => piece.length >= 8);
  return rest
    .split('\n')
    .filter((line) => FRAME.test(line) && !pieces.some((piece) => line.includes(piece)))
    .slice(0, MAX_FRAMES)
    .map((line) => line.trim());
}

/**
 * The one line written for a fault (newline included): JSON of its origin, name, code and frames.
 *
 * @example
 * ```ts
 * describeFault('uncaughtException', new TypeError('sk-secret'));
 * // {"sandboxd":"fault","origin":"uncaughtException","name":"TypeError","code":null,"frames":["at ..."]}
 * ```
 */
export function describeFault(origin: string, fault: unknown): string {
  const described =
    fault instanceof Error
      ? { name: nameOf(fault), code: codeOf(fault), frames: framesOf(fault) }
      : { name: null, code: null, thrown: typeof fault, frames: [] };
  return `${JSON.stringify({ sandboxd: 'fault', origin, ...described })}\n`;
}

/**
 * Installs the last resort on `source`: every fault is written with `write` as one line, and nothing
 * else happens (the daemon goes on serving).
 *
 * @example
 * ```ts
 * installLastResort(process, (line) => process.stderr.write(line));
 * ```
 */
export function installLastResort(source: FaultSource, write: (line: string) => void): void {
  const report = (origin: string) => (fault: unknown) => {
    try {
      write(describeFault(origin, fault));
    } catch {
      // A throw here would end the process after all; the fault stays unreported instead.
    }
  };
  source.on('uncaughtException', report('uncaughtException'));
  source.on('unhandledRejection', report('unhandledRejection'));
}
