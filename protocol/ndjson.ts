/** Longest line taken: an execution's last line carries its summary (sandboxd keeps at most 8 MiB). */
export const MAX_NDJSON_LINE_CHARS = 64 * 1024 * 1024;

/**
 * Splits a byte stream of newline-delimited JSON (NDJSON) into parsed values, one per line. Characters
 * split across chunks are decoded whole; each chunk is scanned once; a line longer than `maxLineChars`
 * (`MAX_NDJSON_LINE_CHARS` by default) ends the stream with an error instead of growing without bound.
 */
export async function* ndjsonValues(
  body: AsyncIterable<unknown>,
  maxLineChars: number = MAX_NDJSON_LINE_CHARS,
): AsyncGenerator {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of body) {
    const text = decoder.decode(chunk as Uint8Array, { stream: true });
    let start = 0;
    let newline = text.indexOf('\n');
    while (newline >= 0) {
      const line = pending + text.slice(start, newline);
      pending = '';
      start = newline + 1;
      newline = text.indexOf('\n', start);
      yield JSON.parse(line);
    }
    pending += text.slice(start);
    if (pending.length > maxLineChars) throw new Error('an NDJSON line is longer than allowed');
  }
}
