/**
 * The world of an agent integration test file: the scripted model server as an HTTPS upstream with its
 * own test CA, a control plane whose gateways trust that CA, a secret store holding the model key, and
 * `sdk-agent` sandboxes whose one gateway route `llm` reaches the model.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { AgentModel } from '../../../sdk/agent-model.js';
import { AgentSpec, type AgentSpecOptions } from '../../../sdk/agent-spec.js';
import { SecretGateway } from '../../../sdk/secret-gateway.js';
import { SecretCache } from '../../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../../sdk/secret-store/secret-store.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import type { AgentProvider } from '../../../rules/agent-providers.js';
import { AgentError } from '../../../rules/errors.js';
import { LIMITS } from '../../../rules/limits.js';
import type { ModelServerOptions } from '../../support/model-server/index.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';
import { createMcpEndpoint, type McpEndpoint } from '../support/mcp-endpoint.js';
import { startModelUpstream, type ModelUpstream } from '../support/model-upstream.js';

/** The planted model key: it must reach the upstream and nothing the agent can read. */
export const MODEL_KEY = 'sk-agent-planted-9f8e7d6c5b4a39281706';

/** The remote MCP server's key (a whole `authorization` value). */
export const MCP_KEY = 'Bearer mcp-planted-0a1b2c3d4e5f60718293';

/** The header each provider's key travels in (its preset's), and the paths its runtime posts to. */
export const PROVIDER_ROUTES: Readonly<Record<AgentProvider, { header: string; allow: string }>> = {
  vendor_a: { header: 'authorization', allow: '/model/*' },
  vendor_b: { header: 'x-api-key', allow: '/v1/messages' },
  vendor_c: { header: 'authorization', allow: '/v1/*' },
  vendor_d: { header: 'x-vendor_d-api-key', allow: '/v1beta/models/*' },
  vendor_e: { header: 'api-key', allow: '/vendor_c/v1/*' },
  compatible: { header: 'authorization', allow: '/v1/chat/completions' },
};

/** What a test file uses. */
export interface AgentWorld {
  readonly upstream: ModelUpstream;
  readonly cp: InProcessControlPlane;
  /** The remote MCP server on the same upstream (`/mcp`), reached through gateway `tools`. */
  readonly mcp: McpEndpoint;
  /** An `sdk-agent` sandbox (closed egress) with gateway `llm` to the model for `provider`, `tools` to MCP. */
  sandbox(provider?: AgentProvider, options?: { template?: string }): Promise<Sandbox>;
  /** The gateways of those sandboxes: `llm` to the model for `provider`, `tools` to MCP. */
  gateways(provider?: AgentProvider): Record<string, SecretGateway>;
  /** The cache holding the world's secrets. */
  readonly secretCache: SecretCache;
  /** A spec on gateway `llm` for `provider`. */
  spec(provider?: AgentProvider, options?: Omit<AgentSpecOptions, 'model'>): AgentSpec;
}

/** The path each provider's package posts to for model `model-1`, with either runtime. */
export const PROVIDER_PATHS: Readonly<Record<AgentProvider, string>> = {
  vendor_a: '/model/model-1/converse-stream',
  vendor_b: '/v1/messages',
  vendor_c: '/v1/responses',
  vendor_d: '/v1beta/models/model-1:streamGenerateContent',
  vendor_e: '/vendor_c/v1/responses',
  compatible: '/v1/chat/completions',
};

/** Another SDK process (`test/fixtures/agent-client.mjs`). */
export const AGENT_CLIENT = fileURLToPath(new URL('../../fixtures/agent-client.mjs', import.meta.url));

/** Lines of `ps` in `sbx` naming `needle` (the pattern never matches itself). */
export async function processesNamed(sbx: Sandbox, needle: string): Promise<number> {
  const pattern = `[${needle.slice(0, 1)}]${needle.slice(1)}`;
  return Number((await sbx.commands.run(`ps -eo args | grep -c '${pattern}' || true`)).stdout.trim());
}

/** The file the stubborn tool's Node process writes when SIGTERM reaches it. */
const TERM_MARK = '/home/user/.sigterm-seen';

/**
 * A tool's shell command whose whole tree ignores SIGTERM: a sleep that left the session (`sleep 601`),
 * a sleep of the shell's (`sleep 602`), and in the foreground a Node process that notes SIGTERM in
 * TERM_MARK and goes on. The note comes from the process started last, so it means the whole tree was
 * up when SIGTERM came.
 */
const STUBBORN_TOOL =
  `sh -c 'trap "" TERM; exec setsid sleep 601' & trap '' TERM; sleep 602 & ` +
  `exec node -e 'process.on("SIGTERM",()=>require("fs").writeFileSync("${TERM_MARK}",""));setInterval(()=>{},1e9)'`;

/**
 * SPEC's timeout with its grace (SIGTERM, 5 s, then the tree frozen and killed; `timeout` reported only
 * once none of it remains), against a tool whose whole tree ignores SIGTERM. `run(timeoutMs, command)`
 * scripts the model to call a shell tool with `command`, runs the agent with that timeout and resolves
 * to what the run threw.
 */
export async function expectTimeoutOnlyOnceTreeIsGone(
  sbx: Sandbox,
  run: (timeoutMs: number, command: string) => Promise<unknown>,
): Promise<void> {
  await withDeadlineAfter('the stubborn tool started', async (timeoutMs) => {
    await sbx.commands.run(`rm -f ${TERM_MARK}`);
    const started = Date.now();
    const error = await run(timeoutMs, STUBBORN_TOOL);
    const took = Date.now() - started;
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).reason).toBe('timeout');
    expect(await processesNamed(sbx, 'sleep 60')).toBe(0);
    expect(await processesNamed(sbx, 'sigterm-seen')).toBe(0);
    const seen = (await sbx.commands.run(`test -e ${TERM_MARK} && echo seen || true`)).stdout === 'seen\n';
    if (!seen) return false; // the deadline came before the tool: again, with a later one
    expect(took).toBeGreaterThanOrEqual(timeoutMs + LIMITS.agentKillGraceMs);
    return true;
  });
}

/**
 * Runs `attempt` with an execution deadline of `timeoutMs`, until the deadline found what it must catch
 * (`attempt` says so: a tree up, a caller gone). A deadline is set when the run starts, before the
 * runtime reaches its tool: where the machine is slower than the deadline, the same run is made again
 * with twice the deadline, so no test depends on how fast the runtime starts.
 */
export async function withDeadlineAfter(
  what: string,
  attempt: (timeoutMs: number) => Promise<boolean>,
  timeoutMs = 8_000,
): Promise<void> {
  for (let deadline = timeoutMs; deadline <= 64_000; deadline *= 2) {
    if (await attempt(deadline)) return;
  }
  throw new Error(`every deadline up to 64 s came before ${what}`);
}

/**
 * One sandbox for a whole test file, handed to `use`: the model's script is reset before each test, and
 * an execution a failed test left running is aborted after it.
 */
export function useSharedSandbox(world: AgentWorld, use: (sbx: Sandbox) => void): void {
  let sbx: Sandbox | undefined;
  beforeAll(async () => {
    sbx = await world.sandbox();
    use(sbx);
  }, 120_000);
  afterAll(async () => {
    await sbx?.kill();
  });
  beforeEach(() => {
    world.upstream.model.reset();
  });
  afterEach(async () => {
    if (sbx === undefined) return;
    const { current } = await sbx.agent.executions();
    if (current === null) return;
    const stream = await sbx.agent.attach(current);
    await stream.abort();
    stream.close();
  });
}

/** Registers hooks building and tearing down the world (`slot` separates test namespaces). */
export function useAgentWorld(slot: number, options: ModelServerOptions = {}): AgentWorld {
  // Every provider's key header is checked: `expected` when it holds the planted key.
  const model = {
    expectedCredentials: Object.fromEntries(Object.values(PROVIDER_ROUTES).map((r) => [r.header, MODEL_KEY])),
    ...options,
  };
  let upstream: ModelUpstream | undefined;
  let cp: InProcessControlPlane | undefined;
  let dir = '';
  let cache: SecretCache | undefined;
  const mcp = createMcpEndpoint(MCP_KEY);

  beforeAll(async () => {
    upstream = await startModelUpstream(slot, { model, mcp: mcp.handler });
    cp = await startControlPlane({ gatewayCa: upstream.caPem });
    dir = mkdtempSync(join(tmpdir(), 'sdk-agent-secrets-'));
    const store = new SecretStore({ file: join(dir, 'secrets.json') });
    await store.create('model-key', MODEL_KEY);
    await store.create('mcp-key', MCP_KEY);
    cache = new SecretCache({ store });
  }, 120_000);

  afterAll(async () => {
    try {
      await cp?.stop();
    } finally {
      await upstream?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the agent world is not set up');
    return value;
  };

  const gateways = (provider: AgentProvider = 'compatible'): Record<string, SecretGateway> => {
    const route = PROVIDER_ROUTES[provider];
    return {
      llm: new SecretGateway({
        upstream: need(upstream).origin,
        headers: { [route.header]: 'model-key' },
        allow: [['POST', route.allow]],
        ratePerMinute: 6000,
      }),
      tools: new SecretGateway({
        upstream: need(upstream).origin,
        headers: { authorization: 'mcp-key' },
        allow: [
          ['POST', '/mcp'],
          ['GET', '/mcp'],
          ['DELETE', '/mcp'],
        ],
        ratePerMinute: 6000,
      }),
    };
  };

  return {
    get upstream() {
      return need(upstream);
    },
    get cp() {
      return need(cp);
    },
    mcp,
    get secretCache() {
      return need(cache);
    },
    gateways,
    sandbox: (provider = 'compatible', options = {}) =>
      need(cp).createSandbox({
        template: options.template ?? 'sdk-agent',
        secretCache: need(cache),
        gateways: gateways(provider),
      }),
    spec: (provider = 'compatible', options = {}) =>
      new AgentSpec({
        model: new AgentModel({
          provider,
          id: 'model-1',
          gateway: 'llm',
          ...(provider === 'vendor_a' ? { region: 'us-east-1' } : {}),
          ...(provider === 'compatible' ? { basePath: '/v1' } : {}),
        }),
        ...options,
      }),
  };
}
