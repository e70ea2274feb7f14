/**
 * The one undici dispatcher every route of a host shares: HTTP/1.1 only, the safe connector, the spec's
 * time-outs, no body time-out (quiet event streams stay open), no response size cap, no redirect ever
 * followed (`dispatch` does not follow them), and an upstream `100 Continue` dropped before undici parses
 * it (undici 7 fails a request on one it did not ask for).
 */
import { Agent } from 'undici';
import { withoutContinueResponses } from './interim-responses.js';
import { safeConnector, type SafeConnectorOptions } from './safe-connector.js';

/** Options of the upstream dispatcher. */
export interface UpstreamDispatcherOptions extends SafeConnectorOptions {
  /** Wait for response headers (SPEC: 600 s). */
  readonly headersTimeoutMs: number;
}

/** Builds the shared upstream dispatcher. */
export function createUpstreamDispatcher(options: UpstreamDispatcherOptions): Agent {
  return new Agent({
    connect: withoutContinueResponses(safeConnector(options)),
    allowH2: false,
    pipelining: 1, // also what tells the 100 filter where each response starts
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: 0,
    keepAliveTimeout: 4_000,
  });
}
