/** How numbers, times and long text read on the page. */

/** `1h 04m`, `3m 07s`, `12s`; negative durations read as `0s`. */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const sec = seconds % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(sec).padStart(2, '0')}s`;
  return `${sec}s`;
}

/** `512 MiB`, `1.2 GiB`, `830 B`. */
export function bytes(value: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let amount = value;
  let unit = 0;
  while (amount >= 1024 && unit < units.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || amount >= 100 ? 0 : amount >= 10 ? 1 : 2;
  return `${amount.toFixed(digits)} ${units[unit] ?? 'B'}`;
}

/** `used` of `limit` in the limit's unit, `482 / 1024 MiB`. */
export function bytesOf(used: number, limit: number): string {
  const unit = limit >= 16 * 1024 ** 3 ? 3 : 2;
  const scale = 1024 ** unit;
  const digits = unit === 3 ? 1 : 0;
  return `${(used / scale).toFixed(digits)} / ${(limit / scale).toFixed(digits)} ${unit === 3 ? 'GiB' : 'MiB'}`;
}

/** Wall-clock time of day, `14:03:27`. */
export function clockTime(ms: number): string {
  const date = new Date(ms);
  return [date.getHours(), date.getMinutes(), date.getSeconds()]
    .map((part) => String(part).padStart(2, '0'))
    .join(':');
}

/** Time of day with milliseconds, `14:03:27.081`, for logs. */
export function preciseTime(ms: number): string {
  return `${clockTime(ms)}.${String(new Date(ms).getMilliseconds()).padStart(3, '0')}`;
}

/** `12,345`. */
export function count(value: number): string {
  return value.toLocaleString('en-US');
}

/** At most `max` characters, the cut marked with `…`. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** A value as compact JSON (what a tool call's input reads as), never throwing. */
export function json(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    // undefined for undefined, a function or a symbol, whatever the declared type says
    const text = JSON.stringify(value) as string | undefined;
    return text ?? String(value);
  } catch {
    return String(value);
  }
}

/** An event's fields beyond its type, `now=… version=3`, for the transition log. */
export function eventDetails(event: Readonly<Record<string, unknown>>): string {
  return Object.entries(event)
    .filter(([key]) => key !== 'type')
    .map(
      ([key, value]) =>
        `${key}=${key === 'now' && typeof value === 'number' ? clockTime(value) : json(value)}`,
    )
    .join(' ');
}
