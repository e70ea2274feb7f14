/**
 * The one undici dispatcher every route of a host shares: HTTP/1.1 only, the safe connector, the spec's
 * time-outs, no body time-out (quiet event streams stay open), no response size cap, and no redirect
 * ever followed (`dispatch` does not follow them).
 */
import { Agent } from 'undici';
import { safeConnector, type SafeConnectorOptions } from './safe-connector.js';

/** Options of the upstream dispatcher. */
export interface UpstreamDispatcherOptions extends SafeConnectorOptions {
  /** Wait for response headers (SPEC: 600 s). */
  readonly headersTimeoutMs: number;
}

/** Builds the shared upstream dispatcher. */
export function createUpstreamDispatcher(options: UpstreamDispatcherOptions): Agent {
  return new Agent({
    connect: safeConnector(options),
    allowH2: false,
    pipelining: 1,
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: 0,
    keepAliveTimeout: 4_000,
  });
}
