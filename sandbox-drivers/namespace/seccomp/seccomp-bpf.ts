/**
 * Compiles a `SeccompPolicy` to the classic BPF program `sdk-exec` loads from a descriptor: raw
 * `struct sock_filter` entries (u16 code, u8 jt, u8 jf, u32 k, little-endian).
 *
 * Shape: check the architecture, then the x32 bit, then a balanced binary search over intervals of
 * syscall numbers that share a decision (about 7 `jge` deep instead of hundreds of `jeq`), ending in
 * a shared return or a small block that reads one argument. Paths that never read an argument let
 * the kernel's per-syscall cache skip the filter for allowed calls altogether.
 */
import { X86_64_SYSCALLS, type X86_64SyscallName } from './x86-64-syscalls.js';
import {
  AUDIT_ARCH_X86_64,
  SANDBOX_SECCOMP_POLICY,
  SANDBOXD_SECCOMP_POLICY,
  X32_SYSCALL_BIT,
  type ArgumentRule,
  type SeccompAction,
  type SeccompPolicy,
} from './seccomp-policy.js';

/** The kernel's limit on instructions per program (`BPF_MAXINSNS`). */
export const BPF_MAXINSNS = 4096;

// Opcodes (linux/filter.h) and return values (linux/seccomp.h).
const LD_W_ABS = 0x20;
const JMP_JA = 0x05;
const JMP_JEQ_K = 0x15;
const JMP_JGE_K = 0x35;
const JMP_JSET_K = 0x45;
const RET_K = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;

// Offsets in `struct seccomp_data`; an argument's low word comes first on little-endian.
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const argLowOffset = (arg: number): number => 16 + 8 * arg;

/** The 32-bit value a filter returns for `action`. */
export function seccompReturn(action: SeccompAction): number {
  switch (action.type) {
    case 'allow':
      return RET_ALLOW;
    case 'kill-process':
      return RET_KILL_PROCESS;
    case 'errno':
      return RET_ERRNO | (action.errno & 0xffff);
  }
}

interface Instruction {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

/** An emitted instruction, named by its index counted from the end of the program. */
type Label = number;

/**
 * Emits a program back to front, so every jump target (always forward in classic BPF) is already
 * placed and its distance known. A conditional jump's offsets are 8 bits: a farther target goes
 * through an inserted `ja`, whose offset is 32 bits.
 */
class ReverseEmitter {
  readonly #tail: Instruction[] = [];

  #emit(instruction: Instruction): Label {
    this.#tail.push(instruction);
    return this.#tail.length - 1;
  }

  // The offset from the next instruction emitted to `target`.
  #distance(target: Label): number {
    return this.#tail.length - 1 - target;
  }

  ret(value: number): Label {
    return this.#emit({ code: RET_K, jt: 0, jf: 0, k: value >>> 0 });
  }

  load(offset: number): Label {
    return this.#emit({ code: LD_W_ABS, jt: 0, jf: 0, k: offset });
  }

  jump(target: Label): Label {
    return this.#emit({ code: JMP_JA, jt: 0, jf: 0, k: this.#distance(target) });
  }

  branch(code: number, k: number, whenTrue: Label, whenFalse: Label): Label {
    let [t, f] = [whenTrue, whenFalse];
    while (this.#distance(t) > 255 || this.#distance(f) > 255) {
      if (this.#distance(f) > 255) f = this.jump(f);
      else t = this.jump(t);
    }
    return this.#emit({ code, jt: this.#distance(t), jf: this.#distance(f), k: k >>> 0 });
  }

  program(): Buffer {
    const out = Buffer.alloc(8 * this.#tail.length);
    this.#tail.toReversed().forEach((instruction, index) => {
      out.writeUInt16LE(instruction.code, 8 * index);
      out.writeUInt8(instruction.jt, 8 * index + 2);
      out.writeUInt8(instruction.jf, 8 * index + 3);
      out.writeUInt32LE(instruction.k, 8 * index + 4);
    });
    return out;
  }
}

/** What decides a syscall number: a return value, or an argument rule. */
type Decision = { readonly ret: number } | { readonly rule: ArgumentRule };

const sameDecision = (a: Decision, b: Decision): boolean =>
  'ret' in a ? 'ret' in b && a.ret === b.ret : 'rule' in b && a.rule === b.rule;

const isU32 = (value: number): boolean => Number.isInteger(value) && value >= 0 && value <= 0xffffffff;

// The kernel hands back errnos 1 … 4095 (MAX_ERRNO); BPF constants are 32-bit.
function checkValues(policy: SeccompPolicy): void {
  const actions = [
    policy.unlisted,
    policy.unknown,
    policy.x32,
    policy.foreignArch,
    ...policy.refused.map((family) => ({ type: 'errno', errno: family.errno }) as const),
    ...policy.argumentRules.flatMap((rule) => [rule.otherwise, ...rule.checks.map((check) => check.action)]),
  ];
  for (const action of actions) {
    if (
      action.type === 'errno' &&
      !(Number.isInteger(action.errno) && action.errno >= 1 && action.errno <= 4095)
    ) {
      throw new Error(`seccomp policy: errno ${String(action.errno)} out of 1 … 4095`);
    }
  }
  for (const { test } of policy.argumentRules.flatMap((rule) => rule.checks)) {
    if (!isU32(test.type === 'equals' ? test.value : test.mask)) {
      throw new Error('seccomp policy: an argument test needs a 32-bit unsigned value');
    }
  }
}

/** Each listed name's decision; throws when a name is unknown or listed twice. */
function decisionsByName(policy: SeccompPolicy): Map<string, Decision> {
  checkValues(policy);
  const decisions = new Map<string, Decision>();
  const decide = (name: X86_64SyscallName, decision: Decision): void => {
    if (!Object.hasOwn(X86_64_SYSCALLS, name)) throw new Error(`seccomp policy: no x86_64 syscall ${name}`);
    if (decisions.has(name)) throw new Error(`seccomp policy: ${name} is listed twice`);
    decisions.set(name, decision);
  };
  for (const name of policy.allowed) decide(name, { ret: seccompReturn({ type: 'allow' }) });
  for (const family of policy.refused) {
    for (const name of family.syscalls)
      decide(name, { ret: seccompReturn({ type: 'errno', errno: family.errno }) });
  }
  for (const rule of policy.argumentRules) decide(rule.syscall, { rule });
  return decisions;
}

interface Interval {
  readonly low: number;
  readonly decision: Decision;
}

/** Maximal runs of syscall numbers with one decision, covering 0 … 2³²−1, each from its `low`. */
function intervals(policy: SeccompPolicy): Interval[] {
  const byName = decisionsByName(policy);
  const byNumber = new Map<number, Decision>();
  for (const [name, nr] of Object.entries(X86_64_SYSCALLS)) {
    byNumber.set(nr, byName.get(name) ?? { ret: seccompReturn(policy.unlisted) });
  }
  const unknown: Decision = { ret: seccompReturn(policy.unknown) };
  const highest = Math.max(...byNumber.keys());
  const runs: Interval[] = [];
  for (let nr = 0; nr <= highest + 1; nr++) {
    const decision = byNumber.get(nr) ?? unknown;
    const last = runs.at(-1);
    if (last === undefined || !sameDecision(last.decision, decision)) runs.push({ low: nr, decision });
  }
  return runs;
}

/** Compiles `policy` to a seccomp classic-BPF program (raw `struct sock_filter` array). */
export function compileSeccompFilter(policy: SeccompPolicy): Buffer {
  const emitter = new ReverseEmitter();
  const returns = new Map<number, Label>();
  const returning = (value: number): Label => {
    let label = returns.get(value);
    if (label === undefined) {
      label = emitter.ret(value);
      returns.set(value, label);
    }
    return label;
  };
  const actionLabel = (action: SeccompAction): Label => returning(seccompReturn(action));

  // Argument rules: load the low word, test check by check, fall to `otherwise`.
  const ruleLabels = new Map<ArgumentRule, Label>();
  for (const rule of policy.argumentRules) {
    let next = actionLabel(rule.otherwise);
    rule.checks.toReversed().forEach((check, index, reversed) => {
      const [code, k] =
        check.test.type === 'equals' ? [JMP_JEQ_K, check.test.value] : [JMP_JSET_K, check.test.mask];
      next = emitter.branch(code, k, actionLabel(check.action), next);
      const previous = reversed[index + 1];
      if (previous === undefined || previous.arg !== check.arg) next = emitter.load(argLowOffset(check.arg));
    });
    ruleLabels.set(rule, next);
  }

  const runs = intervals(policy);
  const leaf = (decision: Decision): Label => {
    const label = 'ret' in decision ? returning(decision.ret) : ruleLabels.get(decision.rule);
    if (label === undefined) throw new Error('seccomp policy: an argument rule without code');
    return label;
  };
  // Intervals first … last (inclusive): `nr >= low of the middle` splits them in two.
  const search = (first: number, last: number): Label => {
    if (first === last) return leaf((runs[first] as Interval).decision);
    const middle = Math.ceil((first + last) / 2);
    const above = search(middle, last);
    const below = search(first, middle - 1);
    return emitter.branch(JMP_JGE_K, (runs[middle] as Interval).low, above, below);
  };
  const root = search(0, runs.length - 1);

  emitter.branch(JMP_JSET_K, X32_SYSCALL_BIT, actionLabel(policy.x32), root);
  const loadNr = emitter.load(NR_OFFSET);
  emitter.branch(JMP_JEQ_K, AUDIT_ARCH_X86_64, loadNr, actionLabel(policy.foreignArch));
  emitter.load(ARCH_OFFSET);

  const program = emitter.program();
  if (program.length / 8 > BPF_MAXINSNS) throw new Error('seccomp program longer than BPF_MAXINSNS');
  return program;
}

/** The compiled program of `SANDBOX_SECCOMP_POLICY`. */
export function sandboxSeccompProgram(): Buffer {
  return compileSeccompFilter(SANDBOX_SECCOMP_POLICY);
}

/** The compiled program of `SANDBOXD_SECCOMP_POLICY`. */
export function sandboxdSeccompProgram(): Buffer {
  return compileSeccompFilter(SANDBOXD_SECCOMP_POLICY);
}
