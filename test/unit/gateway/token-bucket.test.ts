import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../gateway/token-bucket.js';

function fakeClock() {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function takeAll(bucket: TokenBucket): number {
  let taken = 0;
  while (bucket.take()) taken++;
  return taken;
}

describe('token bucket', () => {
  it('admits a burst of one second of the rate, then one request per 60000/rate ms', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(600, clock.now);
    expect(takeAll(bucket)).toBe(10);
    expect(bucket.msUntilNextToken()).toBe(100);
    clock.advance(99);
    expect(bucket.take()).toBe(false);
    clock.advance(1);
    expect(bucket.take()).toBe(true);
    expect(bucket.take()).toBe(false);
  });

  it('holds at least one token for rates under 60 per minute', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(1, clock.now);
    expect(takeAll(bucket)).toBe(1);
    expect(bucket.msUntilNextToken()).toBe(60_000);
    clock.advance(59_999);
    expect(bucket.take()).toBe(false);
    clock.advance(1);
    expect(bucket.take()).toBe(true);
  });

  it('never saves more than its capacity however long it waits', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(6000, clock.now);
    clock.advance(3_600_000);
    expect(takeAll(bucket)).toBe(100);
  });

  it('keeps saved tokens up to the new capacity when the rate changes', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(6000, clock.now);
    bucket.setRate(120);
    expect(takeAll(bucket)).toBe(2);
    clock.advance(500);
    expect(bucket.take()).toBe(true);
  });

  it('ignores a clock that steps back', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(60, clock.now);
    expect(bucket.take()).toBe(true);
    clock.advance(-10_000);
    expect(bucket.take()).toBe(false);
  });
});
