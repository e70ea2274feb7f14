/** The `?after=<seq>` cursor of every event stream, read the same way by both servers. */

/**
 * The cursor of a request URL's `after` parameter: undefined when absent, else a sequence number.
 *
 * @returns `'invalid'` for anything but a whole number JavaScript holds exactly
 */
export function cursorOf(url: URL): number | undefined | 'invalid' {
  const after = url.searchParams.get('after');
  if (after === null) return undefined;
  if (!/^\d{1,16}$/.test(after)) return 'invalid';
  const seq = Number(after);
  return Number.isSafeInteger(seq) ? seq : 'invalid';
}
