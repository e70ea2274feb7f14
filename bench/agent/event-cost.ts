/**
 * The SDK's own cost per agent event: a wire stream recorded from a real execution (its NDJSON lines as
 * sandboxd sent them), its events repeated to `count`, served in one piece by a local fake sandboxd,
 * and read through `AgentStream` (undici body, NDJSON split and parse, the wire schema, the event hub,
 * `for await`) as `sbx.agent.attach()` reads it. Beside it the same body read as NDJSON values only
 * (transport and JSON parse), so the difference is the stream's parse and dispatch. Time from the
 * daemon having a line to the SDK yielding it is not measured: the two clocks are in one process here,
 * but a live run's gaps are the runtime's.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { ndjsonValues } from '../../protocol/ndjson.js';
import { attachedExecution } from '../../sdk/agent-execution.js';
import { AgentStream } from '../../sdk/agent-stream.js';
import { DaemonClient } from '../../sdk/daemon-client.js';

/** Microseconds per event, medians of `rounds`. */
export interface EventCost {
  readonly events: number;
  /** Through `AgentStream`. */
  readonly streamUs: number;
  /** Through undici and `ndjsonValues` only. */
  readonly transportUs: number;
}

interface WireLine {
  seq?: number;
  event?: { type: string };
}

/** A body of `count` events: the recorded ones (but the last) repeated, renumbered, then the last. */
function repeated(recorded: readonly string[], count: number): { body: string; events: number } {
  const lines = recorded.map((line) => JSON.parse(line) as WireLine).filter((line) => line.seq !== undefined);
  const last = lines.at(-1);
  if (last?.event === undefined || (last.event.type !== 'done' && last.event.type !== 'agent_failed')) {
    throw new Error('the recorded stream has no last event');
  }
  const session = lines.filter((line) => line.event === undefined);
  const events = lines.slice(0, -1).filter((line) => line.event !== undefined);
  const out: string[] = [];
  let seq = 0;
  for (const line of session) out.push(JSON.stringify({ ...line, seq: ++seq }));
  let n = 0;
  while (n < count - 1) {
    for (const line of events) {
      if (n >= count - 1) break;
      out.push(JSON.stringify({ ...line, seq: ++seq }));
      n++;
    }
  }
  out.push(JSON.stringify({ ...last, seq: ++seq }));
  return { body: `${out.join('\n')}\n`, events: n + 1 };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

/** Measures the cost per event over `rounds` (after one warm-up round of each reading). */
export async function measureEventCost(
  recorded: readonly string[],
  count = 20_000,
  rounds = 5,
): Promise<EventCost> {
  const { body, events } = repeated(recorded, count);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  const client = new DaemonClient({ url, accessToken: 'bench' });
  try {
    const throughStream = async (): Promise<number> => {
      const started = performance.now();
      const stream = new AgentStream(attachedExecution(client, 'exe_bench', 0), {
        maxOutputBytes: 64 << 20,
      });
      let seen = 0;
      let last = '';
      for await (const event of stream) {
        seen++;
        last = event.type;
      }
      if (last !== 'done') throw new Error(`the stream ended with ${last}`);
      await stream.result();
      stream.close();
      if (seen !== events) throw new Error(`the stream yielded ${String(seen)} of ${String(events)} events`);
      return ((performance.now() - started) * 1000) / events;
    };
    const throughTransport = async (): Promise<number> => {
      const started = performance.now();
      const res = await request(`${url}/v1/agent/executions/exe_bench/events`);
      let seen = 0;
      for await (const value of ndjsonValues(res.body)) if (typeof value === 'object') seen++;
      if (seen < events) throw new Error('the transport read fewer lines than events');
      return ((performance.now() - started) * 1000) / events;
    };
    await throughStream();
    await throughTransport();
    const stream: number[] = [];
    const transport: number[] = [];
    for (let i = 0; i < rounds; i++) {
      stream.push(await throughStream());
      transport.push(await throughTransport());
    }
    return { events, streamUs: median(stream), transportUs: median(transport) };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
