/**
 * The package tools the credential broker's tests run in a sandbox (`support/sandbox-tools.ts`): the
 * host's pip, requests, httpx, npm and uv, laid into a sandbox of each isolation, run there as the
 * sandbox user with no registry reached.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Isolation } from '../../../sandbox-drivers/sandbox-driver.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { useControlPlane } from '../support/control-plane-hooks.js';
import {
  installSandboxTools,
  removeSandboxToolsBundle,
  sandboxToolsBundle,
  type SandboxTools,
  type SandboxToolsBundle,
} from '../support/sandbox-tools.js';

const cp = useControlPlane();
afterAll(removeSandboxToolsBundle);

/** Runs `cmd` in `sbx` as its user, expecting exit 0 (its stderr shown when not); its stdout. */
async function succeed(sbx: Sandbox, cmd: string): Promise<string> {
  const { exitCode, stdout, stderr } = await sbx.commands.run(cmd, { timeoutMs: 60_000 });
  expect(exitCode, `${cmd}: ${stderr}`).toBe(0);
  return stdout.trim();
}

/** requests and httpx each fetch a page from a server on the sandbox's own loopback. */
const FETCH_BOTH = `
import http.server, threading, requests, httpx, charset_normalizer
class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"hello")
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d/" % server.server_port
print(requests.get(url).text, httpx.get(url).text, charset_normalizer.from_bytes(b"plain").best().encoding)
`;

describe.each<Isolation>(['namespace', 'gvisor'])('tools laid into a sandbox (%s)', (isolation) => {
  let sbx: Sandbox;
  let tools: SandboxTools;
  let bundle: SandboxToolsBundle;

  beforeAll(async () => {
    bundle = await sandboxToolsBundle();
    sbx = await cp.createSandbox({ isolation });
    tools = await installSandboxTools(sbx);
  });
  afterAll(async () => {
    await sbx.kill();
  });

  it('are the sandbox user’s', async () => {
    expect(await succeed(sbx, `id -un; stat -c %U ${tools.uv} ${tools.pythonPath}/pip`)).toBe(
      'user\nuser\nuser',
    );
  });

  it('run pip from the bundle', async () => {
    const pipVersion = bundle.distributions.find((dist) => dist.name === 'pip')?.version ?? 'none';
    expect(await succeed(sbx, `${tools.pip} --version`)).toMatch(
      new RegExp(`^pip ${pipVersion} from ${tools.pythonPath}/pip `),
    );
  });

  it('import requests and httpx (charset_normalizer in pure Python) and fetch with them', async () => {
    expect(await succeed(sbx, `${tools.python} -c '${FETCH_BOTH}'`)).toBe('hello hello ascii');
  });

  it("run npm on the sandbox's Node", async () => {
    expect(await succeed(sbx, `${tools.npm} --version`)).toBe(bundle.npmVersion);
  });

  it('run uv', async () => {
    expect(await succeed(sbx, `${tools.uv} --version`)).toBe(bundle.uvVersion);
  });

  it("run Debian's cargo with its own libraries", async () => {
    expect(await succeed(sbx, `${tools.cargo} --version`)).toMatch(/^cargo \d+\.\d+\.\d+/);
  });
});
