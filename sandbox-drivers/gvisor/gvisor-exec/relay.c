/*
 * `gvisor-exec relay --to ADDRESS`, in the box: the gateway's loopback (gateway/sandbox-loopback.ts).
 * Each line "open PORT" on stdin listens on the box's 127.0.0.1:PORT and carries every connection to
 * ADDRESS:PORT (sandboxd's listener beside the box); "close PORT" stops listening. Answers
 * "open PORT <errno>" / "close PORT 0" on stdout; ends when stdin ends.
 * The other way, for preview URLs (daemon/port-tunnel.ts): "dial PORT BACK ID" connects to the box's
 * 127.0.0.1:PORT and, once that connection is open, to ADDRESS:BACK (sandboxd's dial-back listener),
 * sends "ID\n" there first and carries both ways; a connection to PORT that fails answers
 * "dial ID <errno>" instead.
 */
#define _GNU_SOURCE
#include "gvisor-exec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

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

#define DIAL_ID_MAX 64

struct endpoint {
  struct pair *pair; /* NULL for a listener or a dial */
  int side;
  int fd;
  int port;
  int back;                    /* a dial: sandboxd's dial-back port (0 for a listener) */
  char dial_id[DIAL_ID_MAX + 2]; /* a dial: its id and a newline */
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

/* A dial's connection to the box's port is open, or failed: pair it with one to sandboxd. */
static void on_dialled(struct endpoint *dial) {
  int error = 0;
  socklen_t size = sizeof error;
  getsockopt(dial->fd, SOL_SOCKET, SO_ERROR, &error, &size);
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, dial->fd, NULL);
  int back = error == 0 ? socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) : -1;
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)dial->back), .sin_addr = relay_to};
  struct pair *p = back >= 0 ? calloc(1, sizeof *p) : NULL;
  if (p == NULL || (connect(back, (struct sockaddr *)&address, sizeof address) < 0 && errno != EINPROGRESS)) {
    size_t id_len = strcspn(dial->dial_id, "\n");
    printf("dial %.*s %d\n", (int)id_len, dial->dial_id, error != 0 ? error : errno);
    fflush(stdout);
    close(dial->fd);
    if (back >= 0) close(back);
    free(p);
    free(dial);
    return;
  }
  int one = 1;
  setsockopt(dial->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(back, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  p->fd[0] = dial->fd;
  p->fd[1] = back;
  p->connecting = 1;
  /* The id goes to sandboxd first, as if the box's side had sent it. */
  size_t id_size = strlen(dial->dial_id);
  memcpy(p->from[0].data, dial->dial_id, id_size);
  p->from[0].len = id_size;
  for (int i = 0; i < 2; i++) {
    p->ends[i] = calloc(1, sizeof *p->ends[i]);
    *p->ends[i] = (struct endpoint){.pair = p, .side = i, .fd = p->fd[i]};
    watch(p->ends[i], 0, EPOLL_CTL_ADD);
  }
  free(dial);
  rearm(p);
}

static void dial_port(int port, int back, const char *id) {
  struct endpoint *dial = calloc(1, sizeof *dial);
  int fd = dial == NULL ? -1 : socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (fd < 0 || (connect(fd, (struct sockaddr *)&address, sizeof address) < 0 && errno != EINPROGRESS)) {
    printf("dial %s %d\n", id, fd < 0 ? ENOMEM : errno);
    if (fd >= 0) close(fd);
    free(dial);
    return;
  }
  *dial = (struct endpoint){.pair = NULL, .fd = fd, .port = port, .back = back};
  snprintf(dial->dial_id, sizeof dial->dial_id, "%s\n", id);
  /* Writable once the connect is done, either way (an error shows as EPOLLERR with it). */
  watch(dial, EPOLLOUT, EPOLL_CTL_ADD);
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
    int port = 0, back = 0;
    char id[DIAL_ID_MAX + 1];
    if (sscanf(line, "open %d", &port) == 1 && port > 0 && port < 65536) open_port(port);
    else if (sscanf(line, "close %d", &port) == 1) close_port(port);
    else if (sscanf(line, "dial %d %d %64[0-9a-f]", &port, &back, id) == 3 && port > 0 && port < 65536 &&
             back > 0 && back < 65536)
      dial_port(port, back, id);
    size_t used = (size_t)(newline - line) + 1;
    memmove(line, newline + 1, len - used);
    len -= used;
  }
  if (len == sizeof line - 1) len = 0; /* an endless line is dropped */
  fflush(stdout);
  return 1;
}

void relay(const char *to) {
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
      } else if (e->pair == NULL && e->back != 0) {
        on_dialled(e);
      } else if (e->pair == NULL) {
        on_accept(e);
      } else {
        on_pair(e, events[i].events);
      }
    }
  }
}
