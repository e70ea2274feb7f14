/** The journal's file format: one JSON record per line, read back up to a torn last line. */

/** A record as its line. */
export function lineOf(record: unknown): string {
  const json = JSON.stringify(record) as string | undefined;
  if (json === undefined) throw new TypeError('a journal record must serialize to JSON');
  return `${json}\n`;
}

/** The complete records at the start of `bytes`, and how many bytes they take. */
export function readRecords(bytes: Buffer): { records: unknown[]; kept: number } {
  const records: unknown[] = [];
  let kept = 0;
  while (kept < bytes.length) {
    const end = bytes.indexOf(0x0a, kept);
    if (end === -1) break; // the last line has no newline yet
    try {
      records.push(JSON.parse(bytes.toString('utf8', kept, end)));
    } catch {
      // A crash leaves a torn last line, or zeros where unsynced data never reached the disk (everything
      // from there on was never durable). Any other bad line with more after it is damage: cutting the
      // file there would lose durable records, so opening fails instead.
      const zeros = bytes.subarray(kept, end).every((byte) => byte === 0);
      if (!zeros && end + 1 < bytes.length) {
        throw new Error(`journal line ${String(records.length + 1)} is not a record and records follow it`);
      }
      break;
    }
    kept = end + 1;
  }
  return { records, kept };
}
