/*
 * gvisor-exec's shared parts (README.md beside this file): failure reports, a growing buffer, the
 * frames the box's spawner and its bridges speak, and the paths and capabilities every mode agrees on.
 */
#ifndef GVISOR_EXEC_H
#define GVISOR_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where the box sees this program (sandboxd's image, bound read-only into the box). */
#define IN_BOX_PATH "/opt/sdk/gvisor-exec"

/* The spawner's socket in the box: a folder of root's alone, on the box's own /run. */
#define SPAWNER_DIR "/run/sdk"
#define SPAWNER_SOCKET SPAWNER_DIR "/spawn.sock"

/* moby's default capabilities (oci/caps/defaults.go), as a mask: what the sandbox's root holds. */
#define MOBY_CAPS                                                                                        \
  ((1ULL << 0) | (1ULL << 1) | (1ULL << 3) | (1ULL << 4) | (1ULL << 5) | (1ULL << 6) | (1ULL << 7) |   \
   (1ULL << 8) | (1ULL << 10) | (1ULL << 13) | (1ULL << 18) | (1ULL << 27) | (1ULL << 29) |            \
   (1ULL << 31))

/*
 * Frames between a bridge (`start`) and the spawner (`init`): a type byte, a 32-bit little-endian
 * length, the payload.
 */
enum frame_type {
  FRAME_REQUEST = 'R', /* bridge → spawner: uid, gid, caps, subreaper, cwd, hold, argc, argv..., envp... */
  FRAME_ATTACH = 'A',  /* bridge → spawner: the pid of a held program whose bridge is gone */
  FRAME_STDIN = 'I',   /* bridge → spawner: bytes for the program's stdin */
  FRAME_STDIN_EOF = 'E',
  FRAME_PID = 'P',     /* spawner → bridge: the program runs, its pid */
  FRAME_FAILED = 'F',  /* spawner → bridge: "<stage> <errno>" */
  FRAME_STDOUT = 'O',
  FRAME_STDERR = 'e',
  FRAME_EXIT = 'X',    /* spawner → bridge: its wait status, once it ended and its output did */
};
#define FRAME_HEADER 5
#define FRAME_MAX (1u << 20)

/* The status fd of `enter` and `start` (-1 when none): "error <stage> <errno>" is written there. */
extern int status_fd;

/* Says why the program could not start, on the status fd, and ends. */
void fail(const char *stage, int error) __attribute__((noreturn));

/* A growing buffer. */
struct text {
  char *data;
  size_t len, cap;
};
void add(struct text *t, const void *s, size_t n);
void addf(struct text *t, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string (bytes above 0x7f pass as they are: Go's decoder takes UTF-8). */
void add_json_string(struct text *t, const char *s);
/* Drops the first `n` bytes. */
void consume(struct text *t, size_t n);

/* Appends one frame to `t`. */
void add_frame(struct text *t, char type, const void *payload, uint32_t len);

/* Reads frames from a byte stream: feed it what was read, take whole frames out. */
struct frame_reader {
  struct text pending;
};
/* The next whole frame in `r` (its type, its payload and length), or 0 when none is complete yet. */
int next_frame(struct frame_reader *r, char *type, char **payload, uint32_t *len);
/* Forgets the frame `next_frame` gave. */
void drop_frame(struct frame_reader *r);

/* write(2) until all of it is written; -1 on an error. */
int write_all(int fd, const void *data, size_t len);

/* Ends as a program with wait status `status` ended: its exit code, or the same signal. */
void mirror(unsigned status) __attribute__((noreturn));

/* The modes (each in its own file). */
struct enter_options {
  const char *socket, *container, *cwd, *caps;
  long uid, gid, subreaper;
  /* hold: the program waits for another bridge when its own goes; attach: such a program's pid (or 0) */
  long hold, attach;
  int env_fd;
  char **program;
};
void enter(const struct enter_options *o) __attribute__((noreturn));
void bridge(const struct enter_options *o) __attribute__((noreturn));
void spawner(void) __attribute__((noreturn));
void relay(const char *to) __attribute__((noreturn));

#endif
