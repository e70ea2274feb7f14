/**
 * Issue 24 in a real sandbox: ordinary output must not kill sandboxd. Before, `head -c` through the SDK
 * grew sandboxd past its cgroup (sandbox memory + 128 MiB) and the kernel killed it, ending the sandbox
 * `failed`; in a 64 MiB sandbox within a second. Now a command's output is read only as fast as its
 * readers take it, so the sandbox serves on and sandboxd's peak resident memory (VmHWM of its process,
 * the template's Node as in production) stays within its stated bound (daemon/README.md, "Bounds").
 */
import { describe, expect, it } from 'vitest';
import { useControlPlane } from '../support/control-plane-hooks.js';
import { sandboxdPid } from '../support/namespace-sandbox.js';
import { peakBytes, SANDBOXD_MEMORY_BOUND } from '../support/sandboxd-memory.js';

const cp = useControlPlane();

describe('sandboxd under a flood, in a 64 MiB sandbox', () => {
  it('passes 200 MB of output and 200 MB of stdin through and serves on', async () => {
    const sbx = await cp.createSandbox({ memoryMb: 64 });
    try {
      let received = 0;
      const result = await sbx.commands.run('head -c 200000000 /dev/zero; echo', {
        onStdout: (data) => (received += data.length),
      });
      expect({ exitCode: result.exitCode, received }).toEqual({ exitCode: 0, received: 200_000_001 });

      const reader = await sbx.commands.run('wc -c', { background: true });
      const chunk = new Uint8Array(8 * 1024 * 1024);
      for (let sent = 0; sent < 200 * 1024 * 1024; sent += chunk.length) await reader.sendStdin(chunk);
      await reader.closeStdin();
      expect((await reader.wait()).stdout.trim()).toBe(String(200 * 1024 * 1024));

      expect(peakBytes(sandboxdPid(cp.driver.instance, sbx.sandboxId))).toBeLessThan(SANDBOXD_MEMORY_BOUND);
      expect((await sbx.getInfo()).state).toBe('running');
      expect((await sbx.commands.run('echo still here')).stdout).toBe('still here\n');
    } finally {
      await sbx.kill().catch(() => undefined);
    }
  });
});
