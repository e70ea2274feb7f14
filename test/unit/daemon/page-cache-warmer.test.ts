import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RESUME_CHECK, warmPageCache } from '../../../daemon/page-cache-warmer.js';

describe('the page cache warmer (prefetch)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads every file once at start, and again only after a gap a pause leaves', () => {
    const reads: string[] = [];
    const stop = warmPageCache(['/opt/agents/bin/opencode', '/opt/agents/node/bin/node'], (path) =>
      reads.push(path),
    );
    expect(reads).toEqual([]); // not in the start's own turn
    vi.advanceTimersByTime(0);
    expect(reads).toEqual(['/opt/agents/bin/opencode', '/opt/agents/node/bin/node']);
    // Running normally: ticks come on time, nothing is read again.
    vi.advanceTimersByTime(RESUME_CHECK.everyMs * 20);
    expect(reads).toHaveLength(2);
    // Frozen: the clock moves on while no timer fires; the first tick after the thaw is late.
    vi.setSystemTime(Date.now() + RESUME_CHECK.gapMs * 10);
    vi.advanceTimersByTime(RESUME_CHECK.everyMs);
    expect(reads).toHaveLength(4);
    vi.advanceTimersByTime(RESUME_CHECK.everyMs * 5);
    expect(reads).toHaveLength(4);
    stop();
    vi.setSystemTime(Date.now() + RESUME_CHECK.gapMs * 10);
    vi.advanceTimersByTime(RESUME_CHECK.everyMs * 5);
    expect(reads).toHaveLength(4); // stopped
  });

  it('does nothing for a template without prefetch', () => {
    const read = vi.fn();
    warmPageCache([], read);
    vi.advanceTimersByTime(60_000);
    expect(read).not.toHaveBeenCalled();
  });
});
