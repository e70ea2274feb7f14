import { constants } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  BPF_MAXINSNS,
  compileSeccompFilter,
  sandboxSeccompProgram,
} from '../../sandbox-drivers/namespace/seccomp/seccomp-bpf.js';
import {
  ALLOWED_PERSONALITIES,
  ARGUMENT_RULES,
  AUDIT_ARCH_X86_64,
  REFUSED_FAMILIES,
  SANDBOX_SECCOMP_POLICY,
  X32_SYSCALL_BIT,
} from '../../sandbox-drivers/namespace/seccomp/seccomp-policy.js';
import {
  X86_64_SYSCALLS,
  type X86_64SyscallName,
} from '../../sandbox-drivers/namespace/seccomp/x86-64-syscalls.js';
import { decodeProgram, programProblem, runSeccompFilter } from '../support/bpf-interpreter.js';
import { RET_ALLOW, RET_KILL_PROCESS, retErrno } from '../support/seccomp-reference.js';

const { EPERM, ENOSYS } = constants.errno;
const PROGRAM = decodeProgram(sandboxSeccompProgram());

const AUDIT_ARCH_I386 = 0x40000003;
const AUDIT_ARCH_AARCH64 = 0xc00000b7;

const CLONE_NEW = {
  NEWNS: 0x00020000,
  NEWCGROUP: 0x02000000,
  NEWUTS: 0x04000000,
  NEWIPC: 0x08000000,
  NEWUSER: 0x10000000,
  NEWPID: 0x20000000,
  NEWNET: 0x40000000,
};
// What glibc passes for fork() and pthread_create() (SIGCHLD | CHILD_SETTID | CHILD_CLEARTID; VM | FS |
// FILES | SIGHAND | THREAD | SYSVSEM | SETTLS | PARENT_SETTID | CHILD_CLEARTID).
const FORK_FLAGS = 0x01200011;
const THREAD_FLAGS = 0x003d0f00;

/** The filter's verdict on a call by name (or number) with these arguments, from x86_64. */
function verdict(
  syscall: X86_64SyscallName | number,
  args: readonly bigint[] = [],
  arch = AUDIT_ARCH_X86_64,
): number {
  const nr = typeof syscall === 'number' ? syscall : X86_64_SYSCALLS[syscall];
  return runSeccompFilter(PROGRAM, { nr, arch, instructionPointer: 0x401000n, args });
}

describe('the sandbox seccomp policy', () => {
  it('decides every syscall of the x86_64 table exactly once', () => {
    const listed = [
      ...SANDBOX_SECCOMP_POLICY.allowed,
      ...REFUSED_FAMILIES.flatMap((family) => family.syscalls),
      ...ARGUMENT_RULES.map((rule) => rule.syscall),
    ];
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(Object.keys(X86_64_SYSCALLS).sort());
  });

  it('names the families issue 9 requires', () => {
    const families = new Map(REFUSED_FAMILIES.map((family) => [family.family, family.syscalls]));
    expect(families.get('keyrings')).toEqual(['add_key', 'keyctl', 'request_key']);
    expect(families.get('io_uring')).toEqual(['io_uring_setup', 'io_uring_enter', 'io_uring_register']);
    expect(families.get('kernel modules')).toEqual(
      expect.arrayContaining(['init_module', 'finit_module', 'delete_module']),
    );
    expect(families.get('clock')).toEqual(
      expect.arrayContaining(['clock_settime', 'clock_adjtime', 'settimeofday']),
    );
    expect(families.get('reboot and kexec')).toEqual(['reboot', 'kexec_load', 'kexec_file_load']);
    expect(families.get('bpf')).toEqual(['bpf']);
    expect(families.get('perf_event_open')).toEqual(['perf_event_open']);
    expect(families.get('mount')).toEqual(
      expect.arrayContaining([
        'mount',
        'umount2',
        'pivot_root',
        'move_mount',
        'open_tree',
        'fsopen',
        'fsmount',
      ]),
    );
    expect(families.get('namespace creation')).toEqual(['unshare', 'setns']);
  });

  describe.each(REFUSED_FAMILIES)('refuses the $family family', ({ syscalls, errno }) => {
    it.each(syscalls)(`%s fails with errno ${String(errno)}`, (name) => {
      expect(verdict(name)).toBe(retErrno(errno));
      expect(verdict(name, [1n, 0xffffffffn, 2n ** 63n, 0n, 7n, 0n])).toBe(retErrno(errno));
    });
  });

  it.each<X86_64SyscallName>([
    'read',
    'write',
    'openat',
    'close',
    'mmap',
    'mprotect',
    'brk',
    'execve',
    'wait4',
    'futex',
    'epoll_wait',
    'rt_sigaction',
    'getrandom',
    'connect',
    'setuid',
    'setgroups',
    'chown',
    'kill',
    'prctl',
    'arch_prctl',
    'rseq',
    'statx',
    'pipe2',
    'fork',
    'vfork',
    'ptrace',
  ])('allows %s', (name) => expect(verdict(name, [3n, 4n])).toBe(RET_ALLOW));

  it('allows clone for fork and threads, whatever the high word', () => {
    expect(verdict('clone', [BigInt(FORK_FLAGS)])).toBe(RET_ALLOW);
    expect(verdict('clone', [BigInt(THREAD_FLAGS)])).toBe(RET_ALLOW);
    expect(verdict('clone', [0xffffffff_00000000n | BigInt(FORK_FLAGS)])).toBe(RET_ALLOW);
  });

  it.each(Object.entries(CLONE_NEW))('refuses clone with CLONE_%s (EPERM)', (_, flag) => {
    expect(verdict('clone', [BigInt(flag)])).toBe(retErrno(EPERM));
    expect(verdict('clone', [BigInt(flag | FORK_FLAGS)])).toBe(retErrno(EPERM));
    expect(verdict('clone', [(1n << 40n) | BigInt(flag | THREAD_FLAGS)])).toBe(retErrno(EPERM));
  });

  it('answers clone3 with ENOSYS, so glibc falls back to clone', () => {
    expect(verdict('clone3', [0n, 88n])).toBe(retErrno(ENOSYS));
  });

  it.each([
    ['i386 (int 0x80)', AUDIT_ARCH_I386],
    ['aarch64', AUDIT_ARCH_AARCH64],
    ['zero', 0],
  ])('kills the process on arch %s', (_, arch) => {
    expect(verdict('getpid', [], arch)).toBe(RET_KILL_PROCESS);
    expect(verdict(20, [], arch)).toBe(RET_KILL_PROCESS);
  });

  it('refuses x32 syscalls with EPERM', () => {
    expect(verdict(X32_SYSCALL_BIT | X86_64_SYSCALLS.getpid)).toBe(retErrno(EPERM));
    expect(verdict(X32_SYSCALL_BIT | 512)).toBe(retErrno(EPERM));
    expect(verdict(0xffffffff)).toBe(retErrno(EPERM));
  });

  it('answers numbers the table does not name with ENOSYS (newer syscalls fall back)', () => {
    for (const nr of [335, 400, 423, 451, 452, 462, 1000, 0x3fffffff, 0x80000000]) {
      expect(verdict(nr)).toBe(retErrno(ENOSYS));
    }
  });

  it('allows sockets of AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK only', () => {
    for (const family of [1n, 2n, 10n, 16n]) expect(verdict('socket', [family, 1n, 0n])).toBe(RET_ALLOW);
    // AF_VSOCK (40), AF_ALG (38), AF_PACKET (17), AF_TIPC (30), AF_KCM (41); high bits change nothing.
    for (const family of [40n, 38n, 17n, 30n, 41n, 0n, (1n << 32n) | 40n]) {
      expect(verdict('socket', [family, 1n, 0n])).toBe(retErrno(EPERM));
    }
  });

  it('allows only the personalities moby allows', () => {
    for (const persona of ALLOWED_PERSONALITIES)
      expect(verdict('personality', [BigInt(persona)])).toBe(RET_ALLOW);
    // ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, PER_SVR4.
    for (const persona of [0x0040000n, 0x0400000n, 0x04100001n]) {
      expect(verdict('personality', [persona])).toBe(retErrno(EPERM));
    }
  });

  it('refuses TIOCSTI and TIOCLINUX, and allows other ioctls', () => {
    expect(verdict('ioctl', [0n, 0x5412n])).toBe(retErrno(EPERM));
    expect(verdict('ioctl', [0n, (1n << 32n) | 0x5412n])).toBe(retErrno(EPERM));
    expect(verdict('ioctl', [0n, 0x541cn])).toBe(retErrno(EPERM));
    expect(verdict('ioctl', [1n, 0x5401n])).toBe(RET_ALLOW); // TCGETS
  });

  it('is a well-formed program far below BPF_MAXINSNS', () => {
    expect(programProblem(PROGRAM)).toBeUndefined();
    expect(PROGRAM.length).toBeLessThan(200);
    expect(PROGRAM.length).toBeLessThan(BPF_MAXINSNS);
  });

  it('rejects a policy naming an unknown syscall or one twice', () => {
    const unknown = { ...SANDBOX_SECCOMP_POLICY, allowed: ['no_such_call' as X86_64SyscallName] };
    expect(() => compileSeccompFilter(unknown)).toThrow(/no x86_64 syscall no_such_call/);
    const twice = {
      ...SANDBOX_SECCOMP_POLICY,
      allowed: [...SANDBOX_SECCOMP_POLICY.allowed, 'keyctl' as const],
    };
    expect(() => compileSeccompFilter(twice)).toThrow(/keyctl is listed twice/);
  });
});

describe('the test interpreter', () => {
  it('refuses programs the kernel would refuse', () => {
    const ret = { code: 0x06, jt: 0, jf: 0, k: 0 };
    expect(programProblem([])).toMatch(/length/);
    expect(programProblem([{ code: 0x15, jt: 1, jf: 0, k: 0 }, ret])).toMatch(/out of range/);
    expect(programProblem([{ code: 0x20, jt: 0, jf: 0, k: 64 }, ret])).toMatch(/outside seccomp_data/);
    expect(programProblem([{ code: 0x28, jt: 0, jf: 0, k: 0 }, ret])).toMatch(/not allowed/);
    expect(programProblem([ret, { code: 0x20, jt: 0, jf: 0, k: 0 }])).toMatch(/last instruction/);
  });
});
