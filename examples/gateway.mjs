// The secret gateway on the embedded default: a local HTTPS model server (its own CA, in a network
// namespace this example makes, speaking vendor_b's messages API), a sandbox with closed egress and a
// preset gateway to it, a request from sandbox code that succeeds through the gateway, and proof that
// the key cannot be read from inside. Run as root: `npm run example:gateway`.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'sdk-example-'));
const sh = (command, ...args) => execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
const step = (text) => console.log(`\n== ${text}`);
const KEY = 'sk-example-vendor-b-0123456789';
const [host, model] = ['198.18.77.1', '198.18.77.2']; // a test network this example owns

// 1. A model server with its own CA, in its own namespace (the gateway refuses loopback upstreams).
step('a local HTTPS model server with its own CA');
const file = (name) => join(dir, name);
const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
sh(
  'openssl',
  'req',
  '-x509',
  ...ec,
  '-days',
  '1',
  '-subj',
  '/CN=example CA',
  '-keyout',
  file('ca.key'),
  '-out',
  file('ca.pem'),
);
sh('openssl', 'req', ...ec, '-subj', '/CN=model', '-keyout', file('model.key'), '-out', file('model.csr'));
writeFileSync(file('ext.cnf'), `subjectAltName=IP:${model}\n`);
sh(
  'openssl',
  'x509',
  '-req',
  '-in',
  file('model.csr'),
  '-CA',
  file('ca.pem'),
  '-CAkey',
  file('ca.key'),
  '-CAcreateserial',
  '-days',
  '1',
  '-extfile',
  file('ext.cnf'),
  '-out',
  file('model.pem'),
);
sh('ip', 'netns', 'add', 'sdk-example-model');
sh('ip', 'link', 'add', 'sdkexh', 'type', 'veth', 'peer', 'name', 'sdkexn', 'netns', 'sdk-example-model');
sh('ip', 'addr', 'add', `${host}/30`, 'dev', 'sdkexh');
sh('ip', 'link', 'set', 'sdkexh', 'up');
sh('ip', '-n', 'sdk-example-model', 'addr', 'add', `${model}/30`, 'dev', 'sdkexn');
sh('ip', '-n', 'sdk-example-model', 'link', 'set', 'sdkexn', 'up');
const serverCode = `
  const https = require('node:https'); const fs = require('node:fs');
  https.createServer({ cert: fs.readFileSync('${file('model.pem')}'), key: fs.readFileSync('${file('model.key')}') }, (req, res) => {
    req.resume();
    const ok = req.url === '/v1/messages' && req.headers['x-api-key'] === process.env.KEY;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok
      ? { id: 'msg_1', type: 'message', role: 'assistant', model: 'model-1', content: [{ type: 'text', text: 'Hello from the model.' }], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 4 } }
      : { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }));
  }).listen(8443, '${model}', () => console.log('ready'));`;
const server = spawn('ip', ['netns', 'exec', 'sdk-example-model', process.execPath, '-e', serverCode], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, KEY },
});
await once(server.stdout, 'data');
console.log(`model server on https://${model}:8443 (vendor_b messages API)`);

// 2. Point the vendor_b preset at it, then load the SDK.
const catalogue = JSON.parse(readFileSync(new URL('../presets/catalogue.json', import.meta.url), 'utf8'));
catalogue.presets.vendor_b.upstream = `https://${model}:8443`;
writeFileSync(file('catalogue.json'), JSON.stringify(catalogue));
process.env.SDK_PRESET_CATALOGUE = file('catalogue.json');
const { Sandbox, SecretCache, SecretStore, vendorBGateway } = await import('sdk');
const { startEmbeddedControlPlane } = await import('sdk/control-plane');

const embedded = await startEmbeddedControlPlane({ gatewayCa: readFileSync(file('ca.pem'), 'utf8') });
console.log(`inspector: ${embedded.inspectorUrl} (operator key: SDK_API_KEY)`);
let sbx;
try {
  step('the key goes into a secret store the caller owns; the sandbox gets a route, never the value');
  const store = new SecretStore({ file: file('secrets.json') });
  await store.create('vendor-b-key', KEY);
  sbx = await Sandbox.create({
    template: 'sdk-base-caps',
    allowInternetAccess: false,
    controlPlaneUrl: embedded.url,
    gateways: { llm: vendorBGateway('vendor-b-key') },
    secretCache: new SecretCache({ store }),
  });
  const route = sbx.gateways.get('llm');
  console.log(`sandbox ${sbx.sandboxId}: route llm at ${route.url} (inside the sandbox)`);

  const post = (url) =>
    `node -e "fetch('${url}/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then(async (r) => console.log(r.status, await r.text()), (e) => console.log('failed:', e.cause?.code ?? e.message))"`;
  step('sandbox code calls the model through the gateway (it sends no key)');
  console.log((await sbx.commands.run(post(route.url))).stdout.trim());

  step('sandbox code calls the model directly: closed egress');
  console.log((await sbx.commands.run(post(`https://${model}:8443`))).stdout.trim());

  step('sandbox code looks for the key: environment, processes, command lines, files');
  const pattern = Buffer.from(KEY).toString('base64');
  const search = await sbx.commands.run(
    `echo ${pattern} | base64 -d > /tmp/.p; { env; ps -eo args; cat /proc/[0-9]*/cmdline /proc/[0-9]*/environ; } 2>/dev/null | grep -a -c -F -f /tmp/.p; grep -rs -l -F -f /tmp/.p /home /tmp /run /var /etc --exclude=.p | wc -l`,
  );
  const [inProcesses, inFiles] = search.stdout.trim().split('\n');
  console.log(`occurrences in env/processes: ${inProcesses}; files holding it: ${inFiles}`);
} finally {
  await sbx?.kill();
  await embedded.close();
  server.kill();
  sh('ip', 'netns', 'del', 'sdk-example-model');
  rmSync(dir, { recursive: true, force: true });
}
