#!/usr/bin/env node
/**
 * `sdk serve [--port N] [--host H] [--state-dir DIR] [--warm-pool N]`: runs the control plane with the embedded default
 * driver (namespaces; needs root) until SIGINT or SIGTERM. Sandboxes outlive it: the next start adopts
 * them from the journal.
 */
import { parseArgs } from 'node:util';
import { ControlPlane } from '../control-plane/control-plane.js';
import { createControlPlaneServer } from '../control-plane/http-api.js';

const USAGE = 'usage: sdk serve [--port 4780] [--host 127.0.0.1] [--state-dir /var/lib/sdk] [--warm-pool 0]';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    port: { type: 'string', default: '4780' },
    host: { type: 'string', default: '127.0.0.1' },
    'state-dir': { type: 'string', default: '/var/lib/sdk' },
    'warm-pool': { type: 'string', default: '0' },
  },
});

if (positionals[0] !== 'serve') {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

const plane = await ControlPlane.start({
  stateDir: values['state-dir'],
  warmPool: Number(values['warm-pool']),
});
const server = createControlPlaneServer(plane);
server.listen(Number(values.port), values.host, () => {
  process.stdout.write(`control plane on http://${values.host}:${values.port}\n`);
});
const stop = (): void => {
  server.close();
  server.closeAllConnections();
  plane.close();
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
