/*
 * `gvisor-exec init`, the box's pid 1 (the container's own process, so neither it nor anything it starts
 * is "exec'd": they all outlive a snapshot's restore). It reaps every orphan and is sandbox code's
 * spawner: on its socket (SPAWNER_SOCKET, in a folder of root's alone, so the sandbox user cannot reach
 * it) a bridge (bridge.c) asks for a program; the spawner forks it as the account (its ids; moby's
 * capabilities for root, none for the user; a session of its own; the working directory entered as the
 * account), with pipes of its own for the program's stdin, stdout and stderr, and carries them to and
 * from the bridge in frames. The spawner holds those pipes: when the bridge goes (a restore ends it),
 * the program's stdin ends and its output is read and dropped, so the program never dies of a broken
 * pipe. A program started to be held (a prepared agent runtime, which waits on stdin for its prompt)
 * keeps its stdin instead, and its output up to HIGH_WATER, until a new bridge attaches to it by pid
 * (sandboxd of a copy restored from a snapshot). The program's end is reported once it was reaped and
 * its output ended.
 */
#define _GNU_SOURCE
#include "gvisor-exec.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* Bytes held for a slow side before the other side is no longer read. */
#define HIGH_WATER (256 * 1024)

enum role { LISTENER, SIGNALS, CONNECTION, STDIN, STDOUT, STDERR };

struct program;

/* What epoll hands back: which descriptor of which program. */
struct handle {
  enum role role;
  struct program *program;
};

struct program {
  int conn;                /* the bridge; -1 once it is gone */
  pid_t pid;               /* 0 until started */
  int in, out, err;        /* the spawner's ends of the program's pipes; -1 once closed */
  int reaped;
  int failed;              /* it could not start (FRAME_FAILED sent) */
  unsigned status;
  int stdin_ended;         /* the bridge sent FRAME_STDIN_EOF */
  int hold;                /* it waits for another bridge when its own goes */
  struct text to_conn;     /* frames for the bridge */
  struct text to_in;       /* bytes for the program's stdin */
  struct frame_reader reader;
  struct handle handles[4]; /* CONNECTION, STDIN, STDOUT, STDERR */
  struct program *next;
};

static int epoll_fd;
static struct program *programs;

static void watch(int fd, struct handle *handle, uint32_t events, int op) {
  struct epoll_event event = {.events = events, .data.ptr = handle};
  epoll_ctl(epoll_fd, op, fd, &event);
}

static void close_fd(int *fd) {
  if (*fd < 0) return;
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, *fd, NULL);
  close(*fd);
  *fd = -1;
}

static void forget(struct program *p) {
  for (struct program **at = &programs; *at != NULL; at = &(*at)->next) {
    if (*at == p) {
      *at = p->next;
      break;
    }
  }
  close_fd(&p->conn);
  close_fd(&p->in);
  close_fd(&p->out);
  close_fd(&p->err);
  free(p->to_conn.data);
  free(p->to_in.data);
  free(p->reader.pending.data);
  free(p);
}

/* A held program that runs, its bridge gone: another may attach. */
static int waits_for_bridge(const struct program *p) {
  return p->hold && p->pid > 0 && !p->failed && p->conn < 0;
}

/*
 * The bridge is gone: the program's stdin ends and its output is dropped from now on; a held program
 * keeps both for the next bridge.
 */
static void bridge_gone(struct program *p) {
  close_fd(&p->conn);
  p->to_conn.len = 0;
  if (waits_for_bridge(p)) return;
  p->to_in.len = 0;
  close_fd(&p->in);
}

/* Queues a frame for the bridge; a held program without one keeps up to HIGH_WATER, drops the rest. */
static void send_frame(struct program *p, char type, const void *payload, uint32_t len) {
  if (p->conn >= 0 || (waits_for_bridge(p) && p->to_conn.len < HIGH_WATER))
    add_frame(&p->to_conn, type, payload, len);
}

/* Reports the end once the program was reaped and its output ended; forgets it once all is sent. */
static int finish_if_done(struct program *p) {
  if (p->failed || (p->pid == 0 && p->conn < 0)) {
    if (p->conn >= 0 && p->to_conn.len > 0) return 0;
    forget(p);
    return 1;
  }
  if (!p->reaped || p->out >= 0 || p->err >= 0 || p->pid == 0) return 0;
  if (p->conn >= 0 && p->to_conn.len == 0) {
    char status[16];
    int n = snprintf(status, sizeof status, "%u", p->status);
    send_frame(p, FRAME_EXIT, status, (uint32_t)n);
    p->reaped = 2; /* reported */
  }
  if (p->conn < 0 || (p->reaped == 2 && p->to_conn.len == 0)) {
    forget(p);
    return 1;
  }
  return 0;
}

/* What each descriptor waits for now. */
static void rearm(struct program *p) {
  if (p->stdin_ended && p->to_in.len == 0) close_fd(&p->in); /* the program's stdin ends */
  if (finish_if_done(p)) return;
  if (p->conn >= 0)
    watch(p->conn, &p->handles[0],
          (p->to_in.len < HIGH_WATER ? EPOLLIN : 0) | (p->to_conn.len > 0 ? EPOLLOUT : 0), EPOLL_CTL_MOD);
  if (p->in >= 0) watch(p->in, &p->handles[1], p->to_in.len > 0 ? EPOLLOUT : 0, EPOLL_CTL_MOD);
  uint32_t output = p->conn < 0 || p->to_conn.len < HIGH_WATER ? EPOLLIN : 0;
  if (p->out >= 0) watch(p->out, &p->handles[2], output, EPOLL_CTL_MOD);
  if (p->err >= 0) watch(p->err, &p->handles[3], output, EPOLL_CTL_MOD);
}

/* Reports a failure from the child before its exec: "<stage> <errno>" on `fd`, then ends it. */
static void child_fail(int fd, const char *stage) {
  dprintf(fd, "%s %d", stage, errno);
  _exit(127);
}

/* The bounding set: moby's, for every account (the user's `sudo` gets root no more than that). */
static void bound_capabilities(int fd) {
  for (int cap = 0; cap <= CAP_LAST_CAP; cap++) {
    if (!(MOBY_CAPS & (1ULL << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
      child_fail(fd, "capabilities");
  }
}

/* The capability sets of a task: moby's for root, none for anyone else. */
static void set_capabilities(int fd, int root) {
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2] = {{0}};
  unsigned long long caps = root ? MOBY_CAPS : 0;
  data[0].effective = data[0].permitted = (uint32_t)caps;
  data[1].effective = data[1].permitted = (uint32_t)(caps >> 32);
  if (syscall(SYS_capset, &header, data) < 0) child_fail(fd, "capabilities");
}

/* In the child: becomes the program (ids, capabilities, session, working directory, pipes). */
static void become(int fd, char **fields, int pipes[3][2], char **argv, char **envp) {
  uid_t uid = (uid_t)strtoul(fields[0], NULL, 10);
  gid_t gid = (gid_t)strtoul(fields[1], NULL, 10);
  int root = strcmp(fields[2], "root") == 0;
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < 65; sig++) signal(sig, SIG_DFL);
  if (setsid() < 0) child_fail(fd, "setsid");
  if (strcmp(fields[3], "1") == 0 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) child_fail(fd, "subreaper");
  bound_capabilities(fd);
  if (setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0) child_fail(fd, "ids");
  /* Root keeps moby's capabilities across the id change; the user's are cleared by it. */
  if (root && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) child_fail(fd, "capabilities");
  if (setresuid(uid, uid, uid) < 0) child_fail(fd, "ids");
  set_capabilities(fd, root);
  /* Entered as the account: a folder it may not search is refused, as in a namespace sandbox. */
  if (chdir(fields[4]) < 0) child_fail(fd, "cwd");
  if (dup2(pipes[0][0], 0) < 0 || dup2(pipes[1][1], 1) < 0 || dup2(pipes[2][1], 2) < 0)
    child_fail(fd, "stdio");
  execve(argv[0], argv, envp);
  child_fail(fd, "exec");
}

/* A request's fields (NUL-ended strings): uid, gid, caps, subreaper, cwd, hold, argc, argv, envp. */
static void start(struct program *p, char *payload, uint32_t len) {
  char *fields[4096];
  size_t count = 0;
  for (char *at = payload; at < payload + len && count < sizeof fields / sizeof *fields - 1;) {
    fields[count++] = at;
    at += strnlen(at, (size_t)(payload + len - at)) + 1;
  }
  size_t argc = count > 6 ? strtoul(fields[6], NULL, 10) : 0;
  if (count < 8 || argc == 0 || 7 + argc > count) {
    send_frame(p, FRAME_FAILED, "arguments 22", 12);
    p->failed = 1;
    return;
  }
  char **argv = calloc(argc + 1, sizeof *argv);
  char **envp = calloc(count - 7 - argc + 1, sizeof *envp);
  if (argv == NULL || envp == NULL) {
    send_frame(p, FRAME_FAILED, "memory 12", 9);
    p->failed = 1;
    free(argv);
    free(envp);
    return;
  }
  memcpy(argv, fields + 7, argc * sizeof *argv);
  memcpy(envp, fields + 7 + argc, (count - 7 - argc) * sizeof *envp);
  int pipes[3][2], report[2];
  int made = 0;
  for (; made < 3; made++)
    if (pipe2(pipes[made], O_CLOEXEC) < 0) break;
  if (made < 3 || pipe2(report, O_CLOEXEC) < 0) {
    char why[32];
    int n = snprintf(why, sizeof why, "pipe %d", errno);
    send_frame(p, FRAME_FAILED, why, (uint32_t)n);
    for (int i = 0; i < made; i++) {
      close(pipes[i][0]);
      close(pipes[i][1]);
    }
    p->failed = 1;
    free(argv);
    free(envp);
    return;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    become(report[1], fields, pipes, argv, envp);
  }
  free(argv);
  free(envp);
  close(report[1]);
  close(pipes[0][0]);
  close(pipes[1][1]);
  close(pipes[2][1]);
  p->in = pipes[0][1];
  p->out = pipes[1][0];
  p->err = pipes[2][0];
  char why[64] = {0};
  ssize_t got = 0;
  if (pid > 0) {
    while ((got = read(report[0], why, sizeof why - 1)) < 0 && errno == EINTR) {
    }
  } else {
    got = snprintf(why, sizeof why, "fork %d", errno);
  }
  close(report[0]);
  if (got > 0) {
    send_frame(p, FRAME_FAILED, why, (uint32_t)got);
    close_fd(&p->in);
    close_fd(&p->out);
    close_fd(&p->err);
    p->failed = 1; /* its child, if any, is reaped as any orphan */
    return;
  }
  p->pid = pid;
  p->hold = strcmp(fields[5], "1") == 0;
  for (int i = 1; i < 4; i++) p->handles[i] = (struct handle){.role = STDIN + i - 1, .program = p};
  fcntl(p->in, F_SETFL, O_NONBLOCK);
  fcntl(p->out, F_SETFL, O_NONBLOCK);
  fcntl(p->err, F_SETFL, O_NONBLOCK);
  watch(p->in, &p->handles[1], 0, EPOLL_CTL_ADD);
  watch(p->out, &p->handles[2], EPOLLIN, EPOLL_CTL_ADD);
  watch(p->err, &p->handles[3], EPOLLIN, EPOLL_CTL_ADD);
  char number[16];
  int n = snprintf(number, sizeof number, "%d", (int)pid);
  send_frame(p, FRAME_PID, number, (uint32_t)n);
}

/*
 * A new bridge `p` asks for held program `pid`'s stdio: the connection becomes that program's (the pid
 * first, then what it wrote meanwhile) and `p` is forgotten. Returns 0 when no held program waits by
 * that pid (FAILED is sent on `p`).
 */
static int attach(struct program *p, const char *payload, uint32_t len) {
  char number[16] = {0};
  memcpy(number, payload, len < sizeof number - 1 ? len : sizeof number - 1);
  pid_t pid = (pid_t)strtol(number, NULL, 10);
  struct program *held = programs;
  while (held != NULL && !(held != p && held->pid == pid && waits_for_bridge(held))) held = held->next;
  if (pid <= 0 || held == NULL) {
    send_frame(p, FRAME_FAILED, "attach 3", 8); /* ESRCH */
    p->failed = 1;
    return 0;
  }
  held->conn = p->conn;
  p->conn = -1;
  watch(held->conn, &held->handles[0], EPOLLIN, EPOLL_CTL_MOD);
  drop_frame(&p->reader);
  free(held->reader.pending.data);
  held->reader = p->reader; /* whatever the bridge sent after its request */
  p->reader = (struct frame_reader){0};
  struct text frames = {0};
  int n = snprintf(number, sizeof number, "%d", (int)pid);
  add_frame(&frames, FRAME_PID, number, (uint32_t)n);
  add(&frames, held->to_conn.data, held->to_conn.len);
  free(held->to_conn.data);
  held->to_conn = frames;
  return 1;
}

/* Frames from the bridge: the request (or an attach) first, then the program's stdin. */
static void on_connection(struct program *p, uint32_t events) {
  if (events & EPOLLOUT && p->to_conn.len > 0) {
    ssize_t put = send(p->conn, p->to_conn.data, p->to_conn.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (put > 0) consume(&p->to_conn, (size_t)put);
    else if (put < 0 && errno != EAGAIN && errno != EINTR) {
      bridge_gone(p);
      return;
    }
  }
  if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
  char chunk[65536];
  ssize_t got = recv(p->conn, chunk, sizeof chunk, MSG_DONTWAIT);
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (got <= 0) {
    bridge_gone(p);
    return;
  }
  add(&p->reader.pending, chunk, (size_t)got);
  char type;
  char *payload;
  uint32_t len;
  int whole;
  while ((whole = next_frame(&p->reader, &type, &payload, &len)) == 1) {
    if (type == FRAME_ATTACH && p->pid == 0 && !p->failed) {
      if (attach(p, payload, len)) return; /* the rest is the held program's */
    } else if (type == FRAME_REQUEST && p->pid == 0 && !p->failed) start(p, payload, len);
    else if (type == FRAME_STDIN && p->in >= 0 && !p->stdin_ended) add(&p->to_in, payload, len);
    else if (type == FRAME_STDIN_EOF) p->stdin_ended = 1;
    drop_frame(&p->reader);
  }
  if (whole < 0) bridge_gone(p);
}

static void on_stdin(struct program *p) {
  if (p->to_in.len > 0) {
    ssize_t put = write(p->in, p->to_in.data, p->to_in.len);
    if (put > 0) consume(&p->to_in, (size_t)put);
    else if (put < 0 && errno != EAGAIN && errno != EINTR) {
      p->to_in.len = 0; /* the program closed its stdin */
      close_fd(&p->in);
      return;
    }
  }
  if (p->to_in.len == 0 && p->stdin_ended) close_fd(&p->in);
}

static void on_output(struct program *p, int *fd, char type) {
  char chunk[65536];
  ssize_t got = read(*fd, chunk, sizeof chunk);
  if (got > 0) send_frame(p, type, chunk, (uint32_t)got);
  else if (got == 0 || (errno != EAGAIN && errno != EINTR)) close_fd(fd);
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (struct program *p = programs; p != NULL; p = p->next) {
      if (p->pid == pid && !p->reaped) {
        p->reaped = 1;
        p->status = (unsigned)status;
        break;
      }
    }
  }
}

static int listen_spawner(void) {
  mkdir(SPAWNER_DIR, 0700);
  if (chmod(SPAWNER_DIR, 0700) < 0 || chown(SPAWNER_DIR, 0, 0) < 0) return -1;
  unlink(SPAWNER_SOCKET);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  strcpy(address.sun_path, SPAWNER_SOCKET);
  if (fd < 0 || bind(fd, (struct sockaddr *)&address, sizeof address) < 0 || listen(fd, 128) < 0) return -1;
  return fd;
}

void spawner(void) {
  /* Every signal it can block is blocked (SIGCHLD read from a descriptor); root in the box holds no
   * CAP_SYS_PTRACE, and cannot read a non-dumpable process's memory as its owner either. */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  static struct handle listener = {.role = LISTENER}, signals = {.role = SIGNALS};
  int signal_fd = signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK);
  watch(signal_fd, &signals, EPOLLIN, EPOLL_CTL_ADD);
  int listen_fd = listen_spawner();
  /* Without its socket the box still reaps; sandboxd reports every start as failed. */
  if (listen_fd >= 0) watch(listen_fd, &listener, EPOLLIN, EPOLL_CTL_ADD);
  for (;;) {
    struct epoll_event events[64];
    int n = epoll_wait(epoll_fd, events, 64, -1);
    if (n < 0) continue;
    for (int i = 0; i < n; i++) {
      struct handle *h = events[i].data.ptr;
      if (h->role == SIGNALS) {
        struct signalfd_siginfo info;
        while (read(signal_fd, &info, sizeof info) == sizeof info) {
        }
        reap();
        continue;
      }
      if (h->role == LISTENER) {
        int conn = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (conn < 0) continue;
        struct program *p = calloc(1, sizeof *p);
        if (p == NULL) {
          close(conn);
          continue;
        }
        *p = (struct program){.conn = conn, .in = -1, .out = -1, .err = -1, .next = programs};
        p->handles[0] = (struct handle){.role = CONNECTION, .program = p};
        programs = p;
        watch(conn, &p->handles[0], EPOLLIN, EPOLL_CTL_ADD);
        continue;
      }
      struct program *p = h->program;
      if (h->role == CONNECTION) on_connection(p, events[i].events);
      else if (h->role == STDIN) on_stdin(p);
      else on_output(p, h->role == STDOUT ? &p->out : &p->err, h->role == STDOUT ? FRAME_STDOUT : FRAME_STDERR);
    }
    /* Every program whose state may have moved (few run at once). */
    for (struct program *p = programs, *next; p != NULL; p = next) {
      next = p->next;
      rearm(p);
    }
  }
}
