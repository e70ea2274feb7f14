/**
 * The decision a seccomp policy means, computed straight from its data (no intervals, no BPF): the
 * oracle the compiled program is checked against. Return values are spelled out here again
 * (linux/seccomp.h) rather than imported from the compiler.
 */
import {
  AUDIT_ARCH_X86_64,
  X32_SYSCALL_BIT,
  type ArgumentTest,
  type SeccompAction,
  type SeccompPolicy,
} from '../../sandbox-drivers/namespace/seccomp/seccomp-policy.js';
import { X86_64_SYSCALLS } from '../../sandbox-drivers/namespace/seccomp/x86-64-syscalls.js';
import type { SeccompData } from './bpf-interpreter.js';

/** `SECCOMP_RET_ALLOW`. */
export const RET_ALLOW = 0x7fff0000;
/** `SECCOMP_RET_KILL_PROCESS`. */
export const RET_KILL_PROCESS = 0x80000000;
/** `SECCOMP_RET_ERRNO | errno`. */
export const retErrno = (errno: number): number => 0x00050000 + errno;

/** The filter's return value for `action`. */
export function expectedReturn(action: SeccompAction): number {
  if (action.type === 'allow') return RET_ALLOW;
  if (action.type === 'kill-process') return RET_KILL_PROCESS;
  return retErrno(action.errno);
}

const NAME_OF = new Map<number, string>(Object.entries(X86_64_SYSCALLS).map(([name, nr]) => [nr, name]));

const holds = (test: ArgumentTest, value: bigint): boolean => {
  // The kernel reads these arguments as 32-bit values.
  const low = Number(value & 0xffffffffn);
  return test.type === 'equals' ? low === test.value : (low & test.mask) !== 0;
};

/** What `policy` says a call described by `data` gets, as the filter's return value. */
export function referenceDecision(policy: SeccompPolicy, data: SeccompData): number {
  if (data.arch >>> 0 !== AUDIT_ARCH_X86_64) return expectedReturn(policy.foreignArch);
  if (((data.nr >>> 0) & X32_SYSCALL_BIT) !== 0) return expectedReturn(policy.x32);
  const name = NAME_OF.get(data.nr >>> 0);
  if (name === undefined) return expectedReturn(policy.unknown);
  if (policy.allowed.some((allowed) => allowed === name)) return RET_ALLOW;
  const family = policy.refused.find((f) => f.syscalls.some((s) => s === name));
  if (family !== undefined) return retErrno(family.errno);
  const rule = policy.argumentRules.find((r) => r.syscall === name);
  if (rule !== undefined) {
    const check = rule.checks.find((c) => holds(c.test, data.args[c.arg] ?? 0n));
    return expectedReturn(check?.action ?? rule.otherwise);
  }
  return expectedReturn(policy.unlisted);
}
