import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import {
  compileSeccompFilter,
  sandboxSeccompProgram,
} from '../../sandbox-drivers/namespace/seccomp/seccomp-bpf.js';
import {
  ALLOWED_ADDRESS_FAMILIES,
  ALLOWED_PERSONALITIES,
  AUDIT_ARCH_X86_64,
  CLONE_NAMESPACE_FLAGS,
  REFUSED_IOCTLS,
  SANDBOX_SECCOMP_POLICY,
  X32_SYSCALL_BIT,
  type ArgumentCheck,
  type ArgumentRule,
  type RefusedFamily,
  type SeccompAction,
  type SeccompPolicy,
} from '../../sandbox-drivers/namespace/seccomp/seccomp-policy.js';
import {
  X86_64_SYSCALLS,
  type X86_64SyscallName,
} from '../../sandbox-drivers/namespace/seccomp/x86-64-syscalls.js';
import {
  decodeProgram,
  programProblem,
  runSeccompFilter,
  type SeccompData,
} from '../support/bpf-interpreter.js';
import { referenceDecision } from '../support/seccomp-reference.js';

const NAMES = Object.keys(X86_64_SYSCALLS) as X86_64SyscallName[];
const NUMBERS = Object.values(X86_64_SYSCALLS);

// Values that matter to some rule, so checks are hit often rather than by luck.
const INTERESTING_WORDS = [
  0,
  1,
  0xffffffff,
  CLONE_NAMESPACE_FLAGS,
  0x01200011,
  0x003d0f00,
  ...Object.values({ ns: 0x20000, user: 0x10000000, net: 0x40000000, cgroup: 0x02000000 }),
  ...ALLOWED_ADDRESS_FAMILIES,
  38,
  40,
  ...ALLOWED_PERSONALITIES,
  0x40000,
  ...REFUSED_IOCTLS,
  0x5401,
];

const word = fc.oneof(fc.constantFrom(...INTERESTING_WORDS), fc.nat({ max: 0xffffffff }));
const argument = fc
  .tuple(fc.oneof(fc.constant(0), fc.nat({ max: 0xffffffff })), word)
  .map(([high, low]) => (BigInt(high) << 32n) | BigInt(low));

const syscallNumber = fc.oneof(
  { arbitrary: fc.constantFrom(...NUMBERS), weight: 6 },
  fc.constantFrom(...NUMBERS).map((nr) => nr | X32_SYSCALL_BIT),
  fc.constantFrom(...NUMBERS).map((nr) => nr + 1),
  fc.integer({ min: 0, max: 1024 }),
  fc.nat({ max: 0xffffffff }),
);

const arch = fc.oneof(
  { arbitrary: fc.constant(AUDIT_ARCH_X86_64), weight: 8 },
  fc.constantFrom(0x40000003, 0xc00000b7, 0x4000003e, 0),
  fc.nat({ max: 0xffffffff }),
);

const seccompData: fc.Arbitrary<SeccompData> = fc.record({
  nr: syscallNumber,
  arch,
  instructionPointer: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  args: fc.array(argument, { minLength: 6, maxLength: 6 }),
});

const action: fc.Arbitrary<SeccompAction> = fc.oneof(
  fc.constant({ type: 'allow' } as const),
  fc.constant({ type: 'kill-process' } as const),
  fc.integer({ min: 1, max: 4095 }).map((errno) => ({ type: 'errno', errno }) as const),
);

const check: fc.Arbitrary<ArgumentCheck> = fc.record({
  arg: fc.constantFrom(0, 1, 2, 3, 4, 5),
  test: fc.oneof(
    word.map((value) => ({ type: 'equals', value }) as const),
    word.map((mask) => ({ type: 'any-bit-set', mask }) as const),
  ),
  action,
});

/**
 * Any policy over the x86_64 table: each name allowed, refused in one of a few families, ruled by
 * arguments or left unlisted. Many short runs make a search tree too long for 8-bit jump offsets,
 * so the `ja` trampolines are exercised.
 */
const policy: fc.Arbitrary<SeccompPolicy> = fc
  .record({
    roles: fc.array(fc.nat({ max: 9 }), { minLength: NAMES.length, maxLength: NAMES.length }),
    errnos: fc.array(fc.integer({ min: 1, max: 4095 }), { minLength: 3, maxLength: 3 }),
    rules: fc.array(fc.record({ checks: fc.array(check, { maxLength: 40 }), otherwise: action }), {
      maxLength: 6,
    }),
    unlisted: action,
    unknown: action,
    x32: action,
    foreignArch: action,
  })
  .map(({ roles, errnos, rules, ...rest }) => {
    const named = (role: number) => NAMES.filter((_, i) => roles[i] === role);
    const ruled = named(0).slice(0, rules.length);
    const refused: RefusedFamily[] = errnos.map((errno, i) => ({
      family: `family ${String(i)}`,
      syscalls: named(i + 1),
      errno,
      why: 'generated',
    }));
    const argumentRules: ArgumentRule[] = ruled.map((syscall, i) => ({
      syscall,
      ...(rules[i] as Pick<ArgumentRule, 'checks' | 'otherwise'>),
      why: 'generated',
    }));
    // Roles 4–6 allowed, 7–9 and unruled 0 unlisted.
    const allowed = NAMES.filter((_, i) => (roles[i] ?? 0) >= 4 && (roles[i] ?? 0) <= 6);
    return { allowed, refused, argumentRules, ...rest };
  });

describe('seccomp compiler', () => {
  const program = decodeProgram(sandboxSeccompProgram());

  test.prop([seccompData], { numRuns: 5000 })('the sandbox program decides as its policy says', (data) => {
    expect(runSeccompFilter(program, data)).toBe(referenceDecision(SANDBOX_SECCOMP_POLICY, data));
  });

  test.prop([policy, fc.array(seccompData, { minLength: 40, maxLength: 40 })], { numRuns: 150 })(
    'any policy compiles to a well-formed program that decides as the policy says',
    (anyPolicy, inputs) => {
      const compiled = decodeProgram(compileSeccompFilter(anyPolicy));
      expect(programProblem(compiled)).toBeUndefined();
      for (const data of inputs)
        expect(runSeccompFilter(compiled, data)).toBe(referenceDecision(anyPolicy, data));
      // Every number the table names, once, with no arguments.
      for (const nr of NUMBERS) {
        const data = { nr, arch: AUDIT_ARCH_X86_64, instructionPointer: 0n, args: [] };
        expect(runSeccompFilter(compiled, data)).toBe(referenceDecision(anyPolicy, data));
      }
    },
  );

  test('a rule longer than a conditional jump reaches still decides as its policy says', () => {
    const names = NAMES.filter((name) => name !== 'ioctl');
    const longRule: ArgumentRule = {
      syscall: 'ioctl',
      checks: Array.from({ length: 600 }, (_, i) => ({
        arg: ((i >> 2) % 6) as ArgumentCheck['arg'],
        test: i % 2 === 0 ? { type: 'equals', value: i } : { type: 'any-bit-set', mask: 2 ** (i % 32) },
        action: { type: 'errno', errno: 1 + (i % 5) },
      })),
      otherwise: { type: 'allow' },
      why: 'long',
    };
    const anyPolicy: SeccompPolicy = {
      ...SANDBOX_SECCOMP_POLICY,
      allowed: names.filter((_, i) => i % 2 === 0),
      refused: [
        { family: 'odd', syscalls: names.filter((_, i) => i % 2 === 1), errno: 13, why: 'alternating' },
      ],
      argumentRules: [longRule],
    };
    const raw = compileSeccompFilter(anyPolicy);
    const compiled = decodeProgram(raw);
    expect(programProblem(compiled)).toBeUndefined();
    expect(compiled.some((instruction) => instruction.code === 0x05)).toBe(true); // ja trampolines
    fc.assert(
      fc.property(seccompData, (data) => {
        const ioctl = { ...data, nr: X86_64_SYSCALLS.ioctl, arch: AUDIT_ARCH_X86_64 };
        expect(runSeccompFilter(compiled, ioctl)).toBe(referenceDecision(anyPolicy, ioctl));
        expect(runSeccompFilter(compiled, data)).toBe(referenceDecision(anyPolicy, data));
      }),
      { numRuns: 2000 },
    );
  });
});
