/* csrun — run one payload in a jail and capture what it did: bounded stdout and
 * stderr, exit status or signal, wall-clock timeout, cpu time, memory. */
#ifndef CSRUN_CAPTURE_H
#define CSRUN_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "../jail/spec.h"
#include "../util/error.h"
#include "launcher.h"
#include "limits.h"
#include "result.h"
#include "stdin.h"

struct csr_capture_opts
{
  double timeout_s;    /* wall clock; 0 = none */
  size_t max_output;   /* per stream: head + tail kept */
  int passthrough_out; /* stream kept output live to these fds; -1 = don't */
  int passthrough_err;
  const struct csr_limits_request *limits; /* NULL: no resource limits */
  /* issue 14: standard input, live output, interruption. */
  struct csr_stdin *stdin_store; /* the payload's stdin (replayed per attempt); NULL: /dev/null */
  bool passthrough_termsafe_out; /* render the live stream with csr_termsafe (a terminal) */
  bool passthrough_termsafe_err;
  int interrupt_fd; /* readable (one byte: the signal number) = stop the jail now; -1: none */
  /* issue 15: how the payload is started (NULL: csr_launcher_jail, a
   * one-shot jail; LIMITS then makes its cgroup). */
  const struct csr_launcher *launcher;
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
/* issue 15: the same for one attempt R of the pipeline, started by
 * O->launcher (which may need R's pieces: the code, the policy). */
int csr_capture_run_attempt (const struct csr_launch_req *r, const struct csr_capture_opts *o,
                             struct csr_attempt *a, char **verdict, size_t *verdict_len,
                             csr_error **err);

/* ---- issue 17: one jail for the attempts whose code never ran.
 * When the gate stops the code before it runs (a syntax error, a blocked
 * call or name, or a check: policy "run" false), nothing of the snippet ran:
 * the jail and its interpreter are as pristine as a new one's, and the next
 * attempt (a local fix, made in microseconds) can run there instead of in a
 * new jail.  The gate sees fd 6 (a socket: CSR_LAUNCH_FD_NEXT) and, after
 * such a verdict, writes "end STATUS CPU_NS HWM_KIB" on fd 3 (the exit
 * status it would have had, its cpu time and peak resident set so far),
 * flushes its output and waits on fd 6 for "POLICY_LEN CODE_LEN\n" + the
 * policy JSON + the next code (which becomes snippet.py, unless the policy
 * has a source_fd: an exec into a sandbox writes nothing there); at the end
 * of fd 6 it exits.  fds 3, 5 and 6 are closed before any code runs.  Only
 * launchers with reuse_unrun pass fd 6 (the one-shot jail, an exec into a
 * sandbox; not a session's cell, which has no interpreter to start). */
struct csr_gated_jail; /* opaque */

/* csr_capture_run_attempt, with fd 6 when KEPT is non-NULL and the
 * launcher has reuse_unrun: when the gate ends attempt A that way, *KEPT is
 * the live jail (A is complete: its output, the gate's exit status as
 * exit_code, duration, cpu and peak memory); otherwise *KEPT is NULL and A
 * is as with csr_capture_run_attempt. */
int csr_capture_run_kept (const struct csr_launch_req *r, const struct csr_capture_opts *o,
                          struct csr_attempt *a, char **verdict, size_t *verdict_len,
                          struct csr_gated_jail **kept, csr_error **err);

/* The next attempt A in the kept jail G with POLICY (JSON) and CODE; the
 * jail's stdin and limits stay those of its first attempt; O's timeout
 * starts now.  G is the callee's: *KEPT is G again when this attempt ended
 * the same way, else NULL (G released).  CSR_CAPTURE_GONE (and no error)
 * when the jail was already gone: run the attempt in a new jail. */
#define CSR_CAPTURE_GONE (-2)
int csr_capture_next (struct csr_gated_jail *g, const char *policy, const char *code,
                      const struct csr_capture_opts *o, struct csr_attempt *a, char **verdict,
                      size_t *verdict_len, struct csr_gated_jail **kept, csr_error **err);

/* End the kept jail G (no more attempts); safe on NULL. */
void csr_capture_drop (struct csr_gated_jail *g);

/* Write what B kept to FD: the head, a "[... csrun: N bytes dropped ...]"
 * line when bytes were dropped, and the tail (errors writing are ignored).
 * TERMSAFE renders head and tail with csr_termsafe (each on its own, so a
 * sequence cut between them can't reach FD raw).  Returns the last byte
 * written (0-255), or -1 when nothing was. */
int csr_capture_print (int fd, const struct csr_bbuf *b, bool termsafe);

/* issue 14: what attempt A kept of its stdout and stderr, written to OUT_FD
 * and ERR_FD in the order the payload wrote them (a.seq), each stream
 * rendered with csr_termsafe when SAFE_OUT / SAFE_ERR, a "[... csrun: N bytes
 * dropped ...]" line where a stream's dropped middle was.  *OUT_LAST and
 * *ERR_LAST: the last byte written to each (-1: none). */
void csr_capture_print_ordered (const struct csr_attempt *a, int out_fd, int err_fd, bool safe_out,
                                bool safe_err, int *out_last, int *err_last);

#endif
