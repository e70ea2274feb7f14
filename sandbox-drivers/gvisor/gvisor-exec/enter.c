/*
 * `gvisor-exec enter`, run by sandboxd outside the box: starts one program of sandbox code through
 * runsc's control socket (urpc: one JSON object each way, descriptors by SCM_RIGHTS on the request's
 * first bytes). The box's kernel starts a bridge (`start`, bridge.c) with three pipes of this process's
 * for its stdin, stdout and stderr, and a status pipe; the bridge has the box's spawner (`init`,
 * spawner.c) start the program as the account asked for. This process carries its own stdio (sandboxd's
 * socket pairs) to and from those pipes: a box may hold host pipes when it is checkpointed, never host
 * sockets (gVisor cannot load those again). With `--attach` the bridge takes over the stdio of a held
 * program whose own bridge is gone (a copy restored from a snapshot) instead of starting one. Reports
 * "pid <pid>" and "tree <pid>" (the program's, as the box names it) on the status fd, or
 * "error <stage> <errno>"; then waits for the bridge, which ends as the program ended, and ends alike
 * once its output is carried, passing on the signals it gets.
 */
#define _GNU_SOURCE
#include "gvisor-exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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
    if (got < 0 && errno == EINTR) continue;
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

static char **read_environment(int fd) {
  struct text all = {0};
  char chunk[4096];
  ssize_t got;
  while ((got = read(fd, chunk, sizeof chunk)) != 0) {
    if (got < 0) {
      if (errno == EINTR) continue;
      fail("environment", errno);
    }
    add(&all, chunk, (size_t)got);
  }
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
  add_json_string(&request, o->container);
  addf(&request, ",\"Signo\":%d,\"PID\":%lld,\"Mode\":0}}", signal, pid);
  int fd = connect_control(o->socket);
  send_request(fd, &request, NULL, 0);
  read_reply(fd, NULL);
  close(fd);
  free(request.data);
}

/* One direction of stdio: bytes read from `from`, waiting to be written to `to`. */
struct stream {
  int from, to;
  char data[65536];
  size_t len, off;
  int ended; /* `from` reached its end */
};

/* Moves what it can; at the end with nothing left, closes `to` (its reader sees the end). */
static void pump(struct stream *s, short from_events, short to_events) {
  if (s->from >= 0 && s->len == 0 && (from_events & (POLLIN | POLLHUP | POLLERR))) {
    ssize_t got = read(s->from, s->data, sizeof s->data);
    if (got > 0) {
      s->len = (size_t)got;
      s->off = 0;
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      close(s->from);
      s->from = -1;
      s->ended = 1;
    }
  }
  if (s->to >= 0 && s->off < s->len && (to_events & (POLLOUT | POLLERR | POLLHUP))) {
    ssize_t put = write(s->to, s->data + s->off, s->len - s->off);
    if (put > 0) s->off += (size_t)put;
    else if (put < 0 && errno != EAGAIN && errno != EINTR) s->len = s->off = 0; /* its reader left */
    if (s->off == s->len) s->len = s->off = 0;
  } else if (s->to < 0) {
    s->len = s->off = 0;
  }
  if (s->ended && s->len == 0 && s->to >= 0) {
    close(s->to);
    s->to = -1;
  }
}

void enter(const struct enter_options *o) {
  char *no_environment[] = {NULL};
  char **environment = o->env_fd >= 0 ? read_environment(o->env_fd) : no_environment;
  int started[2], in[2], out[2], err[2];
  if (pipe2(started, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
      pipe2(err, O_CLOEXEC) < 0)
    fail("pipe", errno);

  /* The bridge runs as the box's root with no capability: enough to reach the spawner's socket. */
  struct text request = {0};
  addf(&request, "{\"method\":\"containerManager.ExecuteAsync\",\"arg\":{\"filename\":");
  add_json_string(&request, IN_BOX_PATH);
  addf(&request, ",\"argv\":[");
  char uid[24], gid[24], attach[24];
  snprintf(uid, sizeof uid, "%ld", o->uid);
  snprintf(gid, sizeof gid, "%ld", o->gid);
  snprintf(attach, sizeof attach, "%ld", o->attach);
  const char *start[] = {"gvisor-exec", "start",  "--uid",       uid,           "--gid",
                         gid,           "--caps", o->caps,       "--cwd",       o->cwd,
                         "--subreaper", o->subreaper ? "1" : "0", "--hold", o->hold ? "1" : "0",
                         "--status-fd", "3",      "--"};
  const char *reattach[] = {"gvisor-exec", "start", "--attach", attach, "--status-fd", "3"};
  const char **head = o->attach > 0 ? reattach : start;
  size_t heads = o->attach > 0 ? sizeof reattach / sizeof *reattach : sizeof start / sizeof *start;
  for (size_t i = 0; i < heads; i++) {
    if (i > 0) add(&request, ",", 1);
    add_json_string(&request, head[i]);
  }
  for (char **arg = o->program; *arg != NULL; arg++) {
    add(&request, ",", 1);
    add_json_string(&request, *arg);
  }
  addf(&request, "],\"envv\":[");
  for (char **entry = environment; *entry != NULL; entry++) {
    if (entry != environment) add(&request, ",", 1);
    add_json_string(&request, *entry);
  }
  addf(&request, "],\"wd\":\"/\",\"KUID\":0,\"KGID\":0,\"Capabilities\":{\"PermittedCaps\":0,");
  addf(&request, "\"InheritableCaps\":0,\"EffectiveCaps\":0,\"BoundingCaps\":0,\"AmbientCaps\":0}");
  addf(&request, ",\"GuestFDs\":[0,1,2,3],\"ContainerID\":");
  add_json_string(&request, o->container);
  add(&request, "}}", 2);

  int control = connect_control(o->socket);
  int fds[4] = {in[0], out[1], err[1], started[1]};
  send_request(control, &request, fds, 4);
  free(request.data);
  close(started[1]);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  signal(SIGPIPE, SIG_IGN);
  struct stream *streams = calloc(3, sizeof *streams);
  if (streams == NULL) fail("memory", ENOMEM);
  streams[0] = (struct stream){.from = 0, .to = in[1]};
  streams[1] = (struct stream){.from = out[0], .to = 1};
  streams[2] = (struct stream){.from = err[0], .to = 2};
  for (int i = 0; i < 3; i++) {
    fcntl(streams[i].from, F_SETFL, fcntl(streams[i].from, F_GETFL) | O_NONBLOCK);
    fcntl(streams[i].to, F_SETFL, fcntl(streams[i].to, F_GETFL) | O_NONBLOCK);
  }
  long long bridge = 0;
  if (!read_reply(control, &bridge) || bridge <= 0) fail("exec", EIO);

  /* The bridge says the program's pid, or why it could not start, then closes the status pipe. */
  char line[128];
  size_t n = 0;
  ssize_t got;
  while (n < sizeof line - 1 && (got = read(started[0], line + n, sizeof line - 1 - n)) != 0) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    n += (size_t)got;
  }
  line[n] = 0;
  close(started[0]);
  long long pid = strncmp(line, "pid ", 4) == 0 ? strtoll(line + 4, NULL, 10) : 0;

  /* Signals that reach this process are passed on to the program from here on. */
  static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
                                  SIGWINCH, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) sigaddset(&set, forwarded[i]);
  sigprocmask(SIG_BLOCK, &set, NULL);
  int signals = signalfd(-1, &set, SFD_CLOEXEC);

  struct text wait = {0};
  addf(&wait, "{\"method\":\"containerManager.WaitPID\",\"arg\":{\"PID\":%lld,\"CID\":", bridge);
  add_json_string(&wait, o->container);
  add(&wait, "}}", 2);
  send_request(control, &wait, NULL, 0);

  if (pid <= 0) {
    if (status_fd >= 0) {
      if (strncmp(line, "error ", 6) == 0) (void)!write(status_fd, line, strlen(line));
      else dprintf(status_fd, "error start %d\n", EIO);
    }
    read_reply(control, NULL); /* the bridge is reaped */
    _exit(127);
  }
  if (status_fd >= 0) {
    dprintf(status_fd, "pid %lld\ntree %lld\n", pid, pid);
    close(status_fd);
    status_fd = -1;
  }
  long long status = -1;
  for (;;) {
    /* The bridge ended and its output is carried: end as the program ended. */
    if (status >= 0 && streams[1].to < 0 && streams[2].to < 0) mirror((unsigned)status);
    struct pollfd ready[8] = {{.fd = status < 0 ? control : -1, .events = POLLIN},
                              {.fd = signals, .events = POLLIN}};
    for (int i = 0; i < 3; i++) {
      struct stream *s = &streams[i];
      ready[2 + 2 * i] = (struct pollfd){.fd = s->len == 0 ? s->from : -1, .events = POLLIN};
      ready[3 + 2 * i] = (struct pollfd){.fd = s->len > s->off ? s->to : -1, .events = POLLOUT};
    }
    if (poll(ready, 8, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(127);
    }
    if (ready[1].revents & POLLIN) {
      struct signalfd_siginfo info;
      if (read(signals, &info, sizeof info) == sizeof info) signal_box(o, pid, (int)info.ssi_signo);
    }
    for (int i = 0; i < 3; i++) pump(&streams[i], ready[2 + 2 * i].revents, ready[3 + 2 * i].revents);
    if (ready[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      long long waited = 0;
      if (!read_reply(control, &waited)) _exit(127);
      status = waited;
    }
  }
}
