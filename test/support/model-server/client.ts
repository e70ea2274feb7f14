/** A plain client for driving the model server in tests. */
import { parseSse, type ParsedEvent } from './sse-reader.js';

/** POSTs `body` as JSON to `origin + path`. */
export function postJson(
  origin: string,
  path: string,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<Response> {
  return fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** The events of a stream response; throws unless it is `text/event-stream`. */
export async function readEvents(response: Response): Promise<ParsedEvent[]> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream')) throw new Error(`not an event stream: ${type}`);
  return parseSse(await response.text());
}

/** The `data` of each event parsed as JSON. */
export function dataOf(events: readonly ParsedEvent[]): Record<string, unknown>[] {
  return events.map((event) => JSON.parse(event.data) as Record<string, unknown>);
}
