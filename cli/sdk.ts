#!/usr/bin/env node
/**
 * `sdk serve [--port N] [--host H] [--allow-host NAME]… [--state-dir DIR] [--warm-pool N] [--gateway-ca FILE]
 * [--isolation namespace|gvisor] [--dns-server ADDR[:PORT]]…`: runs the control plane with the host driver (namespace and gVisor
 * sandboxes; needs root) until SIGINT or SIGTERM; `--isolation` is the isolation of sandboxes whose
 * create names none (`namespace` by default; with `gvisor`, runsc is built first if need be). It
 * answers requests for `H`, loopback's names and each `NAME` (`Host`), and refuses others. Sandboxes
 * outlive it: the next start adopts them from the journal. `--gateway-ca FILE`: PEM trust roots for gateway
 * upstreams in every sandbox (a private CA), instead of the system's. `--dns-server`: the DNS servers every
 * sandbox's resolver asks (`SDK_DNS_SERVERS`, else the host's resolv.conf, by default).
 * `--preview-domain DOMAIN`: preview URLs by host, `<port>-<id>.DOMAIN` (a wildcard name resolving to
 * this server), each sandbox's port an origin of its own; by path on this server without.
 * `--webhook URL` (repeatable): every sandbox's lifecycle events POSTed there, signed with the secret of
 * `--webhook-secret-file FILE` (else the state folder's `webhook-secret`, made on first start; its path
 * is printed, never its value). `--metrics-interval-ms N`: between two metrics samples of a running sandbox
 * (`sbx.getMetrics()`; 5000 by default, 100 to 3600000). `sdk doctor [--state-dir DIR]`: checks the
 * host and the templates (`doctor.ts`). `sdk template build ...`: builds an agent template on the
 * control plane (`template-build.ts`).
 */
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ControlPlane } from '../control-plane/control-plane.js';
import { checkDnsServers } from '../control-plane/dns-servers.js';
import { createControlPlaneServer } from '../control-plane/http-api.js';
import {
  loadOrCreateOperatorKey,
  operatorKeyFile,
  webhookSecretFile,
} from '../control-plane/operator-key.js';
import { webhookUrlSchema } from '../rules/webhook-url.js';
import { METRICS_INTERVAL_MS } from '../control-plane/metrics-sampler.js';
import { ISOLATIONS, isolationSchema, type Isolation } from '../protocol/control-plane-api.js';
import { NamespaceDriver } from '../sandbox-drivers/namespace/namespace-driver.js';
import { doctor } from './doctor.js';
import { templateBuild } from './template-build.js';

const USAGE = [
  'usage: sdk serve [--port 4780] [--host 127.0.0.1] [--allow-host NAME]... [--state-dir /var/lib/sdk] [--warm-pool 0]',
  '                 [--gateway-ca FILE] [--isolation namespace|gvisor] [--dns-server ADDR[:PORT]]...',
  '                 [--preview-domain DOMAIN] [--webhook URL]... [--webhook-secret-file FILE]',
  '                 [--metrics-interval-ms 5000]',
  '       sdk doctor [--state-dir /var/lib/sdk]',
  '       sdk template build [--name sdk-agent] [--base sdk-base-caps] [--memory-mb N] [--no-runtime-b]',
  '                          [--no-prefetch] [--force] [--timeout SECONDS] [--state-dir /var/lib/sdk]',
].join('\n');

/** A domain name of at least two labels (the wildcard's parent). */
const PREVIEW_DOMAIN =
  /^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/** Ends with the usage on stderr (after `problem`, if any): exit 2, or 0 when help was asked for. */
function usage(problem?: string): never {
  const asked = problem === undefined;
  (asked ? process.stdout : process.stderr).write(`${asked ? '' : `sdk: ${problem}\n`}${USAGE}\n`);
  process.exit(asked ? 0 : 2);
}

if (process.argv.slice(2).some((arg) => arg === '--help' || arg === '-h')) usage();

if (process.argv[2] === 'template') {
  if (process.argv[3] !== 'build') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  process.exit(await templateBuild(process.argv.slice(4), process.stdout));
}

const parsed = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        port: { type: 'string', default: '4780' },
        host: { type: 'string', default: '127.0.0.1' },
        'allow-host': { type: 'string', multiple: true, default: [] },
        'state-dir': { type: 'string', default: '/var/lib/sdk' },
        'warm-pool': { type: 'string', default: '0' },
        'gateway-ca': { type: 'string' },
        isolation: { type: 'string', default: 'namespace' },
        'dns-server': { type: 'string', multiple: true, default: [] },
        'preview-domain': { type: 'string' },
        webhook: { type: 'string', multiple: true, default: [] },
        'webhook-secret-file': { type: 'string' },
        'metrics-interval-ms': { type: 'string', default: String(METRICS_INTERVAL_MS) },
      },
    });
  } catch (error) {
    return usage(error instanceof Error ? error.message : String(error));
  }
})();
const { positionals, values } = parsed;

if (positionals[0] === 'doctor' && positionals.length === 1) process.exit(doctor(values['state-dir']));
if (positionals[0] !== 'serve' || positionals.length > 1) usage(`unknown command: ${positionals.join(' ')}`);

/** A whole number option within [min, max], else the usage. */
function wholeNumber(name: string, text: string, min: number, max: number): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max))
    usage(`--${name} must be a whole number from ${String(min)} to ${String(max)}`);
  return value;
}
const port = wholeNumber('port', values.port, 0, 65535);
const warmPool = wholeNumber('warm-pool', values['warm-pool'], 0, 1000);
const metricsIntervalMs = wholeNumber('metrics-interval-ms', values['metrics-interval-ms'], 100, 3_600_000);
const previewDomain = values['preview-domain'];
if (previewDomain !== undefined && !PREVIEW_DOMAIN.test(previewDomain)) {
  usage('--preview-domain must be a domain name (its wildcard, *.DOMAIN, resolving to this server)');
}

const gatewayCa = (() => {
  const file = values['gateway-ca'];
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return usage(`--gateway-ca: cannot read ${file} (${code})`);
  }
})();

const isolation = ((): Isolation => {
  const parsed = isolationSchema.safeParse(values.isolation);
  return parsed.success ? parsed.data : usage(`--isolation must be ${ISOLATIONS.join(' or ')}`);
})();

const dnsServers = (() => {
  try {
    return checkDnsServers(values['dns-server'], '--dns-server');
  } catch (error) {
    return usage(error instanceof Error ? error.message : String(error));
  }
})();

const webhooks = values.webhook.map((url) =>
  webhookUrlSchema.safeParse(url).success
    ? url
    : usage('--webhook must be an http or https URL without user name, password or fragment'),
);
const webhookSecret = (() => {
  const file = values['webhook-secret-file'];
  if (file === undefined) return undefined;
  try {
    const secret = readFileSync(file, 'utf8').trim();
    return secret.length >= 16
      ? secret
      : usage(`--webhook-secret-file: ${file} holds fewer than 16 characters`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return usage(`--webhook-secret-file: cannot read ${file} (${code})`);
  }
})();

const stateDir = values['state-dir'];
// The operator key (create, list, the all-sandbox feed): made on first start, shown that once.
const operator = loadOrCreateOperatorKey(stateDir);
const driver = new NamespaceDriver({ stateDir, isolations: ['namespace', 'gvisor'] });
// The template images, built once per host (layers cached): each step printed as it starts. The agent
// template's too when its runtime can be built here (its runtime comes from npm on the first start);
// without it the control plane still serves, and `sdk template build` says what is missing.
const onStep = (step: string, cached: boolean): void => {
  if (!cached) process.stdout.write(`building template image: ${step}\n`);
};
await driver.prepare(onStep);
if (isolation === 'gvisor') await driver.prepareGvisor(onStep); // runsc, built once per host
await driver.prepare(onStep, ['sdk-agent']).catch((error: unknown) => {
  process.stdout.write(
    `sdk-agent is not built (${error instanceof Error ? error.message : String(error)})\n`,
  );
});
const plane = await ControlPlane.start({
  stateDir,
  operatorKey: operator.key,
  driver,
  warmPool,
  defaultIsolation: isolation,
  ...(gatewayCa === undefined ? {} : { gatewayCa }),
  ...(dnsServers.length === 0 ? {} : { dnsServers }),
  webhooks,
  ...(webhookSecret === undefined ? {} : { webhookSecret }),
  metricsIntervalMs,
});
// The name it listens on is one it answers to; others (the machine's name behind 0.0.0.0) are given.
const server = createControlPlaneServer(plane, {
  allowedHosts: [values.host, ...values['allow-host']],
  ...(previewDomain === undefined ? {} : { previewDomain }),
});
server.listen(port, values.host, () => {
  const host = values.host.includes(':') ? `[${values.host}]` : values.host;
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`control plane on http://${host}:${String(port)}\n`);
  process.stdout.write(
    `inspector on http://${host}:${String(port)}/inspector/ (sign in with the operator key)\n`,
  );
  if (webhooks.length > 0) {
    const secret = webhookSecret === undefined ? webhookSecretFile(stateDir) : values['webhook-secret-file'];
    process.stdout.write(
      `webhooks to ${String(webhooks.length)} destination(s), signed with the secret in ${String(secret)}\n`,
    );
  }
  if (operator.created) {
    process.stdout.write(
      `operator key (give it to the SDK as SDK_API_KEY; shown once, kept in ${operatorKeyFile(stateDir)}): ${operator.key}\n`,
    );
  }
});
const stop = (): void => {
  server.close();
  server.closeAllConnections();
  void plane.close();
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
