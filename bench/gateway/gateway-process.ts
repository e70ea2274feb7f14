/**
 * The gateway under test, in a process of its own so the load generator does not share its event loop.
 * Argument: JSON `{ caFile, upstream, headerValue, clockSpeedup }`. Prints the route's port, then serves
 * until SIGTERM.
 *
 * The spec caps a route at 6000 requests per minute; to measure the proxy rather than the limiter, the
 * token bucket runs on a clock `clockSpeedup` times fast. The bucket is still consulted per request.
 */
import { readFileSync } from 'node:fs';
import { GatewayHost } from '../../gateway/index.js';

interface Settings {
  readonly caFile: string;
  readonly upstream: string;
  readonly headerValue: string;
  readonly clockSpeedup: number;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as Settings;
const host = new GatewayHost({
  ca: readFileSync(settings.caFile, 'utf8'),
  now: () => performance.now() * settings.clockSpeedup,
});
const outcome = await host.apply({
  bench: {
    upstream: settings.upstream,
    headers: { 'x-api-key': settings.headerValue },
    allow: [['GET', '/*']],
    ratePerMinute: 6000,
  },
});
if (!outcome.ok) throw new Error(outcome.failure.message);
process.stdout.write(`${String(outcome.status.get('bench')?.port)}\n`);
process.on('SIGTERM', () => {
  void host.close().then(() => process.exit(0));
});
