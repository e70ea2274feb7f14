/**
 * The syscall policy of sandbox code, as data: a default-deny allowlist written family by family,
 * the refused families named (so tests can iterate them), and the few syscalls decided by an
 * argument. `seccomp-bpf.ts` compiles it. Anchor: moby's default seccomp profile for a container
 * without extra capabilities: everything allowed here unconditionally is allowed there
 * unconditionally or for a capability sandboxd keeps (SETUID, SETGID, KILL, CHOWN, DAC_READ_SEARCH),
 * and this policy refuses more (see `REFUSED_FAMILIES`).
 */
import { constants } from 'node:os';
import type { X86_64SyscallName } from './x86-64-syscalls.js';

/** What the filter does with a syscall. */
export type SeccompAction =
  | { readonly type: 'allow' }
  | { readonly type: 'errno'; readonly errno: number }
  | { readonly type: 'kill-process' };

/** A test of the low 32 bits of one syscall argument. */
export type ArgumentTest =
  | { readonly type: 'equals'; readonly value: number }
  | { readonly type: 'any-bit-set'; readonly mask: number };

/** One check of an argument rule: when `test` holds for argument `arg`, `action` is taken. */
export interface ArgumentCheck {
  readonly arg: 0 | 1 | 2 | 3 | 4 | 5;
  readonly test: ArgumentTest;
  readonly action: SeccompAction;
}

/**
 * A syscall decided by its arguments: the first check that holds decides, else `otherwise`. Only the
 * low 32 bits are read, which is exactly what the kernel uses for each argument ruled here (`int` or
 * `unsigned int` parameters; `clone` takes `lower_32_bits(clone_flags)`), so high bits cannot smuggle
 * a value past a check.
 */
export interface ArgumentRule {
  readonly syscall: X86_64SyscallName;
  readonly checks: readonly ArgumentCheck[];
  readonly otherwise: SeccompAction;
  readonly why: string;
}

/** A named family the policy refuses, with the errno the caller sees. */
export interface RefusedFamily {
  readonly family: string;
  readonly syscalls: readonly X86_64SyscallName[];
  readonly errno: number;
  readonly why: string;
}

/** A complete seccomp policy for x86_64 processes. */
export interface SeccompPolicy {
  /** Syscalls allowed whatever their arguments. */
  readonly allowed: readonly X86_64SyscallName[];
  readonly refused: readonly RefusedFamily[];
  readonly argumentRules: readonly ArgumentRule[];
  /** A syscall of the table listed nowhere above. */
  readonly unlisted: SeccompAction;
  /** A number the x86_64 table does not name (newer than the table, or a gap). */
  readonly unknown: SeccompAction;
  /** An x32 syscall (number with bit 30 set). */
  readonly x32: SeccompAction;
  /** Any architecture but x86_64, the i386 `int 0x80` entry included. */
  readonly foreignArch: SeccompAction;
}

/** The audit architecture of x86_64 syscalls (`AUDIT_ARCH_X86_64`), as `seccomp_data.arch` holds it. */
export const AUDIT_ARCH_X86_64 = 0xc000003e;

/** Bit 30 of the syscall number marks the x32 ABI (`__X32_SYSCALL_BIT`). */
export const X32_SYSCALL_BIT = 0x40000000;

const { EPERM, ENOSYS } = constants.errno;

/** Allow. */
export const ALLOW: SeccompAction = { type: 'allow' };
/** Fail with EPERM, as moby's profile does for what it refuses. */
export const REFUSE: SeccompAction = { type: 'errno', errno: EPERM };
/** Fail with ENOSYS: "this kernel has no such call", which libcs answer by falling back. */
export const NOT_IMPLEMENTED: SeccompAction = { type: 'errno', errno: ENOSYS };
/** Kill the whole process (SIGSYS). */
export const KILL_PROCESS: SeccompAction = { type: 'kill-process' };

/** `CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET` (moby's mask). */
export const CLONE_NAMESPACE_FLAGS = 0x7e020000;

/** Address families sandbox code may open: AF_UNIX, AF_INET, AF_INET6, AF_NETLINK (getaddrinfo, getifaddrs). */
export const ALLOWED_ADDRESS_FAMILIES: readonly number[] = [1, 2, 10, 16];

/** `personality` values moby allows: PER_LINUX, PER_LINUX32, UNAME26, both, and 0xffffffff (query). */
export const ALLOWED_PERSONALITIES: readonly number[] = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

/** Terminal ioctls that inject input or drive the console: TIOCSTI, TIOCLINUX. */
export const REFUSED_IOCTLS: readonly number[] = [0x5412, 0x541c];

/** Allowed syscalls, family by family. */
// prettier-ignore
export const ALLOWED_FAMILIES: Readonly<Record<string, readonly X86_64SyscallName[]>> = {
  files: [
    'open', 'openat', 'openat2', 'creat', 'close', 'close_range', 'read', 'write', 'pread64',
    'pwrite64', 'readv', 'writev', 'preadv', 'pwritev', 'preadv2', 'pwritev2', 'lseek', 'stat',
    'fstat', 'lstat', 'newfstatat', 'statx', 'statfs', 'fstatfs', 'access', 'faccessat',
    'faccessat2', 'getdents', 'getdents64', 'getcwd', 'chdir', 'fchdir', 'rename', 'renameat',
    'renameat2', 'mkdir', 'mkdirat', 'rmdir', 'link', 'linkat', 'unlink', 'unlinkat', 'symlink',
    'symlinkat', 'readlink', 'readlinkat', 'chmod', 'fchmod', 'fchmodat', 'chown', 'fchown',
    'lchown', 'fchownat', 'umask', 'truncate', 'ftruncate', 'fallocate', 'fsync', 'fdatasync',
    'sync', 'syncfs', 'sync_file_range', 'fadvise64', 'readahead', 'flock', 'fcntl', 'dup', 'dup2',
    'dup3', 'pipe', 'pipe2', 'utime', 'utimes', 'futimesat', 'utimensat', 'mknod', 'mknodat',
    'sendfile', 'splice', 'tee', 'vmsplice', 'copy_file_range',
  ],
  xattrs: [
    'setxattr', 'lsetxattr', 'fsetxattr', 'getxattr', 'lgetxattr', 'fgetxattr', 'listxattr',
    'llistxattr', 'flistxattr', 'removexattr', 'lremovexattr', 'fremovexattr',
  ],
  events: [
    'poll', 'ppoll', 'select', 'pselect6', 'epoll_create', 'epoll_create1', 'epoll_ctl',
    'epoll_wait', 'epoll_pwait', 'epoll_pwait2', 'eventfd', 'eventfd2', 'signalfd', 'signalfd4',
    'timerfd_create', 'timerfd_settime', 'timerfd_gettime', 'inotify_init', 'inotify_init1',
    'inotify_add_watch', 'inotify_rm_watch',
  ],
  // POSIX AIO (not io_uring): bounded by fs.aio-max-nr, allowed by moby.
  aio: ['io_setup', 'io_destroy', 'io_getevents', 'io_pgetevents', 'io_submit', 'io_cancel'],
  memory: [
    'brk', 'mmap', 'munmap', 'mremap', 'mprotect', 'msync', 'mincore', 'madvise', 'mlock',
    'mlock2', 'munlock', 'mlockall', 'munlockall', 'memfd_create', 'memfd_secret', 'membarrier',
    'pkey_mprotect', 'pkey_alloc', 'pkey_free', 'remap_file_pages',
  ],
  processes: [
    'fork', 'vfork', 'execve', 'execveat', 'exit', 'exit_group', 'wait4', 'waitid', 'getpid',
    'getppid', 'gettid', 'set_tid_address', 'arch_prctl', 'prctl', 'rseq', 'set_robust_list',
    'get_robust_list', 'futex', 'futex_waitv', 'restart_syscall', 'getpgid', 'setpgid', 'getpgrp',
    'getsid', 'setsid', 'capget', 'capset', 'getrlimit', 'setrlimit', 'prlimit64', 'getrusage',
    'getpriority', 'setpriority', 'sched_setparam', 'sched_getparam', 'sched_setscheduler',
    'sched_getscheduler', 'sched_get_priority_max', 'sched_get_priority_min',
    'sched_rr_get_interval', 'sched_setaffinity', 'sched_getaffinity', 'sched_setattr',
    'sched_getattr', 'sched_yield', 'ioprio_get', 'ioprio_set', 'seccomp',
    'landlock_create_ruleset', 'landlock_add_rule', 'landlock_restrict_self', 'pidfd_open',
    'process_mrelease', 'kill', 'tkill', 'tgkill', 'pidfd_send_signal',
  ],
  // moby allows these on kernels ≥ 4.8, where seccomp runs again after a tracer rewrites a syscall,
  // so a tracee cannot be steered around this filter; the kernel's ptrace access check (same uid,
  // dumpable, no extra capabilities) keeps uid 1000 away from sandboxd. gdb and strace need them.
  debugging: ['ptrace', 'process_vm_readv', 'process_vm_writev'],
  signals: [
    'rt_sigaction', 'rt_sigprocmask', 'rt_sigreturn', 'rt_sigpending', 'rt_sigtimedwait',
    'rt_sigqueueinfo', 'rt_tgsigqueueinfo', 'rt_sigsuspend', 'sigaltstack', 'pause', 'alarm',
    'getitimer', 'setitimer', 'timer_create', 'timer_settime', 'timer_gettime', 'timer_getoverrun',
    'timer_delete',
  ],
  // sandboxd drops to uid 1000 with these; they work only within the user namespace's mapping.
  identity: [
    'getuid', 'geteuid', 'getgid', 'getegid', 'getresuid', 'getresgid', 'getgroups', 'setuid',
    'setgid', 'setreuid', 'setregid', 'setresuid', 'setresgid', 'setfsuid', 'setfsgid', 'setgroups',
  ],
  time: ['time', 'gettimeofday', 'clock_gettime', 'clock_getres', 'clock_nanosleep', 'nanosleep', 'times'],
  system: ['uname', 'sysinfo', 'getcpu', 'getrandom'],
  network: [
    'connect', 'accept', 'accept4', 'bind', 'listen', 'shutdown', 'sendto', 'recvfrom', 'sendmsg',
    'recvmsg', 'sendmmsg', 'recvmmsg', 'getsockname', 'getpeername', 'setsockopt', 'getsockopt',
    'socketpair',
  ],
  // System V and POSIX IPC: private to the sandbox's IPC namespace.
  ipc: [
    'shmget', 'shmat', 'shmctl', 'shmdt', 'semget', 'semop', 'semctl', 'semtimedop', 'msgget',
    'msgsnd', 'msgrcv', 'msgctl', 'mq_open', 'mq_unlink', 'mq_timedsend', 'mq_timedreceive',
    'mq_notify', 'mq_getsetattr',
  ],
};

/** Refused families. EPERM, as moby answers, except where a fallback needs ENOSYS. */
export const REFUSED_FAMILIES: readonly RefusedFamily[] = [
  {
    family: 'keyrings',
    syscalls: ['add_key', 'keyctl', 'request_key'],
    errno: EPERM,
    why: 'the kernel keyring is not namespaced and has a long record of bugs',
  },
  {
    family: 'io_uring',
    syscalls: ['io_uring_setup', 'io_uring_enter', 'io_uring_register'],
    errno: EPERM,
    why: 'a second syscall interface that seccomp cannot see into; libuv falls back to its thread pool',
  },
  {
    family: 'kernel modules',
    syscalls: [
      'init_module',
      'finit_module',
      'delete_module',
      'create_module',
      'query_module',
      'get_kernel_syms',
    ],
    errno: EPERM,
    why: 'loading code into the kernel',
  },
  {
    // x86_64 has no stime. glibc's adjtimex() and ntp_gettime() issue clock_adjtime, so allowing the
    // raw adjtimex (as moby does) would only serve raw callers; the family is refused whole.
    family: 'clock',
    syscalls: ['clock_settime', 'clock_adjtime', 'settimeofday', 'adjtimex'],
    errno: EPERM,
    why: 'the clocks belong to the host; reading them goes through clock_gettime',
  },
  {
    family: 'reboot and kexec',
    syscalls: ['reboot', 'kexec_load', 'kexec_file_load'],
    errno: EPERM,
    why: 'restarting or replacing the kernel',
  },
  { family: 'bpf', syscalls: ['bpf'], errno: EPERM, why: 'loading programs into the kernel' },
  {
    family: 'perf_event_open',
    syscalls: ['perf_event_open'],
    errno: EPERM,
    why: 'host-wide performance counters and a record of kernel bugs',
  },
  {
    family: 'mount',
    syscalls: [
      'mount',
      'umount2',
      'pivot_root',
      'chroot',
      'move_mount',
      'open_tree',
      'fsopen',
      'fsconfig',
      'fsmount',
      'fspick',
      'mount_setattr',
    ],
    errno: EPERM,
    why: 'the filesystem view is the driver’s to set up, not sandbox code’s',
  },
  {
    // clone is ruled by its flags (ARGUMENT_RULES); clone3 answers ENOSYS (below).
    family: 'namespace creation',
    syscalls: ['unshare', 'setns'],
    errno: EPERM,
    why: 'new namespaces reach kernel code paths an unprivileged process otherwise cannot',
  },
  {
    // Its flags live in a struct that a classic BPF filter cannot read; ENOSYS makes glibc
    // (≥ 2.34) fall back to clone, whose flags are checked.
    family: 'clone3',
    syscalls: ['clone3'],
    errno: ENOSYS,
    why: 'namespace flags hidden behind a pointer',
  },
  {
    family: 'accounting, swap and quotas',
    syscalls: ['acct', 'swapon', 'swapoff', 'quotactl', 'quotactl_fd'],
    errno: EPERM,
    why: 'host administration',
  },
  {
    family: 'host names',
    syscalls: ['sethostname', 'setdomainname'],
    errno: EPERM,
    why: 'the driver names the sandbox',
  },
  {
    family: 'kernel log and terminals',
    syscalls: ['syslog', 'vhangup'],
    errno: EPERM,
    why: 'the host’s kernel log; hanging up the controlling terminal',
  },
  {
    // open_by_handle_at opens any inode of a mount by handle with CAP_DAC_READ_SEARCH, which
    // sandboxd holds (moby allows it for that capability): the "shocker" escape.
    family: 'file handles',
    syscalls: ['name_to_handle_at', 'open_by_handle_at'],
    errno: EPERM,
    why: 'opening files by handle bypasses the path walk',
  },
  {
    family: 'fanotify',
    syscalls: ['fanotify_init', 'fanotify_mark'],
    errno: EPERM,
    why: 'filesystem-wide event listeners',
  },
  {
    family: 'userfaultfd',
    syscalls: ['userfaultfd'],
    errno: EPERM,
    why: 'stalls kernel page faults at will, a staple of exploit races',
  },
  {
    family: 'process inspection beyond ptrace',
    syscalls: ['kcmp', 'pidfd_getfd', 'process_madvise'],
    errno: EPERM,
    why: 'moby grants them only with CAP_SYS_PTRACE',
  },
  {
    family: 'NUMA',
    syscalls: [
      'mbind',
      'set_mempolicy',
      'get_mempolicy',
      'set_mempolicy_home_node',
      'migrate_pages',
      'move_pages',
    ],
    errno: EPERM,
    why: 'memory placement on the host’s nodes',
  },
  { family: 'raw I/O ports', syscalls: ['iopl', 'ioperm'], errno: EPERM, why: 'hardware access' },
  {
    // moby allows these on amd64; only 16- and 32-bit code needs them, and 32-bit syscalls are killed.
    family: 'x86 segment descriptors',
    syscalls: ['modify_ldt', 'set_thread_area', 'get_thread_area'],
    errno: EPERM,
    why: 'legacy descriptor tables, a record of kernel bugs, unused by 64-bit code',
  },
  {
    family: 'obsolete',
    syscalls: ['uselib', 'ustat', 'sysfs', '_sysctl', 'nfsservctl', 'lookup_dcookie'],
    errno: EPERM,
    why: 'removed or deprecated interfaces nothing current uses',
  },
  {
    family: 'unimplemented',
    syscalls: [
      'getpmsg',
      'putpmsg',
      'afs_syscall',
      'tuxcall',
      'security',
      'vserver',
      'epoll_ctl_old',
      'epoll_wait_old',
    ],
    errno: EPERM,
    why: 'numbers x86_64 reserves but does not implement',
  },
];

/** Syscalls decided by an argument. */
export const ARGUMENT_RULES: readonly ArgumentRule[] = [
  {
    syscall: 'clone',
    checks: [{ arg: 0, test: { type: 'any-bit-set', mask: CLONE_NAMESPACE_FLAGS }, action: REFUSE }],
    otherwise: ALLOW,
    why: 'threads and fork, but no new namespace',
  },
  {
    syscall: 'socket',
    checks: ALLOWED_ADDRESS_FAMILIES.map((value) => ({
      arg: 0,
      test: { type: 'equals', value },
      action: ALLOW,
    })),
    otherwise: REFUSE,
    why: 'moby refuses AF_VSOCK (the VM host) and AF_ALG; we also refuse rare families (TIPC, RDS, KCM, …)',
  },
  {
    syscall: 'personality',
    checks: ALLOWED_PERSONALITIES.map((value) => ({
      arg: 0,
      test: { type: 'equals', value },
      action: ALLOW,
    })),
    otherwise: REFUSE,
    why: 'moby’s values; READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE and the rest weaken the process',
  },
  {
    syscall: 'ioctl',
    checks: REFUSED_IOCTLS.map((value) => ({ arg: 1, test: { type: 'equals', value }, action: REFUSE })),
    otherwise: ALLOW,
    why: 'pushing input into a terminal another process reads',
  },
];

/** The policy of every process of a sandbox. */
export const SANDBOX_SECCOMP_POLICY: SeccompPolicy = {
  allowed: Object.values(ALLOWED_FAMILIES).flat(),
  refused: REFUSED_FAMILIES,
  argumentRules: ARGUMENT_RULES,
  unlisted: REFUSE,
  unknown: NOT_IMPLEMENTED,
  x32: REFUSE,
  foreignArch: KILL_PROCESS,
};

/**
 * sandboxd's policy (issue 25: it runs beside the sandbox): the sandbox's, but `setns`, with which
 * `sdk-exec enter` takes each process of sandbox code into the sandbox. Making namespaces stays refused,
 * and so does everything else the sandbox may not do.
 */
export const SANDBOXD_SECCOMP_POLICY: SeccompPolicy = {
  ...SANDBOX_SECCOMP_POLICY,
  allowed: [...SANDBOX_SECCOMP_POLICY.allowed, 'setns'],
  refused: REFUSED_FAMILIES.map((family) => ({
    ...family,
    syscalls: family.syscalls.filter((name) => name !== 'setns'),
  })),
};
