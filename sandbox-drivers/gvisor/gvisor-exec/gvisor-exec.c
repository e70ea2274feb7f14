/*
 * gvisor-exec: how sandboxd, outside gVisor, starts and reaches sandbox code inside it (README.md beside
 * this file).
 *
 *   gvisor-exec enter --socket PATH --container ID --uid N --gid N --caps root|none [--cwd DIR]
 *                     [--subreaper 1] [--env-fd N] [--status-fd N] -- PROGRAM ARGS...
 *     run by sandboxd in its own root: asks the sandbox's gVisor kernel, over runsc's control socket
 *     (urpc: JSON, descriptors by SCM_RIGHTS), to start `gvisor-exec start` in the box with this
 *     process's stdin, stdout and stderr, as uid N with moby's capabilities (root) or none; that one
 *     enters DIR as the account and runs PROGRAM in a session of its own. Reports "pid <pid in the box>"
 *     and "tree <same>" on the status fd, or "error <stage> <errno>"; then waits for the program and
 *     ends as it ended (its exit code, or the same signal), passing on the signals it gets.
 *   gvisor-exec start --cwd DIR --status-fd N [--subreaper 1] -- PROGRAM ARGS...
 *     inside the box, as the account: a session of its own, DIR (refused as "error cwd <errno>" when the
 *     account may not enter it), the subreaper of its tree when asked (an orphan stays in the tree),
 *     then PROGRAM. The status fd closes at exec.
 *   gvisor-exec relay --to ADDRESS
 *     inside the box: the gateway's loopback. Each line "open PORT" on stdin listens on 127.0.0.1:PORT
 *     and carries every connection to ADDRESS:PORT (sandboxd's listener beside the box); "close PORT"
 *     stops listening. Answers "open PORT <errno>" / "close PORT 0" on stdout; ends when stdin ends.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Where the box sees this program (sandboxd's image, bound read-only into the box). */
#define IN_BOX_PATH "/opt/sdk/gvisor-exec"

/* moby's default capabilities (oci/caps/defaults.go), as a mask: what the sandbox's root holds. */
#define MOBY_CAPS                                                                                        \
  ((1ULL << 0) | (1ULL << 1) | (1ULL << 3) | (1ULL << 4) | (1ULL << 5) | (1ULL << 6) | (1ULL << 7) |   \
   (1ULL << 8) | (1ULL << 10) | (1ULL << 13) | (1ULL << 18) | (1ULL << 27) | (1ULL << 29) |            \
   (1ULL << 31))

static int status_fd = -1;

/* Says why PROGRAM could not start, on the status fd, and ends. */
static void fail(const char *stage, int error) {
  if (status_fd >= 0) dprintf(status_fd, "error %s %d\n", stage, error);
  _exit(127);
}

/* ---- a growing buffer, for JSON requests ---- */

struct text {
  char *data;
  size_t len, cap;
};

static void add(struct text *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->len + n + 1) * 2;
    t->data = realloc(t->data, t->cap);
    if (t->data == NULL) fail("memory", ENOMEM);
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = 0;
}

static void addf(struct text *t, const char *format, ...) {
  char small[256];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(small, sizeof small, format, args);
  va_end(args);
  add(t, small, (size_t)n);
}

/* A JSON string. Bytes above 0x7f pass as they are (Go's decoder takes UTF-8). */
static void add_string(struct text *t, const char *s) {
  add(t, "\"", 1);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char escaped[2] = {'\\', (char)c};
      add(t, escaped, 2);
    } else if (c < 0x20) {
      addf(t, "\\u%04x", c);
    } else {
      add(t, (const char *)&c, 1);
    }
  }
  add(t, "\"", 1);
}

/* ---- urpc: one JSON object each way; descriptors ride on the request's first bytes ---- */

static int connect_control(const char *path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("connect", errno);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof address.sun_path) fail("connect", ENAMETOOLONG);
  strcpy(address.sun_path, path);
  if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) fail("connect", errno);
  return fd;
}

static void send_request(int fd, const struct text *request, const int *fds, int nfds) {
  struct iovec part = {.iov_base = request->data, .iov_len = request->len};
  union {
    char buffer[CMSG_SPACE(sizeof(int) * 8)];
    struct cmsghdr align;
  } control;
  struct msghdr message = {.msg_iov = &part, .msg_iovlen = 1};
  if (nfds > 0) {
    message.msg_control = control.buffer;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
    memcpy(CMSG_DATA(header), fds, sizeof(int) * (size_t)nfds);
  }
  ssize_t sent = sendmsg(fd, &message, MSG_NOSIGNAL);
  if (sent < 0) fail("request", errno);
  for (size_t done = (size_t)sent; done < request->len;) {
    ssize_t more = send(fd, request->data + done, request->len - done, MSG_NOSIGNAL);
    if (more < 0) fail("request", errno);
    done += (size_t)more;
  }
}

/* Reads one JSON object; returns 1 with "result" parsed into *result when "success" is true. */
static int read_reply(int fd, long long *result) {
  static char reply[16384];
  size_t n = 0;
  int depth = 0, in_string = 0, escaped = 0;
  for (;;) {
    char c;
    ssize_t got = read(fd, &c, 1);
    if (got <= 0) return 0;
    if (n < sizeof reply - 1) reply[n++] = c;
    if (in_string) {
      if (escaped) escaped = 0;
      else if (c == '\\') escaped = 1;
      else if (c == '"') in_string = 0;
    } else if (c == '"') {
      in_string = 1;
    } else if (c == '{') {
      depth++;
    } else if (c == '}' && --depth == 0) {
      break;
    }
  }
  reply[n] = 0;
  if (strstr(reply, "\"success\":true") == NULL) return 0;
  const char *value = strstr(reply, "\"result\":");
  if (result != NULL) *result = value == NULL ? 0 : strtoll(value + 9, NULL, 10);
  return 1;
}

/* ---- enter ---- */

struct enter_options {
  const char *socket, *container, *cwd, *caps;
  long uid, gid, subreaper;
  int env_fd;
  char **program;
};

static char **read_environment(int fd) {
  struct text all = {0};
  char chunk[4096];
  ssize_t got;
  while ((got = read(fd, chunk, sizeof chunk)) > 0) add(&all, chunk, (size_t)got);
  if (got < 0) fail("environment", errno);
  close(fd);
  size_t count = 0;
  for (size_t i = 0; i < all.len; i++) count += all.data[i] == 0;
  char **list = calloc(count + 1, sizeof *list);
  if (list == NULL) fail("memory", ENOMEM);
  size_t at = 0;
  for (size_t i = 0; i < count; i++) {
    list[i] = all.data + at;
    at += strlen(all.data + at) + 1;
  }
  return list;
}

static void signal_box(const struct enter_options *o, long long pid, int signal) {
  struct text request = {0};
  addf(&request, "{\"method\":\"containerManager.Signal\",\"arg\":{\"CID\":");
  add_string(&request, o->container);
  addf(&request, ",\"Signo\":%d,\"PID\":%lld,\"Mode\":0}}", signal, pid);
  int fd = connect_control(o->socket);
  send_request(fd, &request, NULL, 0);
  read_reply(fd, NULL);
  close(fd);
  free(request.data);
}

/* Ends as the box's program ended: its exit code, or the same signal. */
static void mirror(unsigned status) {
  if ((status & 0x7f) == 0) _exit((int)((status >> 8) & 0xff));
  int signal = (int)(status & 0x7f);
  struct sigaction action = {.sa_handler = SIG_DFL};
  sigaction(signal, &action, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  kill(getpid(), signal);
  _exit(128 + signal);
}

static void enter(const struct enter_options *o) {
  char **environment = o->env_fd >= 0 ? read_environment(o->env_fd) : (char *[]){NULL};
  int started[2];
  if (pipe2(started, O_CLOEXEC) < 0) fail("pipe", errno);
  unsigned long long caps = strcmp(o->caps, "root") == 0 ? MOBY_CAPS : 0;

  struct text request = {0};
  addf(&request, "{\"method\":\"containerManager.ExecuteAsync\",\"arg\":{\"filename\":");
  add_string(&request, IN_BOX_PATH);
  addf(&request, ",\"argv\":[");
  const char *head[] = {"gvisor-exec", "start", "--cwd", o->cwd, "--status-fd", "3",
                        "--subreaper", o->subreaper ? "1" : "0", "--"};
  for (size_t i = 0; i < sizeof head / sizeof *head; i++) {
    if (i > 0) add(&request, ",", 1);
    add_string(&request, head[i]);
  }
  for (char **arg = o->program; *arg != NULL; arg++) {
    add(&request, ",", 1);
    add_string(&request, *arg);
  }
  addf(&request, "],\"envv\":[");
  for (char **entry = environment; *entry != NULL; entry++) {
    if (entry != environment) add(&request, ",", 1);
    add_string(&request, *entry);
  }
  addf(&request, "],\"wd\":\"/\",\"KUID\":%ld,\"KGID\":%ld,\"ExtraKGIDs\":[%ld]", o->uid, o->gid, o->gid);
  addf(&request,
       ",\"Capabilities\":{\"PermittedCaps\":%llu,\"InheritableCaps\":0,\"EffectiveCaps\":%llu,"
       "\"BoundingCaps\":%llu,\"AmbientCaps\":0}",
       caps, caps, caps);
  addf(&request, ",\"GuestFDs\":[0,1,2,3],\"ContainerID\":");
  add_string(&request, o->container);
  add(&request, "}}", 2);

  int control = connect_control(o->socket);
  int fds[4] = {0, 1, 2, started[1]};
  send_request(control, &request, fds, 4);
  free(request.data);
  close(started[1]);
  long long pid = 0;
  if (!read_reply(control, &pid) || pid <= 0) fail("exec", EIO);

  /* The box's start step closes its status pipe at exec, or says why it could not start. */
  char line[128];
  size_t n = 0;
  ssize_t got;
  while (n < sizeof line - 1 && (got = read(started[0], line + n, sizeof line - 1 - n)) > 0) n += (size_t)got;
  line[n] = 0;
  close(started[0]);

  /* Signals that reach this process are passed on to the program from here on. */
  static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
                                  SIGWINCH, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) sigaddset(&set, forwarded[i]);
  sigprocmask(SIG_BLOCK, &set, NULL);
  int signals = signalfd(-1, &set, SFD_CLOEXEC);

  struct text wait = {0};
  addf(&wait, "{\"method\":\"containerManager.WaitPID\",\"arg\":{\"PID\":%lld,\"CID\":", pid);
  add_string(&wait, o->container);
  add(&wait, "}}", 2);
  send_request(control, &wait, NULL, 0);

  if (strncmp(line, "error ", 6) == 0) {
    if (status_fd >= 0) (void)!write(status_fd, line, strlen(line));
    read_reply(control, NULL); /* reaped */
    _exit(127);
  }
  if (status_fd >= 0) {
    dprintf(status_fd, "pid %lld\ntree %lld\n", pid, pid);
    close(status_fd);
    status_fd = -1;
  }
  for (;;) {
    struct pollfd ready[2] = {{.fd = control, .events = POLLIN}, {.fd = signals, .events = POLLIN}};
    if (poll(ready, 2, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(127);
    }
    if (ready[1].revents & POLLIN) {
      struct signalfd_siginfo info;
      if (read(signals, &info, sizeof info) == sizeof info) signal_box(o, pid, (int)info.ssi_signo);
    }
    if (ready[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      long long status = 0;
      if (!read_reply(control, &status)) _exit(127);
      mirror((unsigned)status);
    }
  }
}

/* ---- start (in the box) ---- */

static void start(const char *cwd, int subreaper, char **program) {
  /* The box starts each program as a process group's leader, which setsid refuses: a child takes it. */
  if (setsid() < 0 && getsid(0) != getpid()) fail("setsid", errno);
  if (subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) fail("subreaper", errno);
  if (chdir(cwd) < 0) fail("cwd", errno);
  if (status_fd >= 0 && fcntl(status_fd, F_SETFD, FD_CLOEXEC) < 0) fail("start", errno);
  execv(program[0], program);
  fail("exec", errno);
}

/* ---- relay (in the box) ---- */

#define RELAY_BUFFER 65536
#define MAX_LISTENERS 256

struct endpoint;

struct half { /* bytes read from one side, waiting to be written to the other */
  char data[RELAY_BUFFER];
  size_t len, off;
  int eof;
};

struct pair {
  int fd[2];           /* 0: the sandbox's connection, 1: sandboxd's listener */
  struct half from[2]; /* from[i]: read from fd[i] */
  int connecting;
  struct endpoint *ends[2];
};

struct endpoint {
  struct pair *pair; /* NULL for a listener */
  int side;
  int fd;
  int port;
};

static int epoll_fd;
static struct in_addr relay_to;
static struct endpoint *listeners[MAX_LISTENERS];

static void watch(struct endpoint *e, uint32_t events, int op) {
  struct epoll_event event = {.events = events, .data.ptr = e};
  epoll_ctl(epoll_fd, op, e->fd, &event);
}

static void close_pair(struct pair *p) {
  for (int i = 0; i < 2; i++) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, p->fd[i], NULL);
    close(p->fd[i]);
    free(p->ends[i]);
  }
  free(p);
}

/* What each side waits for now; ends the pair once both directions are done. */
static void rearm(struct pair *p) {
  int done = 1;
  for (int i = 0; i < 2; i++) {
    struct half *in = &p->from[i], *out = &p->from[1 - i];
    uint32_t events = 0;
    if (!in->eof && in->len == 0 && !p->connecting) events |= EPOLLIN;
    if (out->len > out->off || (i == 1 && p->connecting)) events |= EPOLLOUT;
    if (!(in->eof && in->len == in->off)) done = 0;
    watch(p->ends[i], events, EPOLL_CTL_MOD);
  }
  if (done) close_pair(p);
}

static void on_pair(struct endpoint *e, uint32_t events) {
  struct pair *p = e->pair;
  int i = e->side;
  if (i == 1 && p->connecting) {
    int error = 0;
    socklen_t size = sizeof error;
    getsockopt(p->fd[1], SOL_SOCKET, SO_ERROR, &error, &size);
    if (error != 0 || (events & (EPOLLERR | EPOLLHUP))) {
      close_pair(p);
      return;
    }
    p->connecting = 0;
  }
  if (events & EPOLLIN) {
    struct half *in = &p->from[i];
    ssize_t got = read(p->fd[i], in->data, RELAY_BUFFER);
    if (got > 0) {
      in->len = (size_t)got;
      in->off = 0;
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      in->eof = 1;
      if (got < 0) {
        close_pair(p);
        return;
      }
      shutdown(p->fd[1 - i], SHUT_WR);
    }
  }
  if (events & EPOLLOUT) {
    struct half *out = &p->from[1 - i];
    while (out->off < out->len) {
      ssize_t put = send(p->fd[i], out->data + out->off, out->len - out->off, MSG_NOSIGNAL);
      if (put < 0) {
        if (errno == EAGAIN || errno == EINTR) break;
        close_pair(p);
        return;
      }
      out->off += (size_t)put;
    }
    if (out->off == out->len) out->len = out->off = 0;
  }
  if ((events & (EPOLLERR | EPOLLHUP)) && !(events & (EPOLLIN | EPOLLOUT))) {
    close_pair(p);
    return;
  }
  rearm(p);
}

static void on_accept(struct endpoint *listener) {
  int client = accept4(listener->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (client < 0) return;
  int upstream = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)listener->port),
                                .sin_addr = relay_to};
  if (upstream < 0 || (connect(upstream, (struct sockaddr *)&address, sizeof address) < 0 &&
                       errno != EINPROGRESS)) {
    close(client);
    if (upstream >= 0) close(upstream);
    return;
  }
  int one = 1;
  setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(upstream, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct pair *p = calloc(1, sizeof *p);
  if (p == NULL) {
    close(client);
    close(upstream);
    return;
  }
  p->fd[0] = client;
  p->fd[1] = upstream;
  p->connecting = 1;
  for (int i = 0; i < 2; i++) {
    p->ends[i] = calloc(1, sizeof *p->ends[i]);
    *p->ends[i] = (struct endpoint){.pair = p, .side = i, .fd = p->fd[i]};
    watch(p->ends[i], 0, EPOLL_CTL_ADD);
  }
  rearm(p);
}

static void open_port(int port) {
  int slot = -1;
  for (int i = 0; i < MAX_LISTENERS; i++) {
    if (listeners[i] != NULL && listeners[i]->port == port) {
      printf("open %d 0\n", port);
      return;
    }
    if (listeners[i] == NULL && slot < 0) slot = i;
  }
  if (slot < 0) {
    printf("open %d %d\n", port, EMFILE);
    return;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
      bind(fd, (struct sockaddr *)&address, sizeof address) < 0 || listen(fd, 512) < 0) {
    printf("open %d %d\n", port, errno);
    if (fd >= 0) close(fd);
    return;
  }
  listeners[slot] = calloc(1, sizeof *listeners[slot]);
  *listeners[slot] = (struct endpoint){.pair = NULL, .fd = fd, .port = port};
  watch(listeners[slot], EPOLLIN, EPOLL_CTL_ADD);
  printf("open %d 0\n", port);
}

static void close_port(int port) {
  for (int i = 0; i < MAX_LISTENERS; i++) {
    if (listeners[i] != NULL && listeners[i]->port == port) {
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listeners[i]->fd, NULL);
      close(listeners[i]->fd);
      free(listeners[i]);
      listeners[i] = NULL;
    }
  }
  printf("close %d 0\n", port);
}

/* Reads whole lines of commands from stdin; returns 0 once it ends. */
static int on_command(void) {
  static char line[4096];
  static size_t len;
  ssize_t got = read(0, line + len, sizeof line - 1 - len);
  if (got <= 0) return got < 0 && (errno == EAGAIN || errno == EINTR);
  len += (size_t)got;
  char *newline;
  while ((newline = memchr(line, '\n', len)) != NULL) {
    *newline = 0;
    int port = 0;
    if (sscanf(line, "open %d", &port) == 1 && port > 0 && port < 65536) open_port(port);
    else if (sscanf(line, "close %d", &port) == 1) close_port(port);
    size_t used = (size_t)(newline - line) + 1;
    memmove(line, newline + 1, len - used);
    len -= used;
  }
  if (len == sizeof line - 1) len = 0; /* an endless line is dropped */
  fflush(stdout);
  return 1;
}

static void relay(const char *to) {
  if (inet_pton(AF_INET, to, &relay_to) != 1) fail("relay", EINVAL);
  /* Root in the box holds no CAP_SYS_PTRACE, and cannot read a non-dumpable process's memory either. */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
  struct endpoint commands = {.pair = NULL, .fd = 0, .port = -1};
  watch(&commands, EPOLLIN, EPOLL_CTL_ADD);
  for (;;) {
    struct epoll_event events[64];
    int n = epoll_wait(epoll_fd, events, 64, -1);
    if (n < 0 && errno != EINTR) _exit(1);
    for (int i = 0; i < n; i++) {
      struct endpoint *e = events[i].data.ptr;
      if (e == &commands) {
        if (!on_command()) _exit(0);
      } else if (e->pair == NULL) {
        on_accept(e);
      } else {
        on_pair(e, events[i].events);
      }
    }
  }
}

/* ---- arguments ---- */

static long number(const char *text) {
  char *end;
  long value = strtol(text, &end, 10);
  if (*text == 0 || *end != 0) fail("arguments", EINVAL);
  return value;
}

int main(int argc, char **argv) {
  if (argc < 2) fail("arguments", EINVAL);
  const char *mode = argv[1];
  struct enter_options o = {.cwd = "/", .caps = "none", .uid = -1, .gid = -1, .env_fd = -1};
  const char *to = NULL;
  int i = 2;
  for (; i < argc; i++) {
    const char *flag = argv[i];
    if (strcmp(flag, "--") == 0) {
      i++;
      break;
    }
    if (i + 1 >= argc) fail("arguments", EINVAL);
    const char *value = argv[++i];
    if (strcmp(flag, "--socket") == 0) o.socket = value;
    else if (strcmp(flag, "--container") == 0) o.container = value;
    else if (strcmp(flag, "--uid") == 0) o.uid = number(value);
    else if (strcmp(flag, "--gid") == 0) o.gid = number(value);
    else if (strcmp(flag, "--caps") == 0) o.caps = value;
    else if (strcmp(flag, "--cwd") == 0) o.cwd = value;
    else if (strcmp(flag, "--env-fd") == 0) o.env_fd = (int)number(value);
    else if (strcmp(flag, "--status-fd") == 0) status_fd = (int)number(value);
    else if (strcmp(flag, "--subreaper") == 0) o.subreaper = number(value);
    else if (strcmp(flag, "--to") == 0) to = value;
    else fail("arguments", EINVAL);
  }
  o.program = argv + i;
  if (strcmp(mode, "relay") == 0 && to != NULL) relay(to);
  if (i >= argc) fail("arguments", EINVAL);
  if (strcmp(mode, "start") == 0) start(o.cwd, (int)o.subreaper, o.program);
  if (strcmp(mode, "enter") == 0 && o.socket != NULL && o.container != NULL && o.uid >= 0 && o.gid >= 0)
    enter(&o);
  fail("arguments", EINVAL);
  return 127;
}
