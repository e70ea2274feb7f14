/**
 * Issue 13: the inspector's HTTP surface on a control plane: the page's files with a strict
 * Content-Security-Policy, the machine graphs and the table behind the operator key, time travel for a
 * token holder, agent calls refused on a suspended sandbox before any call to it, and every API call
 * refused when a browser sends it from another origin, operator key or not.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../../control-plane/control-plane.js';
import { createControlPlaneServer } from '../../../control-plane/http-api.js';
import {
  machineGraphsSchema,
  inspectorSandboxesSchema,
  sandboxHistorySchema,
} from '../../../protocol/inspector-api.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const OPERATOR_KEY = 'operator-key-for-inspector-tests-0123456789';

let world: MemoryPlaneWorld;
let plane: ControlPlane;
let server: Server;
let base: string;

beforeEach(async () => {
  world = new MemoryPlaneWorld();
  plane = await world.start({ operatorKey: OPERATOR_KEY });
  server = createControlPlaneServer(plane);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await world.dispose();
});

const get = async (path: string, headers: Record<string, string> = {}, method: 'GET' | 'POST' = 'GET') => {
  const res = await request(`${base}${path}`, { method, headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
};
const operator = { authorization: `Bearer ${OPERATOR_KEY}` };

describe('the page', () => {
  it('is served from the package with a strict policy, at /inspector/', async () => {
    expect((await get('/')).headers.location).toBe('/inspector/');
    expect((await get('/inspector')).headers.location).toBe('/inspector/');
    const page = await get('/inspector/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
    expect(page.text).toContain('app.js');
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    expect(page.text).not.toMatch(/https?:\/\//); // nothing from elsewhere
    const script = await get('/inspector/app.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.headers['x-content-type-options']).toBe('nosniff');
    expect((await get('/inspector/inspector.css')).status).toBe(200);
    expect((await get('/inspector/..%2Fcontrol-key')).status).toBe(404);
    expect((await get('/inspector/package.json')).status).toBe(404);
  });
});

describe('the inspector API', () => {
  it('is in the OpenAPI document', async () => {
    const document = JSON.parse((await get('/v1/openapi.json')).text) as { paths: Record<string, unknown> };
    for (const path of [
      '/v1/machines',
      '/v1/inspector/sandboxes',
      '/v1/sandboxes/{sandboxId}/records',
      '/v1/sandboxes/{sandboxId}/history',
      '/v1/sandboxes/{sandboxId}/agent/executions',
      '/v1/sandboxes/{sandboxId}/agent/executions/{executionId}/events',
      '/v1/sandboxes/{sandboxId}/agent/executions/{executionId}/abort',
    ]) {
      expect(document.paths[path], path).toBeDefined();
    }
  });

  it('gives the machine graphs and the sandbox table to the operator only', async () => {
    expect((await get('/v1/machines')).status).toBe(401);
    expect((await get('/v1/inspector/sandboxes', { authorization: 'Bearer wrong' })).status).toBe(401);
    const machines = await get('/v1/machines', operator);
    expect(machines.status).toBe(200);
    const graphs = machineGraphsSchema.parse(JSON.parse(machines.text));
    expect(graphs.sandbox.states.map((state) => state.id)).toEqual(['running', 'suspended', 'ended']);
    expect(machines.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");

    const sbx = await plane.create({ template: 'sdk-base-caps', allowInternetAccess: false });
    const table = inspectorSandboxesSchema.parse(
      JSON.parse((await get('/v1/inspector/sandboxes', operator)).text),
    );
    expect(table.sandboxes.map((row) => row.sandboxId)).toEqual([sbx.sandboxId]);
    // The table is the operator's: a sandbox's own token does not open it.
    expect(
      (await get('/v1/inspector/sandboxes', { authorization: `Bearer ${sbx.accessToken}` })).status,
    ).toBe(401);
  });

  it('gives a sandbox history to its token holder and to the operator', async () => {
    const sbx = await plane.create({ template: 'sdk-base-caps', allowInternetAccess: false });
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    for (const authorization of [`Bearer ${sbx.accessToken}`, `Bearer ${OPERATOR_KEY}`]) {
      const history = sandboxHistorySchema.parse(
        JSON.parse((await get(`/v1/sandboxes/${sbx.sandboxId}/history`, { authorization })).text),
      );
      expect(history.entries.at(-1)?.state).toBe('suspended');
    }
    expect((await get(`/v1/sandboxes/${sbx.sandboxId}/history`)).status).toBe(401);
  });

  it('refuses agent calls on a suspended or ended sandbox before calling its sandboxd', async () => {
    const sbx = await plane.create({ template: 'sdk-base-caps', allowInternetAccess: false });
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    const listed = await get(`/v1/sandboxes/${sbx.sandboxId}/agent/executions`, operator);
    expect(listed.status).toBe(409);
    expect(JSON.parse(listed.text)).toMatchObject({ code: 'sandbox_suspended' });
    const aborted = await get(`/v1/sandboxes/${sbx.sandboxId}/agent/executions/abc/abort`, operator, 'POST');
    expect(JSON.parse(aborted.text)).toMatchObject({ code: 'sandbox_suspended' });
    await plane.kill(sbx.sandboxId, sbx.accessToken);
    const ended = await get(`/v1/sandboxes/${sbx.sandboxId}/agent/executions/abc/events`, operator);
    expect(JSON.parse(ended.text)).toMatchObject({ code: 'sandbox_ended' });
    expect((await get(`/v1/sandboxes/${sbx.sandboxId}/agent/executions`)).status).toBe(401);
  });

  it('refuses every API call a browser sends from another origin, with the operator key or not', async () => {
    const own = base;
    expect((await get('/v1/machines', { ...operator, origin: own })).status).toBe(200);
    expect((await get('/v1/machines', { ...operator, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    for (const headers of [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { origin: own.replace('127.0.0.1', 'localhost') },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ]) {
      const refused = await get('/v1/machines', { ...operator, ...headers });
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.text)).toMatchObject({ code: 'forbidden_origin' });
      expect(refused.headers['access-control-allow-origin']).toBeUndefined();
      const created = await get(
        '/v1/sandboxes',
        { ...operator, ...headers, 'content-type': 'application/json' },
        'POST',
      );
      expect(created.status).toBe(403);
    }
    expect(plane.list()).toEqual([]); // nothing was created from elsewhere
  });
});
