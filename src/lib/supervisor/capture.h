/* csrun — run one payload in a jail and capture what it did: bounded stdout and
 * stderr, exit status or signal, wall-clock timeout, cpu time, memory. */
#ifndef CSRUN_CAPTURE_H
#define CSRUN_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "../jail/spec.h"
#include "../util/error.h"
#include "limits.h"
#include "result.h"

struct csr_capture_opts
{
  double timeout_s;    /* wall clock; 0 = none */
  size_t max_output;   /* per stream: head + tail kept */
  int passthrough_out; /* stream kept output live to these fds; -1 = don't */
  int passthrough_err;
  const struct csr_limits_request *limits; /* NULL: no resource limits */
};

/* Runs SPEC (its stdout_fd/stderr_fd are replaced by capture pipes) and fills
 * the run-time fields of *A (A->out and A->err are initialised here and must
 * be released by the caller with csr_bbuf_release).  Returns -1 only when
 * csrun itself failed (the jail could not be set up, ...): a payload that
 * fails or times out is a normal result. */
int csr_capture_run (const struct jail_snippet *spec, const struct csr_capture_opts *o,
                     struct csr_attempt *a, csr_error **err);

/* The same, and the payload also gets a pipe as fd 3 whose contents (at most
 * 256 KiB: the gate's verdict) end up in *VERDICT (malloc'ed, NUL-terminated,
 * possibly empty) — VERDICT NULL means no fd 3. */
int csr_capture_run_gated (const struct jail_snippet *spec, const struct csr_capture_opts *o,
                           struct csr_attempt *a, char **verdict, size_t *verdict_len,
                           csr_error **err);

/* Write what B kept to FD: the head, a "[... csrun: N bytes dropped ...]"
 * line when bytes were dropped, and the tail (errors writing are ignored).
 * TERMSAFE renders head and tail with csr_termsafe (each on its own, so a
 * sequence cut between them can't reach FD raw).  Returns the last byte
 * written (0-255), or -1 when nothing was. */
int csr_capture_print (int fd, const struct csr_bbuf *b, bool termsafe);

#endif
