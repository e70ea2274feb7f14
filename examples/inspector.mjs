// The inspector: the embedded control plane with a few sandboxes doing things, and the page that shows
// them live. One sandbox runs commands and is paused, one keeps running, and one runs a coding agent
// (runtime_a, opencode) against a local scripted model through a gateway route; then the page's URL is
// printed and everything keeps serving until Ctrl-C, which kills what this example made. Run as root:
// `npm run example:inspector`, open the URL and sign in with the operator key (the embedded default's
// key file, /var/lib/sdk/operator-key, or SDK_API_KEY when set). `--exit` stops once all is set up.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentModel, AgentSpec, Sandbox, SecretCache, SecretStore, compatibleGateway } from 'sdk';
import { startEmbeddedControlPlane } from 'sdk/control-plane';
import { startScriptedModel } from './scripted-model.mjs';

const step = (text) => console.log(`== ${text}`);

// What this example makes is undone in reverse order at the end: on Ctrl-C, on failure, with --exit.
const undo = [];
let cleaning;
const cleanUp = () =>
  (cleaning ??= (async () => {
    for (const action of undo.reverse()) await action().catch((e) => console.error('cleanup:', e.message));
  })());

try {
  await main();
  if (process.argv.includes('--exit')) await cleanUp();
  else {
    console.log('\nserving until Ctrl-C (the sandboxes above are killed then)');
    await new Promise((resolve) => process.once('SIGINT', resolve));
    console.log('\ninterrupted: cleaning up');
    await cleanUp();
  }
} catch (error) {
  await cleanUp();
  throw error;
}

async function main() {
  step('a local scripted model (chat completions, its own CA, in a namespace this example makes)');
  const key = `sk-example-${randomBytes(16).toString('hex')}`;
  const model = await startScriptedModel({
    key,
    respond: (messages) =>
      messages.at(-1)?.role === 'tool'
        ? { text: 'Counted the files: the workspace holds notes.txt and todo.txt.' }
        : { tool: { name: 'bash', arguments: { command: 'ls', description: 'List the files' } } },
  });
  undo.push(model.stop);
  const dir = mkdtempSync(join(tmpdir(), 'sdk-example-secrets-'));
  undo.push(async () => rmSync(dir, { recursive: true, force: true }));
  const store = new SecretStore({ file: join(dir, 'secrets.json') });
  await store.create('model-key', `Bearer ${key}`);

  const embedded = await startEmbeddedControlPlane({ gatewayCa: model.caPem });
  undo.push(() => embedded.close());
  const create = async (options) => {
    const sbx = await Sandbox.create({ controlPlaneUrl: embedded.url, ...options });
    undo.push(() => sbx.kill());
    return sbx;
  };

  step('a sandbox that runs commands, then is paused');
  const paused = await create({ template: 'sdk-base-caps', allowInternetAccess: false });
  await paused.commands.run('echo hello > notes.txt && wc -c notes.txt');
  await paused.commands.run('false').catch(() => undefined); // an exit code that is not 0
  await paused.pause();
  console.log(`  ${paused.sandboxId}: paused`);

  step('a sandbox that keeps running');
  const running = await create({ template: 'sdk-base' });
  await running.commands.run('uname -a');
  console.log(`  ${running.sandboxId}: running`);

  step('a sandbox whose agent lists the workspace through gateway route llm');
  const agent = await create({
    template: 'sdk-agent',
    allowInternetAccess: false,
    gateways: { llm: compatibleGateway('model-key', { upstream: model.origin, basePath: '/v1' }) },
    secretCache: new SecretCache({ store }),
  });
  await agent.commands.run('touch notes.txt todo.txt');
  const spec = new AgentSpec({
    model: new AgentModel({ provider: 'compatible', id: 'scripted-model', gateway: 'llm', basePath: '/v1' }),
  });
  const result = await agent.agent.run('How many files are in the workspace?', { spec });
  console.log(`  ${agent.sandboxId}: agent answered "${result.text}" in ${result.steps} steps`);

  console.log(`\ninspector: ${embedded.inspectorUrl}`);
  console.log('sign in with the operator key: SDK_API_KEY, or the file /var/lib/sdk/operator-key');
}
