import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/support/slow-first-sequencer.js';

/**
 * Test projects: `unit` and `property` run everywhere in seconds; `integration` needs root and the
 * Debian packages `.ci/run` installs (real namespaces, nftables, openssl).
 *
 * Timeouts only end a test that hangs: no test depends on how fast the machine is (machines of this
 * kind differ by 3×). Integration files spend most of their time waiting on sandboxes, runtimes and
 * child processes, so more of them run at once than there are cores; each runs in a process of its own
 * (files set process.env, and name their namespaces and tables by pid).
 */
/**
 * Integration files whose behaviours hold for every isolation, run a second time with gVisor sandboxes
 * (`SDK_ISOLATION=gvisor`: the SDK asks for them; `TestSandboxes` launches them). Files that test one
 * engine's own mechanics (the namespace driver's, its attacks, gVisor's own) are not among them; those of
 * both engines test each one themselves (`snapshots.test.ts`). Where a whole file twice costs too much,
 * its behaviours that depend on the box run once more with a gVisor sandbox of their own
 * (`runtime-b.test.ts`, `home-persistence.test.ts`, `runtime-a-snapshot.test.ts`).
 */
const BOTH_ISOLATIONS = [
  'test/integration/sandbox/lifecycle.test.ts',
  'test/integration/sandbox/background-commands.test.ts',
  'test/integration/sandbox/files.test.ts',
  'test/integration/sandbox/gateways.test.ts',
  'test/integration/sandbox/root-account.test.ts',
  'test/integration/agent/runtime-a-trees.test.ts',
  'test/integration/sandbox/ownership-and-end.test.ts',
  'test/integration/sandbox/secret-envs.test.ts',
  'test/integration/sandbox/api-access.test.ts',
  'test/integration/sandbox/daemon-events.test.ts',
  'test/integration/compat/e2b.test.ts',
  'test/integration/compat/e2b-program.test.ts',
  'test/integration/compat/e2b-root.test.ts',
  'test/integration/compat/e2b-fidelity-commands.test.ts',
  'test/integration/compat/e2b-fidelity-files.test.ts',
];

/**
 * Sandboxes' resolvers ask a server on their own loopback, where none listens: a name sandbox code
 * resolves never reaches the host's DNS server (tests talk to loopback and their own namespaces only).
 * Tests of the resolver give their control planes a server in a namespace of their own.
 */
const TEST_DNS = { SDK_DNS_SERVERS: '127.0.0.1:9' };

const INTEGRATION = {
  env: TEST_DNS,
  globalSetup: ['test/integration/support/global-setup.ts'],
  testTimeout: 120_000,
  hookTimeout: 180_000,
  expect: { poll: { timeout: 10_000 } },
};

export default defineConfig({
  test: {
    maxWorkers: 3,
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'runtime-drivers/*/test/*.test.ts'],
          testTimeout: 30_000,
          isolate: false,
        },
      },
      {
        test: {
          name: 'property',
          include: ['test/property/**/*.test.ts'],
          testTimeout: 60_000,
          isolate: false,
        },
      },
      { test: { name: 'integration', include: ['test/integration/**/*.test.ts'], ...INTEGRATION } },
      {
        test: {
          name: 'integration-gvisor',
          include: BOTH_ISOLATIONS,
          ...INTEGRATION,
          env: { ...TEST_DNS, SDK_ISOLATION: 'gvisor' },
        },
      },
    ],
  },
});
