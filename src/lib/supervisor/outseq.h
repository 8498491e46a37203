/* csrun — the order in which an attempt wrote its stdout and stderr: chunks
 * (stream, offset in that stream, length) in arrival order, adjacent chunks
 * of one stream merged, bounded like the output itself (the first and the
 * last chunks are kept, the count of those dropped between is kept). */
#ifndef CSRUN_OUTSEQ_H
#define CSRUN_OUTSEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bbuf.h"

#define CSR_OUTSEQ_HEAD 1024
#define CSR_OUTSEQ_TAIL 1024

enum csr_stream
{
  CSR_STREAM_OUT = 0,
  CSR_STREAM_ERR = 1,
};

struct csr_chunk
{
  uint64_t off, len; /* bytes [off, off + len) of the stream */
  enum csr_stream stream;
};

struct csr_outseq
{
  struct csr_chunk *head; /* CSR_OUTSEQ_HEAD */
  size_t n_head;
  struct csr_chunk *ring; /* the last CSR_OUTSEQ_TAIL after the head */
  size_t ring_pos, ring_len;
  uint64_t dropped; /* chunks neither in head nor in ring */
};

/* -1 on ENOMEM.  A zeroed csr_outseq records nothing (and walks nothing). */
int csr_outseq_init (struct csr_outseq *q);
void csr_outseq_release (struct csr_outseq *q);
/* STREAM got LEN more bytes at offset OFF (its total before them). */
void csr_outseq_add (struct csr_outseq *q, enum csr_stream stream, uint64_t off, uint64_t len);

/* The kept output of OUT and ERR in the order it was written.  CB gets each
 * piece of kept bytes (DATA, LEN) of a stream, or once per stream DATA NULL
 * and LEN the count of bytes of it that were dropped (at the place where the
 * first of them was written).  Bytes whose chunk was not kept come where
 * their stream continues (or at the end): their order is then approximate.
 * Returns -1 on ENOMEM (CB may have been called). */
typedef void (*csr_outseq_cb) (void *data, enum csr_stream stream, const char *bytes, uint64_t len);
int csr_outseq_walk (const struct csr_outseq *q, const struct csr_bbuf *out,
                     const struct csr_bbuf *err, csr_outseq_cb cb, void *data);

#endif
