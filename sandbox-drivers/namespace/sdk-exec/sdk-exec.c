/*
 * sdk-exec: the small privileged steps of a sandbox, which Node cannot take (README.md beside this file).
 *
 *   sdk-exec daemon [placement] [layout] --uid N --gid N [--seccomp-fd N] -- PROGRAM ARGS...
 *     sandboxd's own place: joins the sandbox's cgroups and network namespace, makes a mount, pid, ipc
 *     and uts namespace of its own, lays out its root, and runs PROGRAM as host uid N with no capability
 *     (pid 2; pid 1 reaps). Reports "init <host pid of pid 1>" on the status fd.
 *   sdk-exec box [placement] --userns PATH --pidns PATH --hostname NAME [layout] [--seccomp-fd N] -- PROGRAM
 *     the sandbox: as its root (ids 0 of the user namespace at PATH), a mount, pid, ipc, uts and cgroup
 *     namespace of its own whose pid namespace is a child of PATH's (sandboxd's), its root laid out,
 *     moby's capabilities, the seccomp filter, then PROGRAM as its pid 1. Reports "box <pid>" (the pid in
 *     sandboxd's pid namespace) on the status fd.
 *   sdk-exec enter --target PID --uid N --gid N [--procs FILE] [--cwd DIR] [--nofile N]
 *                  [--oom-score-adj N] [--seccomp-fd N] [--env-fd N] [--status-fd N] -- PROGRAM ARGS...
 *     one process of sandbox code, started by sandboxd: joins the commands' cgroup, then every namespace
 *     of PID (the sandbox's pid 1) but the network one it shares, and runs PROGRAM there as uid N, in a
 *     session of its own, with moby's capabilities for root and none for anyone else, under the seccomp
 *     filter. Reports "pid <pid in the sandbox>" and "tree <pid in sandboxd's pid namespace>" on the
 *     status fd, in either order; "error <stage> <errno>" when it could not start PROGRAM. The status fd
 *     closes, with no error line, once PROGRAM runs.
 *   sdk-exec idmap --userns PATH -- SOURCE TARGET
 *     mounts SOURCE at TARGET with its ids shifted by the user namespace at PATH's mapping (an idmapped
 *     mount): the template's image, whose files host root owns, becomes the sandbox root's in its view.
 *   sdk-exec init
 *     the sandbox's pid 1: reaps every orphan, immune to signals.
 *
 * placement: --procs FILE (repeatable) --netns PATH --status-fd N
 * layout:    --root DIR (a folder to build the new root on) then, in order: --bind SRC DST,
 *            --ro-bind SRC DST, --tmpfs DST BYTES MODE, --proc DST, --dev DST, --dir DST,
 *            --symlink TARGET DST; DST are paths in the new root. With --root-bind SRC the new root is a
 *            bind of SRC instead of a tmpfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* moby's default capabilities (oci/caps/defaults.go): what the sandbox's root holds. */
static const int MOBY_CAPS[] = {
    CAP_CHOWN,  CAP_DAC_OVERRIDE, CAP_FSETID,          CAP_FOWNER,     CAP_MKNOD,
    CAP_NET_RAW, CAP_SETGID,      CAP_SETUID,          CAP_SETFCAP,    CAP_SETPCAP,
    CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT, CAP_KILL,    CAP_AUDIT_WRITE,
};

#define MAX_OPS 64
#define MAX_PROCS 8

struct op {
  const char *kind, *a, *b, *c;
};

struct options {
  const char *procs[MAX_PROCS];
  int nprocs;
  const char *netns, *userns, *pidns, *hostname, *root, *root_bind, *cwd;
  long uid, gid, target, nofile, oom;
  int seccomp_fd, env_fd, status_fd;
  struct op ops[MAX_OPS];
  int nops;
  char **argv;
};

static int status_fd = -1;

/* Says why it stops, on the status fd when there is one (sandboxd reads it), and on stderr. */
static void fail(const char *stage, int error) {
  if (status_fd >= 0) dprintf(status_fd, "error %s %d\n", stage, error);
  else dprintf(2, "sdk-exec: %s: %s\n", stage, strerror(error));
  _exit(127);
}

static void check(int result, const char *stage) {
  if (result < 0) fail(stage, errno);
}

static long number(const char *text) {
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || end == text) fail("usage", EINVAL);
  return value;
}

static void parse(int argc, char **argv, struct options *o) {
  memset(o, 0, sizeof *o);
  o->uid = o->gid = o->target = o->nofile = -1;
  o->oom = LONG_MIN;
  o->seccomp_fd = o->env_fd = o->status_fd = -1;
  for (int i = 2; i < argc; i++) {
    const char *arg = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (fail("usage", EINVAL), (char *)0))
    if (strcmp(arg, "--") == 0) {
      o->argv = argv + i + 1;
      return;
    } else if (strcmp(arg, "--procs") == 0) {
      if (o->nprocs == MAX_PROCS) fail("usage", E2BIG);
      o->procs[o->nprocs++] = NEXT();
    } else if (strcmp(arg, "--netns") == 0) o->netns = NEXT();
    else if (strcmp(arg, "--userns") == 0) o->userns = NEXT();
    else if (strcmp(arg, "--pidns") == 0) o->pidns = NEXT();
    else if (strcmp(arg, "--hostname") == 0) o->hostname = NEXT();
    else if (strcmp(arg, "--root") == 0) o->root = NEXT();
    else if (strcmp(arg, "--root-bind") == 0) o->root_bind = NEXT();
    else if (strcmp(arg, "--cwd") == 0) o->cwd = NEXT();
    else if (strcmp(arg, "--uid") == 0) o->uid = number(NEXT());
    else if (strcmp(arg, "--gid") == 0) o->gid = number(NEXT());
    else if (strcmp(arg, "--target") == 0) o->target = number(NEXT());
    else if (strcmp(arg, "--nofile") == 0) o->nofile = number(NEXT());
    else if (strcmp(arg, "--oom-score-adj") == 0) o->oom = number(NEXT());
    else if (strcmp(arg, "--seccomp-fd") == 0) o->seccomp_fd = (int)number(NEXT());
    else if (strcmp(arg, "--env-fd") == 0) o->env_fd = (int)number(NEXT());
    else if (strcmp(arg, "--status-fd") == 0) o->status_fd = (int)number(NEXT());
    else if (strncmp(arg, "--", 2) == 0) {
      if (o->nops == MAX_OPS) fail("usage", E2BIG);
      struct op *op = &o->ops[o->nops++];
      op->kind = arg + 2;
      int operands = strcmp(op->kind, "tmpfs") == 0                                       ? 3
                     : strcmp(op->kind, "proc") == 0 || strcmp(op->kind, "dev") == 0 ||
                             strcmp(op->kind, "dir") == 0                                  ? 1
                     : strcmp(op->kind, "bind") == 0 || strcmp(op->kind, "ro-bind") == 0 ||
                             strcmp(op->kind, "symlink") == 0                              ? 2
                                                                                           : -1;
      if (operands < 0) fail("usage", EINVAL);
      op->a = NEXT();
      if (operands > 1) op->b = NEXT();
      if (operands > 2) op->c = NEXT();
    } else {
      dprintf(2, "sdk-exec: unknown option %s\n", arg);
      fail("usage", EINVAL);
    }
#undef NEXT
  }
  /* No "--": no program (only init may have none). */
}

/* Reads all of fd into a new buffer; *size gets its length. */
static char *slurp(int fd, size_t *size) {
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  if (buf == NULL) fail("read", ENOMEM);
  for (;;) {
    if (len == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (buf == NULL) fail("read", ENOMEM);
    }
    ssize_t n = read(fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read", errno);
    if (n == 0) break;
    len += (size_t)n;
  }
  close(fd);
  *size = len;
  return buf;
}

static void write_file(const char *path, const char *text, const char *stage) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail(stage, errno);
  size_t len = strlen(text);
  if (write(fd, text, len) != (ssize_t)len) fail(stage, errno);
  close(fd);
}

static void join_cgroups(const struct options *o) {
  char pid[32];
  snprintf(pid, sizeof pid, "%d\n", getpid());
  for (int i = 0; i < o->nprocs; i++) write_file(o->procs[i], pid, "cgroup");
}

static void join(const char *path, int type, const char *stage) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(stage, errno);
  check(setns(fd, type), stage);
  close(fd);
}

/* mkdir -p of an absolute path. */
static void make_dirs(const char *path) {
  char buf[4096];
  if (strlen(path) >= sizeof buf) fail("layout", ENAMETOOLONG);
  strcpy(buf, path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0755) < 0 && errno != EEXIST) fail("layout", errno);
    *p = '/';
  }
  if (mkdir(buf, 0755) < 0 && errno != EEXIST) fail("layout", errno);
}

static void make_file(const char *path) {
  char dir[4096];
  if (strlen(path) >= sizeof dir) fail("layout", ENAMETOOLONG);
  strcpy(dir, path);
  char *slash = strrchr(dir, '/');
  if (slash != NULL && slash != dir) {
    *slash = '\0';
    make_dirs(dir);
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail("layout", errno);
  close(fd);
}

/* The mount point of a bind: a folder, or an empty file for a file. */
static void bind(const char *source, const char *target, unsigned long flags) {
  struct stat st;
  if (stat(source, &st) < 0) fail("layout", errno);
  if (S_ISDIR(st.st_mode)) make_dirs(target);
  else make_file(target);
  check(mount(source, target, NULL, MS_BIND | MS_REC, NULL), "bind");
  if (flags != 0) check(mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | flags, NULL), "bind");
}

/* out = dir + "/" + name, refused when it does not fit. */
static void child_path(char *out, size_t size, const char *dir, const char *name) {
  if ((size_t)snprintf(out, size, "%s/%s", dir, name) >= size) fail("layout", ENAMETOOLONG);
}

static void path_in(char *out, size_t size, const char *root, const char *dst) {
  if (dst[0] != '/' || strstr(dst, "..") != NULL) fail("layout", EINVAL);
  if ((size_t)snprintf(out, size, "%s%s", root, dst) >= size) fail("layout", ENAMETOOLONG);
}

/* Builds the new root at o->root and moves into it (pivot_root), leaving nothing of the old one. */
static void lay_out(const struct options *o, unsigned long root_flags) {
  if (o->root == NULL) fail("usage", EINVAL);
  check(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "layout");
  if (o->root_bind != NULL) bind(o->root_bind, o->root, root_flags);
  else check(mount("sdk-root", o->root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755"), "layout");
  char target[4096], source[4096];
  for (int i = 0; i < o->nops; i++) {
    const struct op *op = &o->ops[i];
    const char *dst = strcmp(op->kind, "bind") == 0 || strcmp(op->kind, "ro-bind") == 0 ||
                              strcmp(op->kind, "symlink") == 0
                          ? op->b
                          : op->a;
    path_in(target, sizeof target, o->root, dst);
    if (strcmp(op->kind, "bind") == 0) bind(op->a, target, MS_NOSUID | MS_NODEV);
    else if (strcmp(op->kind, "ro-bind") == 0) bind(op->a, target, MS_NOSUID | MS_NODEV | MS_RDONLY);
    else if (strcmp(op->kind, "dir") == 0) make_dirs(target);
    else if (strcmp(op->kind, "symlink") == 0) {
      if (symlink(op->a, target) < 0 && errno != EEXIST) fail("layout", errno);
    } else if (strcmp(op->kind, "tmpfs") == 0) {
      char data[64];
      snprintf(data, sizeof data, "size=%s,mode=%s", op->b, op->c);
      make_dirs(target);
      check(mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, data), "tmpfs");
    } else if (strcmp(op->kind, "proc") == 0) {
      make_dirs(target);
      check(mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), "proc");
    } else if (strcmp(op->kind, "dev") == 0) {
      static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
      make_dirs(target);
      check(mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755"), "dev");
      for (size_t n = 0; n < sizeof nodes / sizeof *nodes; n++) {
        snprintf(source, sizeof source, "/dev/%s", nodes[n]);
        char node[4096];
        child_path(node, sizeof node, target, nodes[n]);
        bind(source, node, MS_NOSUID | MS_NOEXEC);
      }
      static const char *const links[][2] = {{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
                                             {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
                                             {"pts/ptmx", "ptmx"}};
      for (size_t n = 0; n < sizeof links / sizeof *links; n++) {
        char link[4096];
        child_path(link, sizeof link, target, links[n][1]);
        check(symlink(links[n][0], link), "dev");
      }
      child_path(source, sizeof source, target, "shm");
      make_dirs(source);
      check(mount("shm", source, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=1777"), "dev");
      child_path(source, sizeof source, target, "pts");
      make_dirs(source);
      check(mount("devpts", source, "devpts", MS_NOSUID | MS_NOEXEC,
                  "newinstance,ptmxmode=0666,mode=0620"),
            "dev");
    }
  }
  check(chdir(o->root), "pivot");
  check((int)syscall(SYS_pivot_root, ".", "."), "pivot");
  check(umount2(".", MNT_DETACH), "pivot");
  check(chdir("/"), "pivot");
}

static int is_moby(int cap) {
  for (size_t i = 0; i < sizeof MOBY_CAPS / sizeof *MOBY_CAPS; i++)
    if (MOBY_CAPS[i] == cap) return 1;
  return 0;
}

/* Keeps only `keep` (moby's set, or nothing) in the bounding set, and no ambient capability. */
static void bound_capabilities(int keep_moby) {
  for (int cap = 0; cap <= CAP_LAST_CAP; cap++) {
    if (keep_moby && is_moby(cap)) continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) fail("capabilities", errno);
  }
  check(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "capabilities");
}

/* Root gets moby's capabilities as effective and permitted, nothing inheritable. */
static void set_root_capabilities(void) {
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  for (size_t i = 0; i < sizeof MOBY_CAPS / sizeof *MOBY_CAPS; i++) {
    int cap = MOBY_CAPS[i];
    data[cap / 32].effective |= 1u << (cap % 32);
    data[cap / 32].permitted |= 1u << (cap % 32);
  }
  check((int)syscall(SYS_capset, &header, data), "capabilities");
}

/* No capability at all: effective, permitted and inheritable empty. */
static void drop_capabilities(void) {
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  check((int)syscall(SYS_capset, &header, data), "capabilities");
}

static void load_seccomp(int fd) {
  if (fd < 0) return;
  size_t size;
  char *program = slurp(fd, &size);
  if (size == 0 || size % sizeof(struct sock_filter) != 0) fail("seccomp", EINVAL);
  struct sock_fprog prog = {(unsigned short)(size / sizeof(struct sock_filter)),
                            (struct sock_filter *)program};
  check((int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog), "seccomp");
  free(program);
}

static void become(long uid, long gid) {
  check(setgroups(0, NULL), "ids");
  check(setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid), "ids");
  check(setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid), "ids");
}

static pid_t child_pid;

static void forward(int signal) {
  if (child_pid > 0) kill(child_pid, signal);
}

/*
 * Waits for `pid` and ends as it ended (same code, or the same signal). With `pass_on`, the signals it
 * gets meanwhile go to `pid` (a command's, which sandboxd signals); without, they are ignored: the first
 * processes of a launch chain, which nothing should signal (the driver ends a sandbox through its
 * cgroup), are not ended by a stray signal sent to a reused pid.
 */
static void wait_and_mirror(pid_t pid, int pass_on) {
  child_pid = pid;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = pass_on ? forward : SIG_IGN;
  static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
                                  SIGWINCH, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
  for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) sigaction(forwarded[i], &action, NULL);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) _exit(127);
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  int signal = WTERMSIG(status);
  sigaction(signal, &(struct sigaction){.sa_handler = SIG_DFL}, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  kill(getpid(), signal);
  _exit(128 + signal);
}

/*
 * pid 1: reaps every child; every signal it can block is blocked and taken only to be dropped, so none
 * reaches it from inside its namespace, nor a stray one from outside. With `main` > 0 it ends as `main`
 * ends.
 */
static void reap_forever(pid_t main) {
  sigset_t set;
  sigfillset(&set);
  sigprocmask(SIG_BLOCK, &set, NULL);
  for (;;) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid == main) {
        if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
        _exit(128 + WTERMSIG(status));
      }
    }
    siginfo_t info;
    sigwaitinfo(&set, &info);
  }
}

static void report(const char *what, long pid) {
  if (status_fd >= 0) dprintf(status_fd, "%s %ld\n", what, pid);
}

/* sandboxd's place (see the top of this file). */
static void run_daemon(struct options *o) {
  if (o->uid < 0 || o->gid < 0 || o->netns == NULL) fail("usage", EINVAL);
  join_cgroups(o);
  join(o->netns, CLONE_NEWNET, "netns");
  check(unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS), "unshare");
  /*
   * The namespace's pid 1 is reported only once sandboxd is its pid 2 (what the driver's watch looks
   * for): the sandbox's chain enters the namespace as soon as it is reported, and takes the next pids.
   */
  int forked[2];
  check(pipe2(forked, O_CLOEXEC), "pipe");
  pid_t init = fork();
  check(init, "fork");
  if (init > 0) {
    close(forked[1]);
    char byte;
    if (read(forked[0], &byte, 1) != 1) fail("fork", ECHILD);
    close(forked[0]);
    report("init", init);
    close(status_fd);
    status_fd = -1;
    wait_and_mirror(init, 0);
  }
  close(forked[0]);
  pid_t daemon = fork();
  check(daemon, "fork");
  if (daemon > 0) {
    check((int)write(forked[1], "", 1), "pipe");
    close(forked[1]);
    close(status_fd);
    status_fd = -1;
    if (o->seccomp_fd >= 0) close(o->seccomp_fd);
    reap_forever(daemon);
  }
  close(forked[1]);
  check(prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), "prctl");
  lay_out(o, MS_NOSUID | MS_NODEV | MS_RDONLY);
  bound_capabilities(0);
  load_seccomp(o->seccomp_fd);
  become(o->uid, o->gid);
  close(status_fd);
  /* Nothing of the launcher's environment (an operator key, cloud credentials). */
  static char *const clean[] = {"PATH=/usr/bin:/bin", NULL};
  execve(o->argv[0], o->argv, clean);
  fail("exec", errno);
}

/* The sandbox itself (see the top of this file). */
static void run_box(struct options *o) {
  if (o->userns == NULL || o->pidns == NULL || o->netns == NULL) fail("usage", EINVAL);
  join_cgroups(o);
  join(o->netns, CLONE_NEWNET, "netns");
  join(o->pidns, CLONE_NEWPID, "pidns");
  pid_t outer = fork(); /* the first process in sandboxd's pid namespace */
  check(outer, "fork");
  if (outer > 0) {
    close(status_fd);
    status_fd = -1;
    wait_and_mirror(outer, 0);
  }
  join(o->userns, CLONE_NEWUSER, "userns");
  become(0, 0);
  check(unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP), "unshare");
  pid_t init = fork();
  check(init, "fork");
  if (init > 0) {
    report("box", init);
    close(status_fd);
    status_fd = -1;
    if (o->seccomp_fd >= 0) close(o->seccomp_fd);
    wait_and_mirror(init, 0);
  }
  check(prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), "prctl");
  close(status_fd);
  status_fd = -1;
  lay_out(o, MS_NODEV);
  if (o->hostname != NULL) check(sethostname(o->hostname, strlen(o->hostname)), "hostname");
  bound_capabilities(1);
  load_seccomp(o->seccomp_fd);
  set_root_capabilities();
  static char *const clean[] = {"PATH=/usr/bin:/bin", NULL};
  execve(o->argv[0], o->argv, clean);
  fail("exec", errno);
}

/* Builds an environment array from NUL-terminated NAME=value strings. */
static char **environment(int fd) {
  if (fd < 0) {
    static char *empty[] = {NULL};
    return empty;
  }
  size_t size;
  char *text = slurp(fd, &size);
  size_t count = 0;
  for (size_t i = 0; i < size; i++) count += text[i] == '\0';
  char **env = calloc(count + 1, sizeof *env);
  if (env == NULL) fail("read", ENOMEM);
  size_t n = 0;
  for (size_t start = 0; start < size && n < count;) {
    env[n++] = text + start;
    start += strlen(text + start) + 1;
  }
  return env;
}

/* An idmapped bind mount (see the top of this file). */
static void run_idmap(struct options *o) {
  if (o->userns == NULL || o->argv[1] == NULL) fail("usage", EINVAL);
  int tree = (int)syscall(SYS_open_tree, AT_FDCWD, o->argv[0],
                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0) fail("open_tree", errno);
  int userns = open(o->userns, O_RDONLY | O_CLOEXEC);
  if (userns < 0) fail("userns", errno);
  struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (__u64)userns};
  check((int)syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr),
        "mount_setattr");
  check((int)syscall(SYS_move_mount, tree, "", AT_FDCWD, o->argv[1], MOVE_MOUNT_F_EMPTY_PATH),
        "move_mount");
  _exit(0);
}

/* One process of sandbox code (see the top of this file). */
static void run_enter(struct options *o) {
  if (o->target <= 0 || o->uid < 0 || o->gid < 0) fail("usage", EINVAL);
  join_cgroups(o);
  if (o->oom != LONG_MIN) {
    char text[32];
    snprintf(text, sizeof text, "%ld\n", o->oom);
    write_file("/proc/self/oom_score_adj", text, "oom");
  }
  if (o->nofile > 0) {
    struct rlimit limit;
    check(getrlimit(RLIMIT_NOFILE, &limit), "rlimit");
    rlim_t wanted = (rlim_t)o->nofile < limit.rlim_max ? (rlim_t)o->nofile : limit.rlim_max;
    limit.rlim_cur = limit.rlim_max = wanted;
    check(setrlimit(RLIMIT_NOFILE, &limit), "rlimit");
  }
  char **env = environment(o->env_fd);
  /* Every namespace is opened before any is joined: /proc is sandboxd's until the mount one is. */
  static const struct {
    const char *name;
    int type;
  } kinds[] = {{"user", CLONE_NEWUSER}, {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS},
               {"cgroup", CLONE_NEWCGROUP}, {"pid", CLONE_NEWPID}, {"mnt", CLONE_NEWNS}};
  int fds[6];
  for (int i = 0; i < 6; i++) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/ns/%s", o->target, kinds[i].name);
    fds[i] = open(path, O_RDONLY | O_CLOEXEC);
    if (fds[i] < 0) fail("namespaces", errno);
  }
  for (int i = 0; i < 6; i++) {
    check(setns(fds[i], kinds[i].type), "namespaces");
    close(fds[i]);
  }
  pid_t pid = fork();
  check(pid, "fork");
  if (pid > 0) {
    report("tree", pid); /* its pid in sandboxd's pid namespace: the root of the tree to end */
    close(status_fd);
    status_fd = -1;
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3; fd++) dup2(null, fd);
    wait_and_mirror(pid, 1);
  }
  check(setsid(), "setsid");
  report("pid", getpid());
  bound_capabilities(1);
  load_seccomp(o->seccomp_fd);
  become(o->uid, o->gid);
  /*
   * Set explicitly, before the working directory is entered: the ids changed from sandboxd's (unmapped
   * here, so not the namespace's root), and the kernel clears no capability on such a change. A user
   * holding them would enter (and keep as its cwd) a folder it may not search.
   */
  if (o->uid == 0) set_root_capabilities();
  else drop_capabilities();
  /* After the ids changed (a change clears it): the command never outlives its supervisor. */
  check(prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), "prctl");
  if (o->cwd != NULL && chdir(o->cwd) < 0) fail("cwd", errno);
  execve(o->argv[0], o->argv, env);
  fail("exec", errno);
}

/*
 * Every descriptor above stdio but the ones named on the command line closes at the next exec: one the
 * launcher inherited from its own parent (a test runner's, a supervisor's) must never reach sandboxd or
 * sandbox code.
 */
static void close_inherited(const struct options *o) {
  int keep[] = {o->status_fd, o->seccomp_fd, o->env_fd};
  int highest = 2;
  for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
    if (keep[i] > highest) highest = keep[i];
  for (int fd = 3; fd <= highest; fd++) {
    int kept = 0;
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) kept |= keep[i] == fd;
    if (!kept) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  check((int)syscall(SYS_close_range, highest + 1, ~0U, CLOSE_RANGE_CLOEXEC), "close_range");
}

int main(int argc, char **argv) {
  if (argc < 2) fail("usage", EINVAL);
  struct options o;
  parse(argc, argv, &o);
  status_fd = o.status_fd;
  close_inherited(&o);
  if (status_fd >= 0) fcntl(status_fd, F_SETFD, FD_CLOEXEC);
  if (strcmp(argv[1], "init") == 0) reap_forever(0);
  else if (o.argv == NULL || o.argv[0] == NULL) fail("usage", EINVAL);
  else if (strcmp(argv[1], "daemon") == 0) run_daemon(&o);
  else if (strcmp(argv[1], "box") == 0) run_box(&o);
  else if (strcmp(argv[1], "enter") == 0) run_enter(&o);
  else if (strcmp(argv[1], "idmap") == 0) run_idmap(&o);
  fail("usage", EINVAL);
}
