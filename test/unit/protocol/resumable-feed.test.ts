/**
 * The observable SDK's resuming (marble tests on RxJS's TestScheduler): a broken connection is opened
 * again after the last sequence number handed out, values a server replays are dropped, a refusal ends
 * the feed at once, and breaks in a row are bounded.
 */
import { TestScheduler } from 'rxjs/testing';
import type { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../rules/errors.js';
import { resumableFeed, type ResumeOptions } from '../../../protocol/resumable-feed.js';

interface Item {
  readonly seq: number;
}

const scheduler = (): TestScheduler =>
  new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const v = (seq: number): Item => ({ seq });

/** A feed whose connections are the given cold observables, in order; records each `after`. */
function feed(
  connections: (() => Observable<Item>)[],
  ts: TestScheduler,
  after?: number,
  options: Omit<ResumeOptions, 'after' | 'scheduler'> = { delayMs: 10 },
) {
  const afters: (number | undefined)[] = [];
  const observable = resumableFeed(
    (cursor) => {
      afters.push(cursor);
      const next = connections[afters.length - 1];
      if (next === undefined) throw new Error('no more connections');
      return next();
    },
    (item) => item.seq,
    { ...options, after, scheduler: ts },
  );
  return { observable, afters };
}

describe('resumableFeed', () => {
  it('opens again after the last sequence number when a connection breaks, and completes with it', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const { observable, afters } = feed(
        [() => cold('a-b-#', { a: v(1), b: v(2) }), () => cold('c|', { c: v(3) })],
        ts,
      );
      // The break at frame 4 waits 10 frames, then the second connection starts (frame 14).
      expectObservable(observable).toBe('a-b 11ms c|', { a: v(1), b: v(2), c: v(3) });
      ts.flush();
      expect(afters).toEqual([undefined, 2]);
    });
  });

  it('drops what a server replays at or below the cursor', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const { observable, afters } = feed([() => cold('abc|', { a: v(4), b: v(5), c: v(6) })], ts, 4);
      expectObservable(observable).toBe('-bc|', { b: v(5), c: v(6) });
      ts.flush();
      expect(afters).toEqual([4]);
    });
  });

  it('ends at once on a refusal (an SdkError), without opening again', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const refusal = new InvalidArgumentError('after: must be a sequence number', { field: 'after' });
      const { observable, afters } = feed([() => cold('a#', { a: v(1) }, refusal), () => cold('b|')], ts);
      expectObservable(observable).toBe('a#', { a: v(1) }, refusal);
      ts.flush();
      expect(afters).toEqual([undefined]);
    });
  });

  it('gives up after its retries in a row, but a value in between resets the count', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const broken = () => cold<Item>('#');
      const { observable } = feed([broken, broken, broken, broken, broken, broken], ts);
      // Waits of 10, 20, 40, 80, 160 frames, then the error.
      expectObservable(observable).toBe(`${String(10 + 20 + 40 + 80 + 160)}ms #`);
    });
    const ts2 = scheduler();
    ts2.run(({ cold, expectObservable }) => {
      const oneThenBreak = (seq: number) => () => cold('a#', { a: v(seq) });
      const connections = [1, 2, 3, 4, 5, 6, 7].map(oneThenBreak);
      connections.push(() => cold('z|', { z: v(8) }));
      const { observable, afters } = feed(connections, ts2);
      const values: Record<string, Item> = {};
      let marble = '';
      for (let seq = 1; seq <= 7; seq++) {
        values[String.fromCharCode(96 + seq)] = v(seq);
        marble += `${String.fromCharCode(96 + seq)} 10ms `; // each breaks a frame later, then 10 frames' wait
      }
      values['z'] = v(8);
      expectObservable(observable).toBe(`${marble}z|`, values);
      ts2.flush();
      expect(afters).toEqual([undefined, 1, 2, 3, 4, 5, 6, 7]);
    });
  });

  it('as a follower, opens again after a refusal and after a clean end, waiting at most maxDelayMs', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const { observable, afters } = feed(
        [
          () => cold('a|', { a: v(1) }),
          () => cold<Item>('#', undefined, new InvalidArgumentError('refused')),
          () => cold<Item>('#'),
          () => cold('b-', { b: v(2) }),
        ],
        ts,
        0,
        { follow: true, retries: Infinity, delayMs: 10, maxDelayMs: 15 },
      );
      // a at 0, the end at 1 and 10 frames' wait; the refusal at 11 waits 10; the break at 21 waits 15
      // (20, bounded); b at 36.
      expectObservable(observable, '^ 40ms !').toBe('a 35ms b', { a: v(1), b: v(2) });
      ts.flush();
      expect(afters).toEqual([0, 1, 1, 1]);
    });
  });
});
