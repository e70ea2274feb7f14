/**
 * `files.watchDir`'s handle: the daemon's watch stream (`GET /v1/files/watch`) read in the background,
 * each event passed to the caller's `onEvent` in order (an async one is awaited before the next).
 */
import { z } from 'zod';
import { filesystemEventSchema, type FilesystemEvent } from '../protocol/files-wire.js';
import { DEFAULT_ACCOUNT, sandboxAccountSchema, type SandboxAccount } from '../protocol/sandbox-accounts.js';
import { SandboxError } from '../rules/errors.js';

export type { FilesystemEvent };

/** What `files.watchDir` calls with each event. */
export type WatchEventCallback = (event: FilesystemEvent) => void | Promise<void>;

const callback = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', {
  message: 'must be a function',
});

/** Options of `files.watchDir`. */
export const watchOptionsSchema = z.strictObject({
  /** The account the watch acts as: the sandbox user (the default) or root. */
  user: sandboxAccountSchema.default(DEFAULT_ACCOUNT),
  /** Also watch every directory below (those made later included). */
  recursive: z.boolean().default(false),
  /**
   * Called once when the watch ends without `stop()`: with no error when the watched directory went
   * away, with the error when the stream broke or `onEvent` threw.
   */
  onExit: callback.optional(),
});

/** Options of `files.watchDir`. */
export interface WatchDirOptions {
  /** The account the watch acts as: `'user'` (the sandbox user, the default) or `'root'`. */
  readonly user?: SandboxAccount;
  readonly recursive?: boolean;
  readonly onExit?: (error?: Error) => void | Promise<void>;
}

/** The callback check of `files.watchDir`. */
export const watchCallbackSchema = callback;

/** A running watch of a directory. */
export class WatchHandle {
  readonly #abort: AbortController;
  readonly #done: Promise<void>;

  /** @internal */
  constructor(
    abort: AbortController,
    events: AsyncIterator<unknown>,
    onEvent: WatchEventCallback,
    onExit: ((error?: Error) => void | Promise<void>) | undefined,
  ) {
    this.#abort = abort;
    this.#done = follow(abort, events, onEvent, onExit);
  }

  /** Ends the watch; resolves once no more events will be delivered (`onExit` is not called). */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }
}

async function follow(
  abort: AbortController,
  events: AsyncIterator<unknown>,
  onEvent: WatchEventCallback,
  onExit: ((error?: Error) => void | Promise<void>) | undefined,
): Promise<void> {
  let failure: Error | undefined;
  try {
    for (let next = await events.next(); next.done !== true; next = await events.next()) {
      const parsed = filesystemEventSchema.safeParse(next.value);
      if (!parsed.success) throw new SandboxError('malformed watch event from the sandbox daemon');
      if (abort.signal.aborted) return;
      await onEvent(parsed.data);
    }
  } catch (error) {
    failure = error instanceof Error ? error : new SandboxError('the watch failed');
  }
  if (abort.signal.aborted) return; // stopped by the caller
  abort.abort(); // the request, when onEvent threw
  try {
    await onExit?.(failure);
  } catch {
    // The caller's callback failing has nowhere else to go.
  }
}
