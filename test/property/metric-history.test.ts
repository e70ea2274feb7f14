/**
 * A metric history's rules (control-plane/metric-history.ts) over random runs of samples: it never holds
 * more than its capacity, its samples stay in time order and end with the latest, a range returns exactly
 * the samples inside it, and merging keeps the CPU time the samples stand for (each sample's share over
 * the time since the one before it).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MetricHistory } from '../../control-plane/metric-history.js';
import type { SandboxMetric } from '../../protocol/control-plane-api.js';

const START = 1_000;

const sampleAt = (timestamp: number, cpuUsedPct: number): SandboxMetric => ({
  timestamp,
  cpuCount: 1,
  cpuUsedPct,
  memUsedBytes: timestamp,
  memTotalBytes: 2 ** 30,
  diskUsedBytes: 0,
  diskTotalBytes: 2 ** 30,
  netRxBytes: timestamp,
  netTxBytes: 0,
});

/** Σ share × time covered, with each sample covering the time since the one before (START first). */
const cpuTime = (samples: readonly SandboxMetric[]): number => {
  let previous = START;
  let total = 0;
  for (const sample of samples) {
    total += sample.cpuUsedPct * (sample.timestamp - previous);
    previous = sample.timestamp;
  }
  return total;
};

const runs = fc.record({
  capacity: fc.integer({ min: 2, max: 24 }),
  steps: fc.array(
    fc.record({ gap: fc.integer({ min: 1, max: 10_000 }), cpu: fc.integer({ min: 0, max: 100 }) }),
    {
      maxLength: 300,
    },
  ),
});

describe('metric history', () => {
  it('stays bounded and ordered, ends with the latest sample and keeps the CPU time', () => {
    fc.assert(
      fc.property(runs, ({ capacity, steps }) => {
        const history = new MetricHistory(capacity);
        const added: SandboxMetric[] = [];
        let at = START;
        for (const { gap, cpu } of steps) {
          const previous = at;
          at += gap;
          const sample = sampleAt(at, cpu);
          history.add(sample, at - previous);
          added.push(sample);
          const held = history.samples();
          expect(held.length).toBeLessThanOrEqual(capacity);
          expect(held.at(-1)).toEqual(sample);
          for (let index = 1; index < held.length; index++) {
            expect(held[index]?.timestamp).toBeGreaterThan(held[index - 1]?.timestamp ?? -Infinity);
          }
        }
        expect(cpuTime(history.samples())).toBeCloseTo(cpuTime(added), 3);
        expect(history.latest).toEqual(added.at(-1));
      }),
    );
  });

  it('returns exactly the samples inside a range', () => {
    fc.assert(
      fc.property(
        runs,
        fc.integer({ min: 0, max: 3_000_000 }),
        fc.integer({ min: 0, max: 3_000_000 }),
        (run, a, b) => {
          const history = new MetricHistory(run.capacity);
          let at = START;
          for (const { gap, cpu } of run.steps) {
            at += gap;
            history.add(sampleAt(at, cpu), gap);
          }
          const [start, end] = a <= b ? [a, b] : [b, a];
          expect(history.samples({ start, end })).toEqual(
            history.samples().filter((sample) => sample.timestamp >= start && sample.timestamp <= end),
          );
          expect(history.samples({ start })).toEqual(history.samples().filter((s) => s.timestamp >= start));
        },
      ),
    );
  });
});
