/**
 * The scripted model server (test/support/model-server) with the arrival time of every request: over
 * HTTPS in a test namespace for sandboxes (`test/integration/support/model-upstream.ts`), and over
 * loopback HTTP for the bare runtime. Both listen in this process, so their times share one clock with
 * the SDK calls the benchmark makes.
 */
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startModelUpstream } from '../../test/integration/support/model-upstream.js';
import { createModelServer, type ModelServer } from '../../test/support/model-server/index.js';

export { PACKAGE_ROOT } from '../../test/integration/support/model-upstream.js';

/** A scripted model server that notes when each request's headers arrived (`performance.now()`). */
export interface TimedModel {
  readonly model: ModelServer;
  /** `https://<namespace address>:8443` or `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** The first request that arrived at or after `since`, in ms since `since`; undefined when none did. */
  firstRequestAfter(since: number): number | undefined;
  stop(): Promise<void>;
}

function timedHandler(model: ModelServer): {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  arrivals: number[];
} {
  const arrivals: number[] = [];
  return {
    arrivals,
    handler: (req, res) => {
      arrivals.push(performance.now());
      model.handler(req, res);
    },
  };
}

function firstAfter(arrivals: readonly number[], since: number): number | undefined {
  const first = arrivals.find((at) => at >= since);
  return first === undefined ? undefined : first - since;
}

/** Over loopback HTTP: what the bare runtime on the host is pointed at. */
export async function startLoopbackModel(): Promise<TimedModel> {
  const model = createModelServer();
  const { handler, arrivals } = timedHandler(model);
  const server = createHttpServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    model,
    origin: `http://127.0.0.1:${String(port)}`,
    firstRequestAfter: (since) => firstAfter(arrivals, since),
    stop: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Over HTTPS with a test CA in a test namespace (`slot` as in `createTestNetwork`): for gateways. */
export async function startNamespaceModel(slot: number): Promise<TimedModel & { readonly caPem: string }> {
  const arrivals: number[] = [];
  const upstream = await startModelUpstream(slot, { onRequest: () => arrivals.push(performance.now()) });
  return { ...upstream, firstRequestAfter: (since) => firstAfter(arrivals, since) };
}
