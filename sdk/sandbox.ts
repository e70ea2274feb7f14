/**
 * `Sandbox`: the handle on one isolated sandbox. In this release the options are fully checked; the
 * lifecycle (launch, commands, pause, resume, kill) is not in this build yet.
 */
import { SandboxError } from '../spec/errors.js';
import { resolveSandboxOptions, type SandboxOptions } from './sandbox-options.js';

/**
 * A sandbox handle.
 *
 * @example
 * ```ts
 * const sbx = await Sandbox.create({ template: 'sdk-agent', allowInternetAccess: false, gateways: { llm } });
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- commands, pause and kill arrive with the sandbox driver
export class Sandbox {
  private constructor() {}

  /**
   * Creates a sandbox. Every argument is checked first, so a malformed one raises
   * `InvalidArgumentError` before any call.
   *
   * @throws InvalidArgumentError for a malformed option
   * @throws SandboxError with code `unimplemented` while this build has no sandbox driver
   */
  static create(options: SandboxOptions = {}): Promise<Sandbox> {
    return new Promise((_, reject) => {
      resolveSandboxOptions(options); // a malformed option throws here, which rejects before any call
      reject(
        new SandboxError('this build has no sandbox driver yet; sandbox lifecycle is not available', {
          code: 'unimplemented',
          failureClass: 'UnimplementedError',
        }),
      );
    });
  }
}
