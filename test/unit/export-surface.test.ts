import { describe, expect, it } from 'vitest';

describe('the published entry', () => {
  it('exports exactly the public API from the built package', async () => {
    const sdk = await import('sdk');
    expect(Object.keys(sdk).sort()).toEqual(
      [
        'AGENT_FAILURE_REASONS',
        'AGENT_PROVIDERS',
        'AgentError',
        'AgentLimits',
        'AgentModel',
        'AgentPermissions',
        'AgentSpec',
        'AuthenticationError',
        'DENIED_BY_DEFAULT',
        'ERROR_HTTP_STATUS',
        'IdlePolicy',
        'InvalidArgumentError',
        'LIMITS',
        'McpLocal',
        'McpRemote',
        'PoolConfig',
        'RESERVED_RAW_CONFIG_KEYS',
        'RUNTIME_B_TOOLS',
        'RuntimeB',
        'S3Prefix',
        'Sandbox',
        'SandboxError',
        'SdkError',
        'SecretGateway',
        'SecretNotFoundError',
        'SecretRef',
        'SubAgent',
        'agentPoolWarmup',
        'checkSpecForRuntime',
        'compatibleGateway',
        'errorFromEnvelope',
        'resolveSandboxOptions',
        'vendorAGateway',
        'vendorBGateway',
        'vendorCGateway',
        'vendorDGateway',
        'vendorEGateway',
        'vendorFGateway',
        'vendorGGateway',
        'vendorHGateway',
        'vendorIGateway',
        'vendorJGateway',
        'vendorKGateway',
      ].sort(),
    );
  });
});
