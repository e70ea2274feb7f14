/**
 * `sbx.agent`: the coding agent of a sandbox (SPEC 0.8.0). Creating it makes no call. Agent runs arrive
 * with the agent runtimes in a later release of this series; until then `run()` rejects with a
 * `SandboxError` of code `unimplemented`.
 */
import { SandboxError } from '../rules/errors.js';

/** The agent of one sandbox. */
export class SandboxAgent {
  /** @internal */
  constructor(readonly sandboxId: string) {
    Object.freeze(this);
  }

  /** Runs the agent. Not in this build. */
  run(): Promise<never> {
    return Promise.reject(
      new SandboxError('agent runs are not in this build yet', {
        code: 'unimplemented',
        failureClass: 'UnimplementedError',
      }),
    );
  }
}
