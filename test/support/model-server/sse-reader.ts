/** Reads an event stream body back into events (for tests of the server and of what relays it). */

export interface ParsedEvent {
  /** `event:` field, undefined when absent. */
  readonly event: string | undefined;
  /** `data:` lines joined by `\n`. */
  readonly data: string;
}

/** Splits `text` into events; comment lines and events without data are dropped. */
export function parseSse(text: string): ParsedEvent[] {
  const events: ParsedEvent[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trimStart();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return events;
}
