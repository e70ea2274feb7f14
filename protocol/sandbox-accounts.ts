/**
 * The accounts sandbox code runs as (issue 25): `user` (uid 1000, home `/home/user`, the default) or
 * `root` (uid 0 of the sandbox's own user namespace, with Docker's default capabilities, home `/root`).
 * A command takes its account as `user` in its start request (`process-events.ts`); a files call as
 * `?user=` in its query or `user` in its JSON body (`files-wire.ts`). Absent is `user`, so a request
 * made before accounts existed means what it meant.
 */
import { z } from 'zod';

/** The two accounts. */
export const SANDBOX_ACCOUNTS = ['user', 'root'] as const;

/** An account as the wire carries it. */
export const sandboxAccountSchema = z.enum(SANDBOX_ACCOUNTS, { error: "must be 'user' or 'root'" });

/** An account sandbox code runs as. */
export type SandboxAccount = (typeof SANDBOX_ACCOUNTS)[number];

/** The account a call acts as when it names none. */
export const DEFAULT_ACCOUNT: SandboxAccount = 'user';

/**
 * Each account's home in a sandbox: where E2B's relative paths and working directories resolve (the
 * compatibility shims), and a root command's `HOME`.
 */
export const ACCOUNT_HOMES: Readonly<Record<SandboxAccount, string>> = Object.freeze({
  user: '/home/user',
  root: '/root',
});

/** The query parameter that names a files call's account. */
export const ACCOUNT_PARAM = 'user';

/** The account a query names (`?user=`; absent: `user`), or undefined when it names neither. */
export function accountOfQuery(value: string | null): SandboxAccount | undefined {
  if (value === null) return DEFAULT_ACCOUNT;
  return sandboxAccountSchema.safeParse(value).data;
}

/** `&user=root` for a root call, else nothing: a call as the user is sent as it always was. */
export function accountQuery(account: SandboxAccount): string {
  return account === DEFAULT_ACCOUNT ? '' : `&${ACCOUNT_PARAM}=${account}`;
}

/** `{ user: 'root' }` for a root call, else nothing (for a JSON body, as `accountQuery`). */
export function accountField(account: SandboxAccount): { user?: SandboxAccount } {
  return account === DEFAULT_ACCOUNT ? {} : { user: account };
}
