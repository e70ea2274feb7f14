/*
 * `gvisor-exec start`, in the box, started by `enter` through runsc (so it is an "exec'd" process, which
 * gVisor kills when it restores a snapshot): asks the box's spawner (spawner.c), over its socket, to
 * start the program as the account, then carries the program's stdin, stdout and stderr between the
 * spawner and its own (the host pipes sandboxd holds); or, with `--attach`, takes over a held program's
 * (its bridge gone, `spawner.c`). The program is the spawner's child, not this one's, and its pipes are
 * the spawner's: it outlives a restore, which ends only this bridge. Writes "pid <pid>" or
 * "error <stage> <errno>" on the status fd, and ends as the program ended.
 */
#define _GNU_SOURCE
#include "gvisor-exec.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

static int connect_spawner(void) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("spawner", errno);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  strcpy(address.sun_path, SPAWNER_SOCKET);
  if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) fail("spawner", errno);
  return fd;
}

static void send_all(int fd, struct text *t) {
  if (write_all(fd, t->data, t->len) < 0) fail("spawner", errno);
  t->len = 0;
}

/*
 * The request: strings each ended by a NUL (uid, gid, caps, subreaper, cwd, hold, argc, argv, then
 * envp); or, to attach, the held program's pid.
 */
static void request(int spawner, const struct enter_options *o) {
  struct text payload = {0}, frame = {0};
  if (o->attach > 0) {
    addf(&payload, "%ld", o->attach);
    add_frame(&frame, FRAME_ATTACH, payload.data, (uint32_t)payload.len);
    send_all(spawner, &frame);
    free(payload.data);
    free(frame.data);
    return;
  }
  char number[32];
  const char *head[6];
  snprintf(number, sizeof number, "%ld", o->uid);
  char gid[32], subreaper[4], hold[4], argc[32];
  snprintf(gid, sizeof gid, "%ld", o->gid);
  snprintf(subreaper, sizeof subreaper, "%ld", o->subreaper);
  snprintf(hold, sizeof hold, "%ld", o->hold);
  head[0] = number;
  head[1] = gid;
  head[2] = o->caps;
  head[3] = subreaper;
  head[4] = o->cwd;
  head[5] = hold;
  for (size_t i = 0; i < 6; i++) add(&payload, head[i], strlen(head[i]) + 1);
  size_t count = 0;
  while (o->program[count] != NULL) count++;
  snprintf(argc, sizeof argc, "%zu", count);
  add(&payload, argc, strlen(argc) + 1);
  for (size_t i = 0; i < count; i++) add(&payload, o->program[i], strlen(o->program[i]) + 1);
  for (char **entry = environ; *entry != NULL; entry++) add(&payload, *entry, strlen(*entry) + 1);
  if (payload.len > FRAME_MAX) fail("arguments", E2BIG);
  add_frame(&frame, FRAME_REQUEST, payload.data, (uint32_t)payload.len);
  send_all(spawner, &frame);
  free(payload.data);
  free(frame.data);
}

void bridge(const struct enter_options *o) {
  signal(SIGPIPE, SIG_IGN);
  int spawner = connect_spawner();
  request(spawner, o);
  struct frame_reader reader = {0};
  struct text out = {0};
  int started = 0, stdin_open = 1, host_out = 1, host_err = 1;
  for (;;) {
    struct pollfd ready[2] = {{.fd = spawner, .events = POLLIN}, {.fd = started && stdin_open ? 0 : -1, .events = POLLIN}};
    if (poll(ready, 2, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(127);
    }
    if (ready[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      char chunk[65536];
      ssize_t got = read(0, chunk, sizeof chunk);
      if (got > 0) {
        add_frame(&out, FRAME_STDIN, chunk, (uint32_t)got);
      } else if (got == 0 || errno != EINTR) {
        add_frame(&out, FRAME_STDIN_EOF, NULL, 0);
        stdin_open = 0;
      }
      if (write_all(spawner, out.data, out.len) < 0) _exit(127);
      out.len = 0;
    }
    if (!(ready[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char chunk[65536];
    ssize_t got = read(spawner, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) fail("spawner", got == 0 ? EPIPE : errno); /* the spawner is gone */
    add(&reader.pending, chunk, (size_t)got);
    char type;
    char *payload;
    uint32_t len;
    int whole;
    while ((whole = next_frame(&reader, &type, &payload, &len)) == 1) {
      if (type == FRAME_PID) {
        if (status_fd >= 0) {
          dprintf(status_fd, "pid %.*s\n", (int)len, payload);
          close(status_fd);
          status_fd = -1;
        }
        started = 1;
      } else if (type == FRAME_FAILED) {
        if (status_fd >= 0) dprintf(status_fd, "error %.*s\n", (int)len, payload);
        _exit(127);
      } else if (type == FRAME_STDOUT && host_out) {
        /* A reader that went away (sandboxd closed the pipe) only loses what follows. */
        if (write_all(1, payload, len) < 0) host_out = 0;
      } else if (type == FRAME_STDERR && host_err) {
        if (write_all(2, payload, len) < 0) host_err = 0;
      } else if (type == FRAME_EXIT) {
        char status[16] = {0};
        memcpy(status, payload, len < sizeof status - 1 ? len : sizeof status - 1);
        mirror((unsigned)strtoul(status, NULL, 10));
      }
      drop_frame(&reader);
    }
    if (whole < 0) _exit(127);
  }
}
