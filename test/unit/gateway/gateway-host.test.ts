import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { GatewayHost, type GatewayHostEvent } from '../../../gateway/index.js';

const SECRET = 'sk-planted-host-secret-0123456789';

const route = (value: string) => ({
  upstream: 'https://api.vendor.example',
  headers: { 'x-api-key': value },
  allow: [['POST', '/v1/*']],
});

describe('gateway host', () => {
  it('keeps values out of inspect, JSON, status, outcomes and events', async () => {
    const host = new GatewayHost();
    const events: GatewayHostEvent[] = [];
    host.events$.subscribe((event) => events.push(event));
    const accepted = await host.apply({ llm: route(SECRET) });
    const refused = await host.apply({ llm: route(`${SECRET}\r\nx-smuggled: 1`) });
    const texts = [
      inspect(host, { showHidden: true, depth: 20 }),
      inspect(accepted, { showHidden: true, depth: 20 }),
      JSON.stringify([accepted, refused, [...host.status()], events]),
      refused.ok ? '' : refused.failure.message,
    ];
    for (const text of texts) expect(text).not.toContain(SECRET);
    await host.close();
  });

  it('reports route lifecycle events and completes them on close', async () => {
    const host = new GatewayHost();
    const events: GatewayHostEvent[] = [];
    let completed = false;
    host.events$.subscribe({ next: (event) => events.push(event), complete: () => (completed = true) });
    await host.apply({ llm: route(SECRET) });
    await host.apply({ llm: route('short'), extra: { ...route(SECRET), headers: { 'x-key': '\0' } } });
    await host.apply({});
    await host.close();
    const port = events[0]?.type === 'route_opened' ? events[0].port : -1;
    expect(events).toEqual([
      { type: 'route_opened', route: 'llm', port },
      { type: 'route_failed', route: 'llm', errorClass: 'InvalidHeaderValueError' },
      { type: 'route_closed', route: 'llm' },
    ]);
    expect(completed).toBe(true);
  });

  it("binds a route on the port a snapshot's original gave it when free, on another when taken", async () => {
    const first = new GatewayHost();
    await first.apply({ llm: route(SECRET), tools: route(SECRET) });
    const ports = Object.fromEntries([...first.status()].map(([name, s]) => [name, s.port]));
    await first.apply({ llm: route(SECRET) }); // tools' port is free again; llm's stays taken
    const copy = new GatewayHost({ preferredPorts: ports });
    try {
      await copy.apply({ llm: route(SECRET), tools: route(SECRET) });
      expect(copy.status().get('tools')?.port).toBe(ports['tools']);
      expect(copy.status().get('llm')?.port).not.toBe(ports['llm']);
      expect(copy.status().get('llm')?.port).toBeGreaterThan(0);
    } finally {
      await Promise.all([first.close(), copy.close()]);
    }
  });

  it('refuses every configuration once closed', async () => {
    const host = new GatewayHost();
    await host.close();
    const outcome = await host.apply({ llm: route(SECRET) });
    expect(outcome.ok ? undefined : outcome.failure.errorClass).toBe('ListenerError');
  });
});
