/**
 * The account a call acts as (`protocol/sandbox-accounts.ts`), checked before anything is started: root
 * exists only inside a sandbox (the root of the sandbox's own user namespace). A sandboxd that runs on
 * the host (the daemon tests start it so) refuses `root` with `invalid_argument` on `user` before any
 * side effect, rather than failing at the spawn.
 */
import { ACCOUNT_PARAM, accountOfQuery, type SandboxAccount } from '../protocol/sandbox-accounts.js';
import { rootAvailable, type SandboxUser } from './sandbox-spawn.js';
import { RequestError } from './request-error.js';

/** `user: 'root'` asked of a sandboxd with no sandbox around it: there is no root to run as. */
export class RootUnavailableError extends RequestError {
  static override readonly className: string = 'RootUnavailableError';

  constructor(call: string) {
    super(
      'invalid_argument',
      `${call}: user: 'root' exists only inside a sandbox; this sandboxd runs on the host`,
      undefined,
      { field: 'user' },
    );
  }
}

/** A files call's `?user=` that names neither account. */
export class UnknownAccountError extends RequestError {
  static override readonly className: string = 'UnknownAccountError';

  constructor(call: string) {
    super('invalid_argument', `${call}: user: must be 'user' or 'root'`, undefined, { field: 'user' });
  }
}

/**
 * `account`, once this sandboxd can act as it.
 *
 * @throws RootUnavailableError for `root` outside a sandbox
 */
export function checkedAccount(call: string, account: SandboxAccount, user: SandboxUser): SandboxAccount {
  if (account === 'root' && !rootAvailable(user)) throw new RootUnavailableError(call);
  return account;
}

/**
 * The account a files call's query names (`?user=`, absent: `user`), checked as `checkedAccount`.
 *
 * @throws UnknownAccountError for a value that names neither account
 * @throws RootUnavailableError for `root` outside a sandbox
 */
export function queryAccount(url: URL, call: string, user: SandboxUser): SandboxAccount {
  const account = accountOfQuery(url.searchParams.get(ACCOUNT_PARAM));
  if (account === undefined) throw new UnknownAccountError(call);
  return checkedAccount(call, account, user);
}
