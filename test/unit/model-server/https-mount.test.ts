import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTestPki } from '../../integration/support/test-ca.js';
import { createModelServer, parseSse, text } from '../../support/model-server/index.js';

const dir = mkdtempSync(join(tmpdir(), 'model-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('model server behind HTTPS', () => {
  it('serves its handler from an https server with a test CA', async () => {
    const pki = makeTestPki(dir, 'model', ['127.0.0.1']);
    const model = createModelServer({
      script: [text('over tls')],
      expectedCredentials: { 'x-api-key': 'k' },
    });
    const server = createServer(
      { cert: readFileSync(pki.certFile), key: readFileSync(pki.keyFile) },
      model.handler,
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ connect: { ca: pki.caPem } });
    try {
      const response = await request(`https://127.0.0.1:${String(port)}/v1/messages`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
        body: JSON.stringify({ model: 'm', stream: true }),
      });
      expect(response.statusCode).toBe(200);
      const events = parseSse(await response.body.text());
      expect(events.at(-1)?.event).toBe('message_stop');
      expect(model.requests[0]?.credentials).toEqual({ 'x-api-key': 'expected' });
    } finally {
      await agent.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
