/* csrun — the snippet's standard input, kept so that every attempt reads the
 * same bytes: read lazily from a source fd (csrun's stdin, --stdin FILE),
 * kept in memory up to a threshold and in an unlinked temporary file past
 * it, capped at MAX bytes (the snippet then sees end-of-file at the cap).
 * The capture loop feeds each attempt through a pipe: the stored bytes
 * first, then more from the source, and only when the pipe has room. */
#ifndef CSRUN_STDIN_H
#define CSRUN_STDIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

#define CSR_STDIN_MEM_MAX (1ULL << 20) /* kept in memory up to this; a temp file past it */
#define CSR_STDIN_DEFAULT_MAX (256ULL << 20)

struct csr_stdin
{
  int src;        /* where the bytes come from (borrowed), -1 once at its end */
  uint64_t max;   /* the cap */
  bool truncated; /* the source had more than MAX bytes: the rest was never read */
  char *mem;      /* the first CSR_STDIN_MEM_MAX bytes (or fewer) */
  size_t mem_len, mem_cap;
  int spill;          /* the rest, in an unlinked temporary file; -1 until needed */
  uint64_t len;       /* bytes stored */
  uint64_t mem_limit; /* CSR_STDIN_MEM_MAX (smaller in unit tests) */
};

/* SRC is borrowed (closed by the caller after csr_stdin_release). */
void csr_stdin_init (struct csr_stdin *s, int src, uint64_t max);
void csr_stdin_release (struct csr_stdin *s);
/* Read once from the source (it was found readable) into the store, up to
 * the cap.  Returns the bytes stored (0 at the end of the source or at the
 * cap: s->src is then -1), -1 on an error storing them.  A read error of the
 * source counts as its end (the snippet sees end-of-file). */
ssize_t csr_stdin_fill (struct csr_stdin *s, csr_error **err);
/* Copy up to LEN stored bytes from offset POS into BUF; returns how many. */
ssize_t csr_stdin_get (const struct csr_stdin *s, uint64_t pos, char *buf, size_t len,
                       csr_error **err);

/* One attempt's feed: the write end of the payload's stdin pipe and how far
 * it got.  Owned by csr_capture_run. */
struct csr_stdin_feed
{
  struct csr_stdin *store;
  int fd;            /* the pipe's write end, -1 once closed */
  int peek;          /* its read end, kept to count what the payload left unread */
  uint64_t pos;      /* bytes written to the pipe */
  bool want_source;  /* the pipe took everything stored: read more from the source */
  uint64_t consumed; /* set by csr_stdin_feed_close: what the payload read */
};

/* What to poll for: the pipe's write end (POLLOUT) or the source (POLLIN);
 * -1 when nothing (the feed is closed). */
int csr_stdin_feed_poll_fd (const struct csr_stdin_feed *f, short *events);
/* The polled fd is ready (REVENTS): write to the pipe or read the source;
 * closes the pipe at the end of the input or when the payload closed its
 * end (EPIPE).  -1 on an error storing the input. */
int csr_stdin_feed_step (struct csr_stdin_feed *f, short revents, csr_error **err);
/* The attempt is over: note what the payload consumed (what was written
 * minus what is left in the pipe) and close both ends. */
void csr_stdin_feed_close (struct csr_stdin_feed *f);

#endif
