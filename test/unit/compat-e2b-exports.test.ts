import { describe, expect, it } from 'vitest';

/**
 * The runtime names of E2B's SDK (its `index.ts`) a program may import, as the shim exports them (those
 * of what only E2B's cloud has refuse any use). E2B's network constant `ALL_TRAFFIC` (E2B 2.7+) is among
 * them; its network types (`SandboxNetworkOpts`, `SandboxNetworkUpdate`, …) are types only, used in
 * `compat-e2b.test.ts`.
 */
const NAMES = [
  'ALL_TRAFFIC',
  'AuthenticationError',
  'CommandExitError',
  'CommandHandle',
  'Commands',
  'FileNotFoundError',
  'FileType',
  'Filesystem',
  'FilesystemEventType',
  'InvalidArgumentError',
  'NotEnoughSpaceError',
  'NotFoundError',
  'NotSupportedError',
  'Pty',
  'RateLimitError',
  'Sandbox',
  'SandboxError',
  'SandboxNotFoundError',
  'SandboxPaginator',
  'Secret',
  'SnapshotPaginator',
  'Template',
  'TemplateError',
  'TimeoutError',
  'Volume',
  'default',
];

describe('the published E2B shim entry (sdk/compat/e2b)', () => {
  it("exports E2B's names from the built package, with Sandbox also the default export", async () => {
    const shim = await import('sdk/compat/e2b');
    expect(Object.keys(shim).sort()).toEqual(NAMES);
    expect(shim.default).toBe(shim.Sandbox);
  });

  it('exports the same names from its source, ALL_TRAFFIC being E2B\'s "0.0.0.0/0"', async () => {
    const shim = await import('../../sdk/compat/e2b/index.js');
    expect(Object.keys(shim).sort()).toEqual(NAMES);
    expect(shim.ALL_TRAFFIC).toBe('0.0.0.0/0');
  });
});
