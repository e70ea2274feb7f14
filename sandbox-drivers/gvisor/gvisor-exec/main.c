/*
 * gvisor-exec: how sandboxd, outside gVisor, starts and reaches sandbox code inside a gVisor box
 * (README.md beside this file). One static binary, in sandboxd's runtime image:
 *
 *   gvisor-exec enter --socket PATH --container ID --uid N --gid N --caps root|none [--cwd DIR]
 *                     [--subreaper 1] [--hold 1] [--env-fd N] [--status-fd N] -- PROGRAM ARGS...
 *     on the host, by sandboxd: one program of sandbox code (enter.c).
 *   gvisor-exec enter --socket PATH --container ID --attach PID [--status-fd N]
 *     on the host, by sandboxd: the stdio of a held program whose bridge is gone (a snapshot's copy).
 *   gvisor-exec start --uid N --gid N --caps root|none --cwd DIR --subreaper 0|1 --hold 0|1
 *                     --status-fd N -- PROGRAM ARGS...
 *   gvisor-exec start --attach PID --status-fd N
 *     in the box, started by `enter`: the bridge between the program's pipes and sandboxd's (bridge.c).
 *   gvisor-exec init
 *     the box's pid 1: reaps, and spawns every program of sandbox code (spawner.c).
 *   gvisor-exec relay --to ADDRESS
 *     in the box: the gateway's loopback (relay.c).
 */
#define _GNU_SOURCE
#include "gvisor-exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static long number(const char *text) {
  char *end;
  long value = strtol(text, &end, 10);
  if (*text == 0 || *end != 0) fail("arguments", EINVAL);
  return value;
}

int main(int argc, char **argv) {
  if (argc < 2) fail("arguments", EINVAL);
  const char *mode = argv[1];
  if (strcmp(mode, "init") == 0 && argc == 2) spawner();
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
    else if (strcmp(flag, "--subreaper") == 0) o.subreaper = number(value);
    else if (strcmp(flag, "--hold") == 0) o.hold = number(value);
    else if (strcmp(flag, "--attach") == 0) o.attach = number(value);
    else if (strcmp(flag, "--env-fd") == 0) o.env_fd = (int)number(value);
    else if (strcmp(flag, "--status-fd") == 0) status_fd = (int)number(value);
    else if (strcmp(flag, "--to") == 0) to = value;
    else fail("arguments", EINVAL);
  }
  o.program = argv + i;
  if (strcmp(mode, "relay") == 0 && to != NULL) relay(to);
  /* A program to start, as an account; or, to attach, a pid and nothing else. */
  int bad = o.attach > 0 ? i < argc : i >= argc || o.uid < 0 || o.gid < 0;
  if (o.attach < 0 || bad) fail("arguments", EINVAL);
  if (strcmp(o.caps, "root") != 0 && strcmp(o.caps, "none") != 0) fail("arguments", EINVAL);
  if (strcmp(mode, "start") == 0) bridge(&o);
  if (strcmp(mode, "enter") == 0 && o.socket != NULL && o.container != NULL) enter(&o);
  fail("arguments", EINVAL);
}
