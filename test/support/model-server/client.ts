/** A plain client for driving the model server in tests. */
import { parseEventStream, type EventStreamMessage } from './event-stream-reader.js';
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

/**
 * The messages of an AWS event stream response, read in the chunks the connection delivers; throws unless
 * it is `application/vnd.amazon.eventstream`.
 */
export async function readEventStream(response: Response): Promise<EventStreamMessage[]> {
  const type = response.headers.get('content-type') ?? '';
  if (type !== 'application/vnd.amazon.eventstream') throw new Error(`not an AWS event stream: ${type}`);
  const chunks: Uint8Array[] = [];
  const reader = response.body?.getReader();
  if (reader !== undefined) {
    for (let read = await reader.read(); !read.done; read = await reader.read())
      chunks.push(read.value as Uint8Array);
  }
  return parseEventStream(chunks);
}
