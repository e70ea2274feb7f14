/** Runs `count` calls of `start`, at most `width` at a time, and settles them all (fork's launches). */
export async function settleInBatches<T>(
  count: number,
  width: number,
  start: () => Promise<T>,
): Promise<PromiseSettledResult<T>[]> {
  const outcomes: PromiseSettledResult<T>[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      next += 1;
      outcomes.push(
        await start().then(
          (value): PromiseSettledResult<T> => ({ status: 'fulfilled', value }),
          (reason: unknown): PromiseSettledResult<T> => ({ status: 'rejected', reason }),
        ),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, lane));
  return outcomes;
}
