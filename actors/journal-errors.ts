/** How a journal fails: broken (no more appends), closed, or a compaction that did not happen. */

/**
 * A write or fsync of the journal failed, or a compaction failed after its rename: the journal no longer
 * knows what its file holds, so it refuses every further append and compaction. Reopen it to read what
 * is durable.
 */
export class JournalBrokenError extends Error {
  readonly code = 'ERR_JOURNAL_BROKEN';

  constructor(path: string, cause: unknown) {
    super(
      `journal ${path} is broken: ${describe(cause)}; it takes no further appends (reopen it to read what is durable)`,
      { cause },
    );
    this.name = 'JournalBrokenError';
  }
}

/** The journal was closed. */
export class JournalClosedError extends Error {
  readonly code = 'ERR_JOURNAL_CLOSED';

  constructor(path: string) {
    super(`journal ${path} is closed`);
    this.name = 'JournalClosedError';
  }
}

/**
 * A compaction failed before its rename: the journal is unchanged and still takes appends (those held
 * back during the compaction go to the old file, in order).
 */
export class JournalCompactionError extends Error {
  readonly code = 'ERR_JOURNAL_COMPACTION';

  constructor(path: string, cause: unknown) {
    super(`journal ${path} was not compacted: ${describe(cause)}; the journal is unchanged`, { cause });
    this.name = 'JournalCompactionError';
  }
}

/** A failure's cause as text: a file error by its syscall and code, never a path's content. */
function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const { code, syscall } = cause as NodeJS.ErrnoException;
    return code === undefined ? cause.message : `${syscall ?? 'a file operation'} failed with ${code}`;
  }
  return String(cause);
}
