/** What a fake control plane answers for a sandbox's facts (`SandboxInfo` on the wire). */

/** A sandbox's facts, running or ended (killed). */
export function fakeSandboxInfo(
  sandboxId: string,
  state: 'running' | 'ended',
  template = 'sdk-base',
  allowInternetAccess = true,
): Record<string, unknown> {
  return {
    sandboxId,
    template,
    isolation: 'namespace',
    state,
    allowInternetAccess,
    egress: { mode: allowInternetAccess ? 'open' : 'closed', allow: [], deny: [] },
    endReason: state === 'ended' ? 'killed' : null,
    suspendReason: null,
    deadlineAt: 2_000_000_000_000,
    startedAt: 1_999_996_400_000,
    metadata: {},
    seq: 1,
  };
}
