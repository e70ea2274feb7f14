/**
 * The "done when": a program written for the E2B SDK runs against a local `sdk serve` (a real
 * child process) after changing only its import (`'e2b'` → `'sdk/compat/e2b'`, the package's own
 * export, resolved as a user's program resolves it) and the environment that points it at the server
 * (`SDK_CONTROL_PLANE_URL` and `SDK_API_KEY`). Also the reconnect from another
 * process: by id, with the sandbox's access token in `SDK_ACCESS_TOKEN`.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../../../sdk/compat/e2b/index.js';
import { freePort } from '../../support/loopback.js';
import { TEST_OPERATOR_KEY, serveControlPlane, stateFolder } from '../support/control-plane.js';

const run = promisify(execFile);
/** The package root: a program there imports `sdk/compat/e2b` as the package's own export. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** E2B's quickstart, with only the import changed. */
const QUICKSTART = `
import { Sandbox, CommandExitError } from 'sdk/compat/e2b';

const sbx = await Sandbox.create();
const hello = await sbx.commands.run('echo "Hello from E2B code"');
await sbx.files.write('/home/user/hello.txt', hello.stdout);
const content = await sbx.files.read('/home/user/hello.txt');
const files = (await sbx.files.list('/home/user')).map((entry) => entry.name);
let exitCode;
try {
  await sbx.commands.run('exit 7');
} catch (error) {
  if (error instanceof CommandExitError) exitCode = error.exitCode;
}
await sbx.kill();
console.log(JSON.stringify({ content, files, exitCode, running: await sbx.isRunning() }));
`;

/** Reconnects to a sandbox made elsewhere, by id: its files, and the envs it was created with. */
const RECONNECT = `
import { Sandbox } from 'sdk/compat/e2b';

try {
  const sbx = await Sandbox.connect(process.argv[1]);
  console.log((await sbx.commands.run('printf "%s|%s" "$(cat from-parent.txt)" "$GREETING"')).stdout);
} catch (error) {
  console.log(error.name);
}
`;

const state = stateFolder();
let server: ChildProcess;
let url: string;

beforeAll(async () => {
  const port = await freePort();
  server = await serveControlPlane(state.stateDir, port);
  url = `http://127.0.0.1:${String(port)}`;
});

afterAll(async () => {
  server.kill('SIGTERM');
  for (const id of await state.driver.list()) await state.driver.destroy(id);
  state.remove();
});

/** Runs `program` as an ES module in a fresh node process with only `env` (and PATH). */
async function runProgram(
  program: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<string> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program, ...args], {
    cwd: PACKAGE_ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 60_000,
  });
  return stdout;
}

describe('an E2B program against `sdk serve`', () => {
  it('runs with only its import and environment changed', async () => {
    const out = await runProgram(QUICKSTART, { SDK_CONTROL_PLANE_URL: url, SDK_API_KEY: TEST_OPERATOR_KEY });
    expect(JSON.parse(out)).toEqual({
      content: 'Hello from E2B code\n',
      files: expect.arrayContaining(['hello.txt']) as unknown,
      exitCode: 7,
      running: false,
    });
    // The program killed its sandbox: nothing is left on the server.
    expect(await state.driver.list()).toEqual([]);
  });

  it("reconnects from another process by id with the sandbox token (create's envs kept by sandboxd), says what is missing without it, and not found once ended", async () => {
    const saved = process.env.SDK_CONTROL_PLANE_URL;
    process.env.SDK_CONTROL_PLANE_URL = url;
    const sbx = await Sandbox.create({ envs: { GREETING: 'from create' } }).finally(() => {
      if (saved === undefined) Reflect.deleteProperty(process.env, 'SDK_CONTROL_PLANE_URL');
      else process.env.SDK_CONTROL_PLANE_URL = saved;
    });
    try {
      await sbx.files.write('from-parent.txt', 'written by the parent');
      const env = { SDK_CONTROL_PLANE_URL: url, SDK_API_KEY: TEST_OPERATOR_KEY };
      expect(
        await runProgram(RECONNECT, { ...env, SDK_ACCESS_TOKEN: sbx.native.accessToken }, [sbx.sandboxId]),
      ).toBe('written by the parent|from create\n');
      expect(await runProgram(RECONNECT, env, [sbx.sandboxId])).toBe('AuthenticationError\n');
    } finally {
      await sbx.kill();
    }
    // Once it has ended, E2B's answer whoever asks: not found.
    const env = { SDK_CONTROL_PLANE_URL: url, SDK_API_KEY: TEST_OPERATOR_KEY };
    expect(await runProgram(RECONNECT, env, [sbx.sandboxId])).toBe('SandboxNotFoundError\n');
  });
});
