/**
 * Raw requests with a body that once ended the process hosting a gateway (issue 9): each is sent on a
 * fresh connection to a route admitting `POST /v1/*`, and the upstream fixture echoes `/v1/cc`.
 */
import { createHash } from 'node:crypto';

/** `[name, raw request]` pairs; every body is the two bytes `hi`. */
export const BODY_FORMS: readonly (readonly [string, string])[] = [
  ['Content-Length', 'POST /v1/cc HTTP/1.1\r\nHost: gw\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi'],
  [
    'chunked',
    'POST /v1/cc HTTP/1.1\r\nHost: gw\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n',
  ],
  ['HTTP/1.0', 'POST /v1/cc HTTP/1.0\r\nHost: gw\r\nContent-Length: 2\r\n\r\nhi'],
];

/** SHA-256 of the body `hi`, as the fixture's echo reports it. */
export const HI_SHA256 = createHash('sha256').update('hi').digest('hex');

/** The JSON body of a raw HTTP/1.x answer. */
export function rawJsonBody(received: string): unknown {
  return JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4));
}
