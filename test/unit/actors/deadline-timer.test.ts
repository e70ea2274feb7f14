/**
 * The timer of the next deadline: set to the earliest deadline the actors report, replaced by each
 * schedule, none without a deadline, fires with the clock's time, survives a failing fire, and stops
 * for good on close. Time is vitest's fake clock: nothing here waits on the machine.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineTimer } from '../../../actors/deadline-timer.js';

beforeEach(() => vi.useFakeTimers({ now: 1_000 }));
afterEach(() => vi.useRealTimers());

function timer(dues: () => (number | undefined)[], fire: (now: number) => unknown = () => undefined) {
  const fired: number[] = [];
  const t = new DeadlineTimer({
    now: Date.now,
    dues,
    fire: (now) => {
      fired.push(now);
      return fire(now);
    },
  });
  return { t, fired };
}

describe('DeadlineTimer', () => {
  it('fires once at the earliest deadline, with the time it fired', async () => {
    const { t, fired } = timer(() => [5_000, undefined, 3_000]);
    t.schedule();
    expect(t.nextDueAt).toBe(3_000);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual([3_000]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(fired).toEqual([3_000]); // the host schedules again after its clock
  });

  it('is replaced by each schedule, and unset when no deadline is left', async () => {
    let dues: (number | undefined)[] = [9_000];
    const { t, fired } = timer(() => dues);
    t.schedule();
    dues = [2_000];
    t.schedule();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(fired).toEqual([2_000]);
    dues = [undefined];
    t.schedule();
    await vi.advanceTimersByTimeAsync(100_000);
    expect(fired).toEqual([2_000]);
  });

  it('fires at once for a deadline already passed', async () => {
    const { t, fired } = timer(() => [10]);
    t.schedule();
    await vi.advanceTimersByTimeAsync(0);
    expect(fired).toEqual([1_000]);
  });

  it('waits at most setTimeout’s longest for a far deadline', async () => {
    const { t, fired } = timer(() => [1_000 + 2 ** 40]);
    t.schedule();
    await vi.advanceTimersByTimeAsync(2 ** 31 - 1);
    expect(fired).toEqual([1_000 + 2 ** 31 - 1]);
  });

  it('swallows a failing fire, and schedules again when asked', async () => {
    const { t, fired } = timer(
      () => [2_000],
      () => Promise.reject(new Error('journal broken')),
    );
    t.schedule();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(fired).toEqual([2_000]);
    t.schedule();
    await vi.advanceTimersByTimeAsync(0);
    expect(fired).toEqual([2_000, 2_000]);
  });

  it('stops for good on close', async () => {
    const { t, fired } = timer(() => [2_000]);
    t.schedule();
    t.close();
    t.schedule();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(fired).toEqual([]);
  });
});
