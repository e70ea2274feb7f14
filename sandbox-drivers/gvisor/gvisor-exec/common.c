/* gvisor-exec's shared parts (gvisor-exec.h). */
#define _GNU_SOURCE
#include "gvisor-exec.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int status_fd = -1;

void fail(const char *stage, int error) {
  if (status_fd >= 0) dprintf(status_fd, "error %s %d\n", stage, error);
  _exit(127);
}

void add(struct text *t, const void *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->len + n + 1) * 2;
    t->data = realloc(t->data, t->cap);
    if (t->data == NULL) fail("memory", ENOMEM);
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = 0;
}

void addf(struct text *t, const char *format, ...) {
  char small[256];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(small, sizeof small, format, args);
  va_end(args);
  add(t, small, (size_t)n);
}

void add_json_string(struct text *t, const char *s) {
  add(t, "\"", 1);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char escaped[2] = {'\\', (char)c};
      add(t, escaped, 2);
    } else if (c < 0x20) {
      addf(t, "\\u%04x", c);
    } else {
      add(t, &c, 1);
    }
  }
  add(t, "\"", 1);
}

void consume(struct text *t, size_t n) {
  memmove(t->data, t->data + n, t->len - n);
  t->len -= n;
}

void add_frame(struct text *t, char type, const void *payload, uint32_t len) {
  unsigned char header[FRAME_HEADER] = {(unsigned char)type, (unsigned char)len, (unsigned char)(len >> 8),
                                        (unsigned char)(len >> 16), (unsigned char)(len >> 24)};
  add(t, header, FRAME_HEADER);
  if (len > 0) add(t, payload, len);
}

static uint32_t frame_length(const struct frame_reader *r) {
  const unsigned char *h = (const unsigned char *)r->pending.data;
  return (uint32_t)h[1] | (uint32_t)h[2] << 8 | (uint32_t)h[3] << 16 | (uint32_t)h[4] << 24;
}

int next_frame(struct frame_reader *r, char *type, char **payload, uint32_t *len) {
  if (r->pending.len < FRAME_HEADER) return 0;
  uint32_t n = frame_length(r);
  if (n > FRAME_MAX) return -1;
  if (r->pending.len < FRAME_HEADER + n) return 0;
  *type = r->pending.data[0];
  *payload = r->pending.data + FRAME_HEADER;
  *len = n;
  return 1;
}

void drop_frame(struct frame_reader *r) {
  consume(&r->pending, FRAME_HEADER + frame_length(r));
}

int write_all(int fd, const void *data, size_t len) {
  const char *at = data;
  while (len > 0) {
    ssize_t put = write(fd, at, len);
    if (put < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    at += put;
    len -= (size_t)put;
  }
  return 0;
}

void mirror(unsigned status) {
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
