/** Splits a byte stream of newline-delimited JSON (NDJSON) into parsed values, one per line. */
export async function* ndjsonValues(body: AsyncIterable<unknown>): AsyncGenerator {
  let pending = '';
  for await (const chunk of body) {
    pending += (chunk as Buffer).toString('utf8');
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      yield JSON.parse(line);
    }
  }
}
