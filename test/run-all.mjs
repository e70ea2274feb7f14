// The test command (`npm test`): the build, the agents' runtime, the template images, typecheck and
// lint, the vitest projects and the Python suite, each started as soon as what it needs is there. The
// suite keeps both cores of a machine of this kind busy throughout: most of a vitest integration
// file's time and the Python suite's is spent waiting on sandboxes and runtimes, so jobs run side by
// side rather than taking turns (test/README.md).
//
// Each job's output is kept and printed whole, in the order of JOBS, once it and the jobs before it
// have ended (the Python suite last, so a passing run ends with pytest's closing line). A job whose
// prerequisite failed does not run; the jobs that failed are named on the last line and the exit code
// is 1.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

// Sandboxes' resolvers ask a server on their own loopback, where none listens: no test's sandbox ever
// sends a DNS question to the host's server (tests talk to loopback and their own namespaces only).
process.env.SDK_DNS_SERVERS ??= '127.0.0.1:9';

const BUILD = { name: 'build', command: 'npm', args: ['run', '--silent', 'build'], after: [] };
const AGENTS = {
  name: 'agents runtime',
  command: 'npm',
  args: ['run', '--silent', 'template:agent'],
  after: [],
};
/**
 * The template images every sandbox of the tests stands on, and runsc for the gVisor ones: built once
 * (cached on the host), before the jobs that use them.
 */
const IMAGES = { name: 'template images and runsc', run: prepareImages, after: [BUILD, AGENTS] };
/** After the build: the tests import the package by its name, whose types are the built ones. */
const CHECKS = {
  name: 'typecheck and lint',
  command: 'npm',
  args: ['run', '--silent', 'checks'],
  after: [BUILD],
};
const VITEST = {
  name: 'vitest (unit, property, integration)',
  command: 'npx',
  args: ['vitest', 'run'],
  after: [IMAGES],
};
/** After the checks: the two of them take about as long as vitest beside them. */
const PYTHON = {
  name: 'Python SDK (mypy, pytest)',
  command: 'npm',
  args: ['run', '--silent', 'test:python'],
  after: [IMAGES, CHECKS],
};
const JOBS = [BUILD, AGENTS, IMAGES, CHECKS, VITEST, PYTHON];

/** Runs `command` and keeps what it prints. */
function spawnJob(command, args) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks = [];
  child.stdout.on('data', (chunk) => chunks.push(chunk));
  child.stderr.on('data', (chunk) => chunks.push(chunk));
  return new Promise((resolve) => {
    child.on('error', (error) => chunks.push(Buffer.from(`${String(error)}\n`)));
    child.on('close', (code, signal) => resolve({ ok: code === 0, code: code ?? signal, chunks }));
  });
}

/**
 * `sdk serve --isolation gvisor` builds the template images and runsc as it starts (from Debian's
 * packages, npm and the Go module proxy on a host's first run, cached after); it is stopped once it
 * listens.
 */
async function prepareImages() {
  // On a fresh machine first the Debian packages the images and sandboxes need (apt-get when missing).
  const packages = await spawnJob(process.execPath, [
    '--input-type=module',
    '-e',
    "(await import('./dist/sandbox-drivers/namespace/host-requirements.js')).ensureHostPackages();",
  ]);
  if (!packages.ok) return packages;
  const stateDir = mkdtempSync(join(tmpdir(), 'sdk-test-images-'));
  const chunks = [...packages.chunks];
  try {
    const serve = spawn(
      process.execPath,
      ['dist/cli/sdk.js', 'serve', '--port', '0', '--state-dir', stateDir, '--isolation', 'gvisor'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    serve.stderr.on('data', (chunk) => chunks.push(chunk));
    const exited = once(serve, 'exit');
    for await (const line of createInterface({ input: serve.stdout })) {
      if (/^(building template image|sdk-agent is not built)/.test(line)) {
        chunks.push(Buffer.from(`${line}\n`));
      }
      if (line.startsWith('control plane on ')) break;
    }
    serve.kill('SIGTERM');
    const [code, signal] = await exited;
    return { ok: code === 0 || signal === 'SIGTERM', code: code ?? signal, chunks };
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const results = new Map();
for (const job of JOBS) {
  const started = (async () => {
    const before = await Promise.all(job.after.map((other) => results.get(other)));
    if (before.some((result) => !result.ok)) return { ok: false, code: 'not run', chunks: [], seconds: 0 };
    const start = Date.now();
    const result = await (job.run === undefined ? spawnJob(job.command, job.args) : job.run());
    return { ...result, seconds: (Date.now() - start) / 1000 };
  })();
  results.set(job, started);
}
const failed = [];
for (const job of JOBS) {
  const result = await results.get(job);
  const outcome = result.ok ? 'passed' : `FAILED (${String(result.code)})`;
  process.stdout.write(`\n=== ${job.name}: ${outcome} in ${result.seconds.toFixed(0)} s ===\n`);
  for (const chunk of result.chunks) process.stdout.write(chunk);
  if (!result.ok) failed.push(job.name);
}
if (failed.length > 0) {
  process.stdout.write(`\nnpm test: failed: ${failed.join(', ')}\n`);
  process.exitCode = 1;
}
