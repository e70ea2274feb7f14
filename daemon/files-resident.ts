/**
 * The files API's JSON calls (info, list, make a directory, remove, rename) go to one resident helper
 * rather than a program each: starting Node as the user costs ~20 ms, a request line on a running one
 * about a millisecond. It is the same program (`FILES_HELPER serve`), started the same way (the calling
 * account's ids, the commands' cgroup), answering `{ id, ok } | { id, errno }` a line, one request at a
 * time; each account has its own (root's, inside a sandbox, for calls as root and for making the user's
 * missing parents). It is let go after `IDLE_MS` without a call (its memory is the sandbox code's), and
 * started again by the next call; one that ends under its calls (killed by the user's own code, out of memory)
 * fails them with `sandbox_error`, and the next call starts a fresh one. The user's code can also stop
 * it (`kill -STOP`): a request unanswered after `ANSWER_DEADLINE_MS` kills it (SIGKILL, which a stopped
 * process cannot hold off) and fails every call waiting on it. A call whose client goes away stops
 * waiting, but its request's deadline holds until the helper answers it, so a helper stuck on a request
 * nobody waits for is killed all the same (it could not see its stdin close while stuck, so letting it
 * go idle would not end it). Its answer lines are bounded
 * (`MAX_LIST_ANSWER_BYTES`: the helper itself refuses a longer listing) since sandboxd's memory is
 * outside the commands' limits.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import type { z } from 'zod';
import { MAX_LIST_ANSWER_BYTES } from '../protocol/files-wire.js';
import type { SandboxAccount } from '../protocol/sandbox-accounts.js';
import type { SandboxUser } from './sandbox-spawn.js';
import {
  ANSWER_DEADLINE_MS,
  LineSplitter,
  okOf,
  parseAnswerLine,
  spawnHelper,
  stopHelper,
  type AnswerLine,
} from './files-helper.js';
import { RequestError } from './request-error.js';

/** A resident helper without a call for this long ends. */
const IDLE_MS = 10_000;

/** Largest answer line: the longest listing, with room for the line's envelope. */
const MAX_LINE_BYTES = MAX_LIST_ANSWER_BYTES + 64 * 1024;

/** Calls that change nothing, so may be asked again. */
const READ_ONLY = new Set(['info', 'list', 'readsmall']);

/** The helper ended with the call unanswered. */
class HelperEnded extends RequestError {
  // Its own name: `instanceof` on SDK errors goes by the class names of their lineage, so without one
  // every RequestError would pass for a HelperEnded (and be asked again).
  static override readonly className: string = 'HelperEnded';
}

/** One running helper and the calls waiting on it. */
interface Session {
  readonly child: ChildProcessWithoutNullStreams;
  readonly waiting: Map<number, { resolve: (answer: AnswerLine) => void; reject: (error: Error) => void }>;
  /** Fails every waiting call and forgets the helper (once ended, or being killed). */
  readonly failAll: (message: string, Failure?: typeof RequestError) => void;
}

/** The resident helper of one sandbox account: the user's, or root's (one each, started as needed). */
export class ResidentFilesHelper {
  readonly #program: string;
  readonly #user: SandboxUser;
  readonly #account: SandboxAccount;
  #session: Session | undefined;
  #idle: NodeJS.Timeout | undefined;
  #nextId = 1;

  /** @param account - whom it runs as: the sandbox user (default) or root (inside a sandbox only) */
  constructor(program: string, user: SandboxUser, account: SandboxAccount = 'user') {
    this.#program = program;
    this.#user = user;
    this.#account = account;
  }

  /**
   * Asks the helper `op` on `args`; its `ok` is checked with `schema`, its `errno` becomes the typed
   * error of `call`. A read-only call caught by the helper's death (its end not yet seen when the call
   * was sent) is asked once more of a fresh helper; a change is not, as it may have been made. Once
   * `signal` aborts (the client went away) the call stops waiting.
   */
  async call<T extends z.ZodType>(
    call: string,
    op: string,
    args: readonly string[],
    schema: T,
    signal?: AbortSignal,
  ): Promise<z.output<T>> {
    try {
      return okOf(call, await this.#ask(op, args, signal), schema);
    } catch (error) {
      if (!(error instanceof HelperEnded) || !READ_ONLY.has(op) || signal?.aborted === true) throw error;
      return okOf(call, await this.#ask(op, args, signal), schema);
    }
  }

  async #ask(op: string, args: readonly string[], signal: AbortSignal | undefined): Promise<AnswerLine> {
    signal?.throwIfAborted();
    clearTimeout(this.#idle);
    const session = this.#session ?? this.#start();
    const id = this.#nextId++;
    const answered = new Promise<AnswerLine>((resolve, reject) =>
      session.waiting.set(id, { resolve, reject }),
    );
    // A helper that does not answer in time (stopped by the user's code, stuck) is killed, failing
    // every call on it; SIGKILL by its pid, as a stopped process holds SIGTERM. Until the helper answers
    // this request, whether or not its caller still waits.
    const deadline = setTimeout(() => {
      // Only while Node has not reaped it: after that its pid may be another process's.
      const { child } = session;
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      session.failAll('the files helper did not answer');
    }, ANSWER_DEADLINE_MS);
    const settled = answered.finally(() => {
      clearTimeout(deadline);
      session.waiting.delete(id);
      if (session === this.#session && session.waiting.size === 0) {
        clearTimeout(this.#idle);
        this.#idle = setTimeout(() => this.#letGo(session), IDLE_MS);
        this.#idle.unref();
      }
    });
    settled.catch(() => undefined);
    session.child.stdin.write(`${JSON.stringify({ id, op, a: args[0], b: args[1] })}\n`);
    if (signal === undefined) return settled;
    // The caller stops waiting once its client went away; the request stays the helper's (above).
    return new Promise<AnswerLine>((resolve, reject) => {
      const gone = (): void => reject(new RequestError('sandbox_error', 'the client went away'));
      signal.addEventListener('abort', gone, { once: true });
      settled.then(resolve, reject).finally(() => signal.removeEventListener('abort', gone));
    });
  }

  #start(): Session {
    const child = spawnHelper(this.#program, this.#user, ['serve'], this.#account);
    const waiting: Session['waiting'] = new Map();
    const failAll = (message: string, Failure = RequestError): void => {
      if (this.#session === session) this.#session = undefined;
      for (const { reject } of waiting.values()) reject(new Failure('sandbox_error', message));
      waiting.clear();
    };
    const session: Session = { child, waiting, failAll };
    this.#session = session;
    const splitter = new LineSplitter(MAX_LINE_BYTES);
    child.stdout.on('data', (chunk: Buffer) => {
      const { lines, tooLong } = splitter.take(chunk);
      for (const line of lines) {
        const answer = parseAnswerLine(line);
        if (answer?.id === undefined) {
          stopHelper(child);
          failAll('the files helper answered malformed JSON');
          return;
        }
        waiting.get(answer.id)?.resolve(answer);
      }
      if (tooLong) {
        stopHelper(child);
        failAll('the files helper answered too much');
      }
    });
    child.once('error', () => failAll('the files helper did not start'));
    // 'exit' as well as 'close': a process the helper forked may hold its stdout open after it ended.
    child.once('exit', () => failAll('the files helper ended', HelperEnded));
    child.once('close', () => failAll('the files helper ended', HelperEnded));
    return session;
  }

  /** Ends an idle helper: its stdin closed, it exits. */
  #letGo(session: Session): void {
    if (session !== this.#session || session.waiting.size > 0) return;
    this.#session = undefined;
    session.child.stdin.end();
  }
}
