/** Reads an AWS event stream body back into messages (for tests of the server and of what relays it). */
import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';

const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();
const codec = new EventStreamCodec(
  (bytes: Uint8Array) => utf8Decoder.decode(bytes),
  (text) => utf8Encoder.encode(text),
);

export type { Message as EventStreamMessage } from '@smithy/eventstream-codec';

/**
 * Messages of a body delivered in `chunks` of any sizes: each cut out by the total length its prelude
 * gives, then decoded with both CRCs checked. Throws on a damaged message or bytes left over at the end.
 */
export function parseEventStream(chunks: Iterable<Uint8Array>): Message[] {
  const messages: Message[] = [];
  let pending = new Uint8Array(0);
  for (const chunk of chunks) {
    const joined = new Uint8Array(pending.byteLength + chunk.byteLength);
    joined.set(pending);
    joined.set(chunk, pending.byteLength);
    pending = joined;
    while (pending.byteLength >= 4) {
      const length = new DataView(pending.buffer, pending.byteOffset, 4).getUint32(0);
      if (pending.byteLength < length) break;
      messages.push(codec.decode(pending.subarray(0, length)));
      pending = pending.subarray(length);
    }
  }
  if (pending.byteLength > 0) {
    throw new Error(`event stream cut short: ${String(pending.byteLength)} bytes after the last message`);
  }
  return messages;
}

/** One message's `:event-type` (or `:exception-type`) and its body parsed as JSON. */
export interface StreamEvent {
  readonly type: string;
  readonly data: Record<string, unknown>;
}

/** The events of decoded messages. */
export function eventsOf(messages: readonly Message[]): StreamEvent[] {
  return messages.map((message) => {
    const name = message.headers[':event-type'] ?? message.headers[':exception-type'];
    return {
      type: typeof name?.value === 'string' ? name.value : '',
      data: JSON.parse(utf8Decoder.decode(message.body)) as Record<string, unknown>,
    };
  });
}
