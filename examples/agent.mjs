// An agent in a sandbox: a coding agent (runtime_a, opencode, from the `sdk-agent` template) fixes a
// typo in a file, inside a sandbox with closed egress that reaches its model only through a gateway
// route. The route adds the API key on the way out, so the agent uses the key without ever holding it.
// Its events are printed as they arrive, then the file and the result. Run as root:
// `npm run example:agent`.
//
// The model is a real vendor when `SDK_PRESET_CATALOGUE` names a catalogue with real hosts and the
// local secret store (`SDK_SECRET_STORE_FILE`, else ~/.sdk/secrets.json) holds `vendor-b-key`: the
// vendor_b preset then serves model `SDK_EXAMPLE_MODEL`. Otherwise it is a local scripted model
// (./scripted-model.mjs) that answers with one tool call and then a sentence.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AgentModel,
  AgentSpec,
  Sandbox,
  SecretCache,
  SecretStore,
  compatibleGateway,
  vendorBGateway,
} from 'sdk';
import { startEmbeddedControlPlane } from 'sdk/control-plane';
import { startScriptedModel } from './scripted-model.mjs';

const step = (text) => console.log(`\n== ${text}`);
let startedAt = performance.now();
const at = () => `+${((performance.now() - startedAt) / 1000).toFixed(2)}s`.padStart(7);
const PROMPT =
  'greeting.txt has a typo. Fix it with one shell command, then say in one sentence what changed.';

// What this example makes is undone in reverse order at the end: on success, on failure and on Ctrl-C.
const undo = [];
let cleaning;
const cleanUp = () =>
  (cleaning ??= (async () => {
    for (const action of undo.reverse()) await action().catch((e) => console.error('cleanup:', e.message));
  })());
process.once('SIGINT', () => {
  console.log('\ninterrupted: cleaning up');
  void cleanUp().then(() => process.exit(130));
});

try {
  await main();
} finally {
  await cleanUp();
}

async function main() {
  step('the model');
  const model = await chooseModel();
  console.log(model.description);

  step('an embedded control plane and an sdk-agent sandbox with closed egress');
  const embedded = await startEmbeddedControlPlane(model.gatewayCa ? { gatewayCa: model.gatewayCa } : {});
  undo.push(() => embedded.close());
  console.log(`inspector: ${embedded.inspectorUrl} (operator key: SDK_API_KEY)`);
  const sbx = await Sandbox.create({
    template: 'sdk-agent', // /opt/agents holds the runtime; 1 GiB of memory by default
    allowInternetAccess: false,
    controlPlaneUrl: embedded.url,
    gateways: { llm: model.gateway }, // the route's definition names the secret, never its value
    secretCache: new SecretCache({ store: model.store }),
  });
  undo.push(() => sbx.kill());
  console.log(`sandbox ${sbx.sandboxId}: route llm at ${sbx.gateways.get('llm').url} (inside the sandbox)`);
  await sbx.commands.run("printf 'Hello, wrold!\\n' > greeting.txt"); // in /home/user, the agent's workdir
  console.log('greeting.txt: Hello, wrold!');

  step(`the agent, its events as they arrive: "${PROMPT}"`);
  const spec = new AgentSpec({ model: model.agentModel });
  startedAt = performance.now();
  const stream = sbx.agent.stream(PROMPT, { spec });
  for await (const event of stream) console.log(`${at()}  ${describe(event)}`);
  const result = await stream.result(); // an AgentError with its reason if the agent failed

  step('the file after the agent');
  process.stdout.write((await sbx.commands.run('cat greeting.txt')).stdout);

  step('the result');
  console.log(`text:       ${result.text}`);
  console.log(`steps:      ${result.steps}, tool calls: ${result.toolCalls.map((c) => c.name).join(', ')}`);
  console.log(
    `tokens:     ${result.usage.input} in, ${result.usage.output} out, ${result.usage.total} total`,
  );
  console.log(`session:    ${result.sessionId} (give it as sessionId to continue the conversation)`);
  console.log(`exit code:  ${result.exitCode}`);
}

/** One event, on one line (a tool call's output on the next). */
function describe(event) {
  switch (event.type) {
    case 'step_started':
      return 'step_started';
    case 'text':
      return `text: ${event.text}`;
    case 'tool_call':
      return `tool_call ${event.name} ${event.status}: ${JSON.stringify(event.input)}\n${' '.repeat(9)}output: ${event.output.trim()}`;
    case 'step_finished':
      return `step_finished: ${event.usage.input} tokens in, ${event.usage.output} out`;
    case 'agent_failed':
      return `agent_failed: ${event.reason}`;
    default:
      return event.type; // done
  }
}

/** A real vendor when one is configured; the local scripted model otherwise. */
async function chooseModel() {
  const store = new SecretStore(); // the local secret store
  const hasKey = await store.read('vendor-b-key').then(
    () => true,
    () => false,
  );
  if (process.env.SDK_PRESET_CATALOGUE && hasKey) {
    const id = process.env.SDK_EXAMPLE_MODEL;
    if (!id) throw new Error('a vendor is configured: set SDK_EXAMPLE_MODEL to the vendor_b model to use');
    return {
      description: `vendor_b model ${id}, host from ${process.env.SDK_PRESET_CATALOGUE}, key vendor-b-key`,
      store,
      gateway: vendorBGateway('vendor-b-key'),
      agentModel: new AgentModel({ provider: 'vendor_b', id, gateway: 'llm' }),
    };
  }

  // The local scripted model: first a bash call that fixes the file, then, once the conversation
  // ends with that call's result, a sentence. Its key goes into a secret store of this example's own.
  const key = `sk-example-${randomBytes(16).toString('hex')}`;
  const server = await startScriptedModel({
    key,
    respond: (messages) =>
      messages.at(-1)?.role === 'tool'
        ? { text: 'Fixed the typo in greeting.txt: "wrold" is now "world".' }
        : {
            tool: {
              name: 'bash',
              arguments: {
                command: "sed -i 's/wrold/world/' greeting.txt && cat greeting.txt",
                description: 'Fix the typo',
              },
            },
          },
    onRequest: ({ number, path, keyInjected }) =>
      console.log(
        `${at()}  (model server) request ${number} to ${path}: key ${keyInjected ? 'injected' : 'MISSING'}`,
      ),
  });
  undo.push(server.stop);
  const dir = mkdtempSync(join(tmpdir(), 'sdk-example-secrets-'));
  undo.push(async () => rmSync(dir, { recursive: true, force: true }));
  const localStore = new SecretStore({ file: join(dir, 'secrets.json') });
  await localStore.create('model-key', `Bearer ${key}`); // the header's whole value
  return {
    description:
      `no vendor configured (SDK_PRESET_CATALOGUE and vendor-b-key in the local secret store): ` +
      `the local scripted model at ${server.origin} (chat completions, its own CA)`,
    store: localStore,
    gatewayCa: server.caPem,
    gateway: compatibleGateway('model-key', { upstream: server.origin, basePath: '/v1' }),
    agentModel: new AgentModel({
      provider: 'compatible',
      id: 'scripted-model',
      gateway: 'llm',
      basePath: '/v1',
    }),
  };
}
