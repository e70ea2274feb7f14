/**
 * The world of a gateway integration test file: a test CA and another one, a namespace, the HTTPS
 * upstream inside it, and gateway hosts that are all closed afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { GatewayHost, type GatewayHostOptions } from '../../../gateway/index.js';
import type { RouteConfiguration } from '../../../gateway/configuration.js';
import { startHttpsUpstream, type HttpsUpstream } from './https-upstream.js';
import { makeTestPki, type TestPki } from './test-ca.js';
import { createTestNetwork, type TestNetwork } from './test-network.js';

/** The host name the stub resolvers answer for. */
export const UPSTREAM_NAME = 'upstream.test';

/** What a test file uses. */
export interface GatewayWorld {
  readonly network: TestNetwork;
  readonly pki: TestPki;
  readonly upstream: HttpsUpstream;
  /** A host trusting the test CA; closed after the file. */
  host(options?: GatewayHostOptions): GatewayHost;
  /** A route to the upstream admitting every method on `/*`, with `x-api-key` set to `value`. */
  route(value: string, overrides?: Partial<RouteConfiguration>): RouteConfiguration;
}

/** Registers `beforeAll`/`afterAll` hooks building and tearing down the world. */
export function useGatewayWorld(slot: number): GatewayWorld {
  let dir = '';
  let network: TestNetwork | undefined;
  let pki: TestPki | undefined;
  let upstream: HttpsUpstream | undefined;
  const hosts: GatewayHost[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sdk-gw-'));
    network = createTestNetwork(slot);
    pki = makeTestPki(dir, 'trusted', [network.nsAddress], [UPSTREAM_NAME]);
    const other = makeTestPki(dir, 'other', [network.nsAddress], [UPSTREAM_NAME]);
    upstream = await startHttpsUpstream(network, pki, other);
  });

  afterAll(async () => {
    await Promise.all(hosts.map((host) => host.close()));
    await upstream?.stop();
    network?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the gateway world is not set up');
    return value;
  };

  return {
    get network() {
      return need(network);
    },
    get pki() {
      return need(pki);
    },
    get upstream() {
      return need(upstream);
    },
    host(options = {}) {
      const host = new GatewayHost({ ca: need(pki).caPem, ...options });
      hosts.push(host);
      return host;
    },
    route(value, overrides = {}) {
      return {
        upstream: need(upstream).origin,
        headers: { 'x-api-key': value },
        allow: ['GET', 'POST', 'PUT', 'HEAD'].map((method) => [method, '/*'] as const),
        ratePerMinute: 6000,
        ...overrides,
      };
    },
  };
}
