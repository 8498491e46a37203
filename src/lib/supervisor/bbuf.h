/* csrun — a bounded output buffer: keeps the first HEAD and the last TAIL bytes
 * of a stream and counts what was dropped in between. */
#ifndef CSRUN_BBUF_H
#define CSRUN_BBUF_H

#include <stddef.h>
#include <stdint.h>

struct csr_bbuf
{
  size_t head_cap, tail_cap;
  char *head;
  size_t head_len;
  char *tail; /* ring buffer of tail_cap bytes */
  size_t tail_pos, tail_len;
  uint64_t total; /* every byte ever appended */
};

/* Keep at most MAX bytes: MAX/2 of head, the rest as tail. Returns -1 on ENOMEM. */
int csr_bbuf_init (struct csr_bbuf *b, size_t max);
/* The same bounds, but the head is not kept here: the caller streams the
 * bytes csr_bbuf_append says went into it (e.g. into a file) and takes the
 * tail at the end (csr_bbuf_tail); only the tail's memory is used. */
int csr_bbuf_init_streamed (struct csr_bbuf *b, size_t max);
void csr_bbuf_release (struct csr_bbuf *b);
/* Append; returns how many leading bytes of DATA went into the head (a front
 * end may stream exactly those live). */
size_t csr_bbuf_append (struct csr_bbuf *b, const char *data, size_t len);
/* Bytes that were neither kept in head nor in tail. */
uint64_t csr_bbuf_dropped (const struct csr_bbuf *b);
/* The kept tail bytes that are not already part of the head, in order;
 * returns a malloc'ed copy (NUL-terminated) and its length in *len. */
char *csr_bbuf_tail (const struct csr_bbuf *b, size_t *len);
/* Head + tail joined (no marker), malloc'ed, NUL-terminated (streamed: the
 * tail alone). */
char *csr_bbuf_contents (const struct csr_bbuf *b, size_t *len);

#endif
