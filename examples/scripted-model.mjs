// A scripted model for examples/agent.mjs: a small server speaking the OpenAI chat-completions API
// (streamed as server-sent events, with usage), reachable from a sandbox with closed egress.
//
// A gateway forwards only to an https upstream outside the host, so the server needs three things:
//   - a certificate from a CA of its own, made here with `openssl` (the control plane trusts that CA
//     through its `gatewayCa` option);
//   - a network namespace with a veth pair whose addresses come from 198.18.0.0/15, the range set aside
//     for benchmarking (RFC 2544): sandboxes may reach the namespace, never the host's own addresses;
//   - a TCP forwarder inside that namespace, piping https://<namespace address>:8443 to the server, which
//     listens in this process on the host end of the pair (so this process sees every request).
//
// Run as a program (`node scripted-model.mjs forward <listenHost> <listenPort> <targetHost> <targetPort>`)
// this file is that forwarder.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createConnection, createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const THIS_FILE = fileURLToPath(import.meta.url);
const sh = (command, ...args) =>
  execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/**
 * Starts the scripted model. `respond(messages)` chooses each answer from the conversation so far:
 * `{ text }`, or `{ tool: { name, arguments } }` for one tool call. Requests must carry
 * `authorization: Bearer <key>` (which only the gateway can add); `onRequest` hears of each one.
 * Returns `{ origin, caPem, stop }`; `stop()` removes everything it made and may be called twice.
 */
export async function startScriptedModel({ key, respond, onRequest = () => undefined }) {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-example-model-'));
  const names = { ns: `sdk-example-agent-${process.pid}`, host: `sdkag${process.pid % 1e5}h` };
  let server;
  let forwarder;
  let namespaceMade = false;
  let stopped;
  const stop = () =>
    (stopped ??= (async () => {
      if (forwarder !== undefined && forwarder.exitCode === null && forwarder.signalCode === null) {
        forwarder.kill('SIGTERM');
        await once(forwarder, 'exit');
      }
      server?.closeAllConnections();
      server?.close();
      if (namespaceMade) sh('ip', 'netns', 'del', names.ns); // takes the veth pair with it
      rmSync(dir, { recursive: true, force: true });
    })());
  try {
    const [hostAddress, nsAddress] = freeSubnet();
    const ca = makeCertificate(dir, nsAddress);

    sh('ip', 'netns', 'add', names.ns);
    namespaceMade = true;
    const nsVeth = `${names.host.slice(0, -1)}n`;
    sh('ip', 'link', 'add', names.host, 'type', 'veth', 'peer', 'name', nsVeth, 'netns', names.ns);
    sh('ip', 'addr', 'add', `${hostAddress}/30`, 'dev', names.host);
    sh('ip', 'link', 'set', names.host, 'up');
    sh('ip', '-n', names.ns, 'addr', 'add', `${nsAddress}/30`, 'dev', nsVeth);
    sh('ip', '-n', names.ns, 'link', 'set', nsVeth, 'up');

    let count = 0;
    server = createHttpsServer({ cert: ca.cert, key: ca.key }, (req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        count += 1;
        const keyInjected = req.headers.authorization === `Bearer ${key}`;
        onRequest({ number: count, path: req.url, keyInjected });
        if (!keyInjected) return sendJson(res, 401, errorBody('invalid api key', 'invalid_api_key'));
        if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
          return sendJson(res, 404, errorBody(`no model endpoint at ${req.url}`, null));
        }
        let body;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return sendJson(res, 400, errorBody('the body is not JSON', null));
        }
        const turn = respond(body.messages ?? []);
        if (body.stream === true) sendStream(res, body, turn);
        else sendJson(res, 200, completion(body, turn));
      });
    });
    server.listen(0, hostAddress);
    await once(server, 'listening');

    forwarder = spawn(
      'ip',
      [
        'netns',
        'exec',
        names.ns,
        process.execPath,
        THIS_FILE,
        'forward',
        nsAddress,
        '8443',
        hostAddress,
        String(server.address().port),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise((resolve, reject) => {
      forwarder.once('exit', (code) => reject(new Error(`the forwarder exited (${code})`)));
      forwarder.stdout.once('data', resolve); // "ready"
    });
    return { origin: `https://${nsAddress}:8443`, caPem: ca.pem, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A host/namespace address pair from a /24 of 198.18.0.0/15 that no interface uses yet. */
function freeSubnet() {
  const used = sh('ip', '-4', '-o', 'addr', 'show');
  for (let i = 0; i < 150; i++) {
    const prefix = `198.18.${100 + ((process.pid + i) % 150)}.`;
    if (!used.includes(` ${prefix}`)) return [`${prefix}1`, `${prefix}2`];
  }
  throw new Error('no free /30 in 198.18.0.0/15');
}

/** A CA and a certificate for `address` signed by it (P-256, valid one day), as files in `dir`. */
function makeCertificate(dir, address) {
  const file = (name) => join(dir, name);
  const openssl = (args) => sh('openssl', ...args.split(' ')); // no argument holds a space
  const ec = '-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes';
  openssl(
    `req -x509 ${ec} -days 1 -subj /CN=sdk-example-CA -keyout ${file('ca.key')} -out ${file('ca.pem')}`,
  );
  openssl(`req ${ec} -subj /CN=model -keyout ${file('model.key')} -out ${file('model.csr')}`);
  writeFileSync(file('ext.cnf'), `subjectAltName=IP:${address}\n`);
  openssl(
    `x509 -req -in ${file('model.csr')} -CA ${file('ca.pem')} -CAkey ${file('ca.key')} -CAcreateserial ` +
      `-days 1 -extfile ${file('ext.cnf')} -out ${file('model.pem')}`,
  );
  return {
    pem: readFileSync(file('ca.pem'), 'utf8'),
    cert: readFileSync(file('model.pem')),
    key: readFileSync(file('model.key')),
  };
}

// The chat-completions wire format.

const USAGE = {
  prompt_tokens: 120,
  completion_tokens: 20,
  total_tokens: 140,
  prompt_tokens_details: { cached_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0 },
};
let nextId = 0;
const newId = (prefix) => `${prefix}${process.pid.toString(36)}${(++nextId).toString(36).padStart(4, '0')}`;
const errorBody = (message, code) => ({
  error: { message, type: 'invalid_request_error', param: null, code },
});

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The answer without streaming: one `chat.completion`. */
function completion(request, turn) {
  const message = turn.tool
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: newId('call_'),
            type: 'function',
            function: { name: turn.tool.name, arguments: JSON.stringify(turn.tool.arguments) },
          },
        ],
      }
    : { role: 'assistant', content: turn.text };
  return {
    id: newId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: turn.tool ? 'tool_calls' : 'stop' }],
    usage: USAGE,
  };
}

/**
 * The streamed answer: `chat.completion.chunk` events as `data: {...}` lines, the text in word-sized
 * pieces (or the tool call's arguments in slices), a chunk with the finish reason, a last chunk with
 * empty `choices` carrying the usage when `stream_options.include_usage` asked for it, then `[DONE]`.
 */
function sendStream(res, request, turn) {
  const includeUsage = request.stream_options?.include_usage === true;
  const base = {
    id: newId('chatcmpl-'),
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
  };
  const chunk = (delta, finishReason = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const chunks = [];
  if (turn.tool) {
    const args = JSON.stringify(turn.tool.arguments);
    const call = {
      index: 0,
      id: newId('call_'),
      type: 'function',
      function: { name: turn.tool.name, arguments: '' },
    };
    chunks.push(chunk({ role: 'assistant', content: null, tool_calls: [call] }));
    for (let i = 0; i < args.length; i += 16) {
      chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + 16) } }] }));
    }
    chunks.push(chunk({}, 'tool_calls'));
  } else {
    chunks.push(chunk({ role: 'assistant', content: '' }));
    for (const piece of turn.text.split(/(?<=\s)(?=\S)/)) chunks.push(chunk({ content: piece }));
    chunks.push(chunk({}, 'stop'));
  }
  if (includeUsage) chunks.push({ ...base, choices: [], usage: USAGE });
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  for (const data of chunks) res.write(`data: ${JSON.stringify(data)}\n\n`);
  res.end('data: [DONE]\n\n');
}

// The forwarder, when this file runs as a program inside the namespace.
if (process.argv[1] === THIS_FILE && process.argv[2] === 'forward') {
  const [listenHost, listenPort, targetHost, targetPort] = process.argv.slice(3);
  const listener = createTcpServer((inbound) => {
    const outbound = createConnection({ host: targetHost, port: Number(targetPort) });
    inbound.pipe(outbound).pipe(inbound);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
  });
  listener.listen(Number(listenPort), listenHost, () => process.stdout.write('ready\n'));
  process.on('SIGTERM', () => process.exit(0));
}
