import { describe, expect, it } from 'vitest';

describe('the published E2B shim entry (sdk/compat/e2b)', () => {
  it("exports E2B's names from the built package, with Sandbox also the default export", async () => {
    const shim = await import('sdk/compat/e2b');
    expect(Object.keys(shim).sort()).toEqual([
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
    ]);
    expect(shim.default).toBe(shim.Sandbox);
  });
});
