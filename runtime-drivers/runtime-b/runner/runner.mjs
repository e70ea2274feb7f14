/**
 * runtime_b's runner: a deepagents graph (LangGraph) run once, on Node 24 (`/opt/agents/node/bin/node
 * /opt/agents/runtime-b/runner.mjs`).
 *
 * Input: the prompt on stdin (read to its end), the configuration in `SDK_AGENT_CONFIG` (JSON,
 * `config.mjs`). Output: NDJSON on stdout, one event per line (`events.mjs`; the contract is in
 * templates/README.md): `session` first, then the run's events, and `error` (a class name and an HTTP
 * status, never a message) before exit 1 on failure; exit 0 on success. Diagnostics go to stderr.
 *
 * Sessions: the graph's thread id is the session id, and a SQLite checkpointer (`node:sqlite`) in
 * `$HOME/.local/share/sdk-runtime-b/checkpoints.db` keeps the thread, so a later run with that id
 * continues it.
 */
import { mkdirSync, existsSync } from 'node:fs';
import { enableCompileCache, registerHooks } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
// Light modules only: the `session` line goes out before LangChain has loaded.
import { parseConfig } from './config.mjs';
import { ConfigError, EntrypointError, EventMapper, errorReport } from './events.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Where the runner keeps its state in the sandbox user's home (0700). */
const STATE_DIR = join(process.env.HOME || homedir(), '.local', 'share', 'sdk-runtime-b');

const DEFAULT_INSTRUCTIONS =
  'You are a coding agent. Complete the task using the tools available: inspect and change files, and ' +
  'run commands. Be concise, and finish with a short summary of what you did.';

/** What every system prompt ends with: how the file tools see the working directory. */
function environmentNote(workdir) {
  return (
    `Your working directory is ${workdir}. Every tool sees the real filesystem: an absolute path is ` +
    `that path, a relative one is under ${workdir}, and ls, glob and grep without a path look in ` +
    `${workdir}. Shell commands (execute) run in ${workdir}.`
  );
}

/** One NDJSON line on stdout (synchronous on a pipe on Linux, so an exit right after loses nothing). */
function emit(event) {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

function log(message) {
  process.stderr.write(`runtime-b: ${message}\n`);
}

/** The environment: no tracing, nothing that redirects a provider package; `rg` on PATH. */
function prepareEnvironment() {
  for (const name of Object.keys(process.env)) {
    if (/^(LANGSMITH_|LANGCHAIN_)/.test(name)) Reflect.deleteProperty(process.env, name);
  }
  const bin = join(HERE, '..', 'bin');
  if (existsSync(join(bin, 'rg'))) process.env.PATH = `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`;
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * An entrypoint's bare imports (`deepagents`, `langchain`, `@langchain/...`) resolve from its own
 * folder first, then from the runner's packages: the same instances the context's objects come from.
 */
function resolveFromRunner() {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      try {
        return nextResolve(specifier, context);
      } catch (error) {
        const bare = !/^(?:\.|\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);
        if (!bare || error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
        return nextResolve(specifier, { ...context, parentURL: import.meta.url });
      }
    },
  });
}

/** The entrypoint's function: `a.b:build` is `build` exported by `<workdir>/a/b.mjs` (or `.js`). */
async function loadEntrypoint(entrypoint, workdir) {
  const [modulePath, exportName] = entrypoint.split(':');
  const base = join(workdir, ...modulePath.split('.'));
  const file = [`${base}.mjs`, `${base}.js`].find((candidate) => existsSync(candidate));
  if (file === undefined)
    throw new EntrypointError(`entrypoint ${entrypoint}: neither ${base}.mjs nor ${base}.js exists`);
  resolveFromRunner();
  let module;
  try {
    module = await import(pathToFileURL(file).href);
  } catch (error) {
    throw new EntrypointError(`entrypoint ${entrypoint}: importing ${file} failed`, { cause: error });
  }
  const build = module[exportName];
  if (typeof build !== 'function')
    throw new EntrypointError(`entrypoint ${entrypoint}: ${file} exports no function ${exportName}`);
  return build;
}

async function main() {
  const started = performance.now();
  prepareEnvironment();
  const stdin = readStdin();
  // Node 24 keeps compiled code of the packages between runs: about a quarter off the start.
  try {
    mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });
    enableCompileCache(join(STATE_DIR, 'compile-cache'));
  } catch {
    // a read-only home: slower, not broken
  }
  let config;
  try {
    config = parseConfig(process.env.SDK_AGENT_CONFIG);
  } catch (error) {
    if (error instanceof ConfigError) log(`configuration: ${error.message}`);
    emit(errorReport(error));
    return 1;
  }
  delete process.env.SDK_AGENT_CONFIG;
  emit({ type: 'session', sessionId: config.sessionId });

  try {
    // The packages (the provider's beside the others) load while the prompt arrives.
    const packages = Promise.all([
      import('deepagents'),
      import('langchain'),
      import('./models.mjs'),
      import('./permissions.mjs'),
      import('./checkpointer.mjs'),
      import('./sandbox-backend.mjs'),
    ]);
    const chatModel = import('./models.mjs').then(({ createChatModel: create }) => create(config.model));
    const [
      [
        deepagents,
        { todoListMiddleware },
        { createChatModel },
        permissions,
        { NodeSqliteSaver },
        { SandboxBackend, workdirDefaults },
      ],
      prompt,
      model,
    ] = await Promise.all([packages, stdin, chatModel]);
    if (prompt.trim() === '') throw new ConfigError('the prompt on stdin is empty');

    const { workdir } = config;
    const backend = await SandboxBackend.open({ workdir });
    if (existsSync(workdir)) process.chdir(workdir);
    const checkpointer = new NodeSqliteSaver(join(STATE_DIR, 'checkpoints.db'));
    const instructions = `${config.instructions ?? DEFAULT_INSTRUCTIONS}\n\n${environmentNote(workdir)}`;
    const checker = permissions.compilePermissions(config.permissions);
    const permissionMiddleware = permissions.createPermissionMiddleware(config.permissions);
    const pathDefaults = workdirDefaults(workdir);
    const subagents = await Promise.all(
      Object.entries(config.subagents).map(async ([name, sub]) => ({
        name,
        description: sub.description,
        systemPrompt: `${sub.instructions || DEFAULT_INSTRUCTIONS}\n\n${environmentNote(workdir)}`,
        ...(sub.model === undefined ? {} : { model: await createChatModel(sub.model) }),
        // Declared subagents do not inherit the main agent's middleware: each gets its permissions.
        middleware: [
          pathDefaults,
          sub.permissions === undefined
            ? permissionMiddleware
            : permissions.createPermissionMiddleware(sub.permissions, 'SdkSubagentPermissions'),
        ],
      })),
    );

    let graph;
    if (config.entrypoint === undefined) {
      graph = deepagents.createDeepAgent({
        model,
        systemPrompt: instructions,
        backend,
        subagents,
        middleware: [
          ...(checker.allows('todowrite') ? [todoListMiddleware()] : []),
          pathDefaults,
          permissionMiddleware,
        ],
        checkpointer,
      });
    } else {
      const build = await loadEntrypoint(config.entrypoint, workdir);
      const context = {
        model,
        instructions,
        subagents,
        backend,
        permissionMiddleware,
        pathDefaults,
        workdir,
        checkpointer,
      };
      try {
        graph = await build(context);
      } catch (error) {
        throw new EntrypointError(`entrypoint ${config.entrypoint}: the build function failed`, {
          cause: error,
        });
      }
      if (typeof graph?.streamEvents !== 'function') {
        throw new EntrypointError(
          `entrypoint ${config.entrypoint}: the build function returned no compiled graph`,
        );
      }
      // A graph compiled without a checkpointer still keeps its session.
      if (!graph.checkpointer) graph.checkpointer = checkpointer;
    }

    log(`ready after ${Math.round(performance.now() - started)} ms`);
    const mapper = new EventMapper({ emit, reasoning: config.reasoning });
    const events = graph.streamEvents(
      { messages: [{ role: 'user', content: prompt }] },
      { version: 'v2', configurable: { thread_id: config.sessionId }, recursionLimit: 10_000 },
    );
    for await (const event of events) mapper.handle(event);
    checkpointer.close();
    return 0;
  } catch (error) {
    const report = errorReport(error);
    const detail = error instanceof Error ? error.message : String(error);
    log(
      `failed: ${report.name}${report.statusCode === null ? '' : ` (status ${report.statusCode})`}: ${detail.slice(0, 2000)}`,
    );
    emit(report);
    return 1;
  }
}

/**
 * `runner.mjs --check` (the template build runs it in the built folder): every package the runner uses
 * loads, each provider's model is made, the checkpointer opens, and nothing resolves outside this
 * folder (the bound /opt/agents must be self-contained). Prints `ok` or what escaped.
 */
async function check() {
  const escaped = new Set();
  const inside = pathToFileURL(`${HERE}/`).href;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      if (resolved.url.startsWith('file:') && !resolved.url.startsWith(inside)) escaped.add(resolved.url);
      return resolved;
    },
  });
  const { createChatModel, PROVIDERS } = await import('./models.mjs');
  await Promise.all([
    import('deepagents'),
    import('langchain'),
    import('./permissions.mjs'),
    import('./events.mjs'),
    import('./config.mjs'),
  ]);
  for (const provider of PROVIDERS) {
    await createChatModel({ provider, id: 'check', baseURL: 'http://127.0.0.1:9/v1', region: 'us-east-1' });
  }
  const { NodeSqliteSaver } = await import('./checkpointer.mjs');
  new NodeSqliteSaver(':memory:').close();
  if (escaped.size > 0) {
    log(`resolved outside ${HERE}: ${[...escaped].join(' ')}`);
    return 1;
  }
  process.stdout.write('ok\n');
  return 0;
}

// Exit explicitly: a child process some tool started (rg's spawn timeout) would keep Node alive.
process.exit(await (process.argv[2] === '--check' ? check() : main()));
