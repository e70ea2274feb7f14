/*
 * `sdk-pty COLS ROWS PROGRAM [ARG...]`: runs PROGRAM on a new pseudo-terminal of COLS x ROWS (a
 * terminal of `sbx.pty`, issue 28), as sandbox code, in the sandbox: sandboxd starts it like any command
 * (its stdio are pipes) and speaks to it in frames on its stdin, so terminal input and a resize never
 * mix:
 *   'i' <u32 big-endian length> <bytes>    bytes typed into the terminal
 *   'r' <u32 length = 4> <u16 cols> <u16 rows>   the terminal's new size (SIGWINCH to its foreground)
 * What the terminal writes comes out on stdout as it is. The end of stdin hangs the terminal up
 * (SIGHUP to its session). Ends when the terminal's last writer is gone, with PROGRAM's exit status
 * (128 + the signal that ended it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define FRAME_MAX (1 << 20)

static void fail(const char *what) {
  fprintf(stderr, "sdk-pty: %s: %s\n", what, strerror(errno));
  exit(127);
}

static int dimension(const char *text) {
  char *end;
  long value = strtol(text, &end, 10);
  if (*end != 0 || value < 1 || value > 10000) {
    fprintf(stderr, "sdk-pty: bad size %s\n", text);
    exit(127);
  }
  return (int)value;
}

/* Writes all of `data` to `fd`, waiting as long as it takes. */
static int write_all(int fd, const unsigned char *data, size_t len) {
  while (len > 0) {
    ssize_t put = write(fd, data, len);
    if (put < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        struct pollfd wait = {.fd = fd, .events = POLLOUT};
        poll(&wait, 1, -1);
        continue;
      }
      return -1;
    }
    data += put;
    len -= (size_t)put;
  }
  return 0;
}

static void resize(int master, int cols, int rows) {
  struct winsize size = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
  ioctl(master, TIOCSWINSZ, &size);
}

/* Handles every whole frame at the start of `buf` (`*len` bytes); keeps the rest. */
static int frames(int master, unsigned char *buf, size_t *len) {
  size_t off = 0;
  while (*len - off >= 5) {
    uint32_t size = ((uint32_t)buf[off + 1] << 24) | ((uint32_t)buf[off + 2] << 16) |
                    ((uint32_t)buf[off + 3] << 8) | buf[off + 4];
    if (size > FRAME_MAX) return -1;
    if (*len - off - 5 < size) break;
    unsigned char *payload = buf + off + 5;
    if (buf[off] == 'i') {
      if (write_all(master, payload, size) < 0) return -1;
    } else if (buf[off] == 'r' && size == 4) {
      resize(master, (payload[0] << 8) | payload[1], (payload[2] << 8) | payload[3]);
    } else {
      return -1;
    }
    off += 5 + size;
  }
  memmove(buf, buf + off, *len - off);
  *len -= off;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: sdk-pty COLS ROWS PROGRAM [ARG...]\n");
    return 127;
  }
  int cols = dimension(argv[1]), rows = dimension(argv[2]);
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0) fail("posix_openpt");
  const char *slave_name = ptsname(master);
  if (slave_name == NULL) fail("ptsname");
  resize(master, cols, rows);
  /* Opened before the fork, so the terminal has a holder from the start: a master read never sees the
   * hang-up of a terminal nobody has opened yet (gVisor's parent can get there before the child). */
  int slave = open(slave_name, O_RDWR | O_NOCTTY);
  if (slave < 0) fail(slave_name);
  pid_t child = fork();
  if (child < 0) fail("fork");
  if (child == 0) {
    close(master);
    setsid();
    ioctl(slave, TIOCSCTTY, 0);
    dup2(slave, 0);
    dup2(slave, 1);
    dup2(slave, 2);
    if (slave > 2) close(slave);
    execvp(argv[3], argv + 3);
    fail(argv[3]);
  }
  close(slave);
  signal(SIGPIPE, SIG_IGN);
  static unsigned char in[FRAME_MAX + 5 + 65536];
  size_t in_len = 0;
  unsigned char out[65536];
  for (;;) {
    struct pollfd fds[2] = {{.fd = master, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t got = read(master, out, sizeof out);
      if (got > 0) {
        if (write_all(1, out, (size_t)got) < 0) break;
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        break; /* EIO: the terminal's last writer is gone */
      }
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t got = read(0, in + in_len, sizeof in - in_len);
      if (got > 0) {
        in_len += (size_t)got;
        if (frames(master, in, &in_len) < 0) {
          fprintf(stderr, "sdk-pty: a malformed frame on stdin\n");
          break; /* hung up, below */
        }
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        break; /* hung up: stdin ended */
      }
    }
  }
  /* The terminal hangs up: its session gets SIGHUP, reads on it end. */
  close(master);
  kill(-child, SIGHUP);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
