/* csrun — run one payload in a jail and capture what it did: bounded stdout and
 * stderr, exit status or signal, wall-clock timeout, cpu time, memory. */
#ifndef CSRUN_CAPTURE_H
#define CSRUN_CAPTURE_H

#include <stddef.h>

#include "../jail/spec.h"
#include "../util/error.h"
#include "result.h"

struct csr_capture_opts
{
  double timeout_s;    /* wall clock; 0 = none */
  size_t max_output;   /* per stream: head + tail kept */
  int passthrough_out; /* stream kept output live to these fds; -1 = don't */
  int passthrough_err;
};

/* Runs SPEC (its stdout_fd/stderr_fd are replaced by capture pipes) and fills
 * the run-time fields of *A (A->out and A->err are initialised here and must
 * be released by the caller with csr_bbuf_release).  Returns -1 only when
 * csrun itself failed (the jail could not be set up, ...): a payload that
 * fails or times out is a normal result. */
int csr_capture_run (const struct jail_spec *spec, const struct csr_capture_opts *o,
                     struct csr_attempt *a, csr_error **err);

#endif
