import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { useGatewayWorld } from '../support/gateway-world.js';

const world = useGatewayWorld(1);
const MiB = 1024 * 1024;

async function openRoute(): Promise<string> {
  const host = world.host();
  const outcome = await host.apply({ llm: world.route('sk-stream-value-42') });
  if (!outcome.ok) throw new Error(outcome.failure.message);
  return host.status().get('llm')?.url ?? '';
}

/** Samples this process's RSS while `work` runs; returns the peak growth over the start. */
async function peakRssGrowth(work: () => Promise<void>): Promise<number> {
  global.gc?.();
  const start = process.memoryUsage.rss();
  let peak = start;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, process.memoryUsage.rss()) - start;
}

describe('streaming', () => {
  it('delivers each server-sent event as the upstream writes it', async () => {
    const url = await openRoute();
    const res = await request(`${url}/sse`);
    expect(res.headers['content-type']).toBe('text/event-stream');
    const reader = res.body[Symbol.asyncIterator]();
    const next = async (): Promise<string> => {
      const { value } = (await reader.next()) as { value: Buffer };
      return value.toString();
    };
    expect(await next()).toBe(': open\n\n');
    // Each event is read before the upstream writes the next one: nothing is held back to coalesce.
    for (let i = 1; i <= 5; i++) {
      await world.upstream.tick();
      expect(await next()).toMatch(/^data: \d+\n\n$/);
    }
    await world.upstream.endStreams();
    expect(await next()).toBe('data: end\n\n');
    expect((await reader.next()).done).toBe(true);
  });

  it('passes a 100 MB chunked upload through unchanged with flat memory', async () => {
    const url = await openRoute();
    const block = Buffer.alloc(MiB);
    for (let i = 0; i < block.length; i++) block[i] = (i * 31) & 255;
    const expected = createHash('sha256');
    for (let i = 0; i < 100; i++) expected.update(block);
    let result: { bytes: number; sha256: string; headers: string[] } | undefined;
    const growth = await peakRssGrowth(async () => {
      const body = Readable.from(
        (function* () {
          for (let i = 0; i < 100; i++) yield block;
        })(),
      );
      const res = await request(`${url}/echo`, { method: 'POST', body });
      result = (await res.body.json()) as typeof result;
    });
    expect(result?.bytes).toBe(100 * MiB);
    expect(result?.sha256).toBe(expected.digest('hex'));
    expect(result?.headers.map((h) => h.toLowerCase())).toContain('transfer-encoding');
    expect(growth).toBeLessThan(60 * MiB);
  });

  it('streams a 256 MiB response to a slow reader with flat memory', async () => {
    const url = await openRoute();
    let received = 0;
    const growth = await peakRssGrowth(async () => {
      const res = await request(`${url}/bytes?n=${String(256 * MiB)}`);
      for await (const chunk of res.body) {
        received += (chunk as Buffer).length;
        if (received % (16 * MiB) < (chunk as Buffer).length) await sleep(60); // a reader that lags
      }
    });
    expect(received).toBe(256 * MiB);
    expect(growth).toBeLessThan(60 * MiB);
  });
});
