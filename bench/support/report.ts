/** How benchmarks summarise and print their figures: medians, units, verdicts against a target. */

/** The median of `values` (NaN for none). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? NaN)
    : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
}

/** Milliseconds, one decimal under 100. */
export const ms = (value: number): string => `${value.toFixed(value < 100 ? 1 : 0)} ms`;

/** Bytes as whole MiB. */
export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** A target met or missed. */
export const verdict = (pass: boolean): string => (pass ? 'PASS' : 'MISS');

/** Samples in a list, one decimal under 100. */
export const samples = (values: readonly number[], unit = ''): string =>
  values.map((value) => `${value.toFixed(value < 100 ? 1 : 0)}${unit}`).join(', ');
