import { fc, it as prop } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { MAX_NDJSON_LINE_CHARS, ndjsonValues } from '../../../protocol/ndjson.js';

async function collect(chunks: readonly Uint8Array[]): Promise<unknown[]> {
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const chunk of chunks) yield await Promise.resolve(chunk);
  }
  const values: unknown[] = [];
  for await (const value of ndjsonValues(body())) values.push(value);
  return values;
}

/** `bytes` cut at the given offsets. */
function cut(bytes: Uint8Array, offsets: readonly number[]): Uint8Array[] {
  const points = [...new Set(offsets.map((o) => o % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const point of [...points, bytes.length]) {
    pieces.push(bytes.subarray(from, point));
    from = point;
  }
  return pieces;
}

describe('NDJSON values', () => {
  prop.prop([fc.array(fc.jsonValue(), { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 12 })])(
    'are the values written, wherever the bytes are cut (characters split included)',
    async (values, offsets) => {
      const bytes = new TextEncoder().encode(values.map((v) => `${JSON.stringify(v)}\n`).join(''));
      expect(await collect(cut(bytes, offsets))).toEqual(JSON.parse(JSON.stringify(values)));
    },
  );

  it('decodes a character split across chunks', async () => {
    const bytes = new TextEncoder().encode('{"text":"é€😀"}\n');
    expect(await collect([...bytes].map((b) => Uint8Array.of(b)))).toEqual([{ text: 'é€😀' }]);
  });

  it('refuses a line longer than allowed instead of growing without bound', async () => {
    const piece = new Uint8Array(8 * 1024 * 1024).fill(0x61);
    const chunks = Array.from({ length: MAX_NDJSON_LINE_CHARS / piece.length + 1 }, () => piece);
    await expect(collect(chunks)).rejects.toThrow(/longer than allowed/);
  });
});
