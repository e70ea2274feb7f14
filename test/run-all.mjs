// The test command's second half (`npm test` runs it after the build and the agents' runtime): the
// template images built once, then the checks (typecheck, lint) followed by the Python suite, beside
// the vitest projects. Most of a vitest integration file's time and the Python suite's is spent waiting
// on sandboxes and runtimes, so the two lanes share the machine's cores instead of taking turns.
//
// Each job's output is kept and printed whole, in PRINT_ORDER, once it and the jobs before it have
// ended (the Python suite last, so a passing run ends with pytest's closing line); a job that failed is
// named on the last line and the exit code is 1.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const CHECKS = { name: 'typecheck and lint', command: 'npm', args: ['run', '--silent', 'checks'] };
const VITEST = { name: 'vitest (unit, property, integration)', command: 'npx', args: ['vitest', 'run'] };
const PYTHON = {
  name: 'Python SDK (mypy, pytest)',
  command: 'npm',
  args: ['run', '--silent', 'test:python'],
};

/** Lanes run side by side, the jobs of one lane one after another; output is printed in this order. */
const LANES = [[CHECKS, PYTHON], [VITEST]];
const PRINT_ORDER = [CHECKS, VITEST, PYTHON];

function run({ name, command, args }) {
  const started = Date.now();
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks = [];
  child.stdout.on('data', (chunk) => chunks.push(chunk));
  child.stderr.on('data', (chunk) => chunks.push(chunk));
  return new Promise((resolve) => {
    child.on('error', (error) => chunks.push(Buffer.from(`${String(error)}\n`)));
    child.on('close', (code, signal) =>
      resolve({ name, ok: code === 0, code: code ?? signal, seconds: (Date.now() - started) / 1000, chunks }),
    );
  });
}

/**
 * The template images the vitest files and the Python suite all stand on, built once before they
 * start (on a host's first run from Debian's packages and npm, cached after): `sdk serve` builds them
 * as it starts, and is stopped once it listens.
 */
async function prepareImages() {
  const stateDir = mkdtempSync(join(tmpdir(), 'sdk-test-images-'));
  try {
    const serve = spawn(
      process.execPath,
      ['dist/cli/sdk.js', 'serve', '--port', '0', '--state-dir', stateDir],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = once(serve, 'exit');
    for await (const line of createInterface({ input: serve.stdout })) {
      if (line.startsWith('building template image') || line.startsWith('sdk-agent is not built')) {
        process.stdout.write(`${line}\n`);
      }
      if (line.startsWith('control plane on ')) break;
    }
    serve.kill('SIGTERM');
    const [code, signal] = await exited;
    if (code !== 0 && signal !== 'SIGTERM') throw new Error(`sdk serve ended with ${String(code ?? signal)}`);
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await prepareImages();
const results = new Map();
for (const lane of LANES) {
  let previous = Promise.resolve();
  for (const job of lane) {
    previous = previous.then(() => run(job));
    results.set(job, previous);
  }
}
const failed = [];
for (const job of PRINT_ORDER) {
  const result = await results.get(job);
  process.stdout.write(
    `\n=== ${result.name}: ${result.ok ? 'passed' : `FAILED (${String(result.code)})`} in ${result.seconds.toFixed(0)} s ===\n`,
  );
  for (const chunk of result.chunks) process.stdout.write(chunk);
  if (!result.ok) failed.push(result.name);
}
if (failed.length > 0) {
  process.stdout.write(`\nnpm test: failed: ${failed.join(', ')}\n`);
  process.exitCode = 1;
}
