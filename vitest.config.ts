import { defineConfig } from 'vitest/config';

/**
 * Test projects: `unit` and `property` run everywhere in seconds; `integration` needs root and the
 * Debian packages `.ci/run` installs (real namespaces, nftables, openssl).
 */
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { test: { name: 'property', include: ['test/property/**/*.test.ts'] } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
