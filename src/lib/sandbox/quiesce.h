/* csrun — keeping a running sandbox's processes still while its layer is
 * read (a checkpoint): its cgroup frozen (cgroup/freezer.c) when it has one
 * with a freezer, else every process of its pid namespace stopped with
 * SIGSTOP, and waited for. */
#ifndef CSRUN_SANDBOX_QUIESCE_H
#define CSRUN_SANDBOX_QUIESCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../cgroup/cgroup.h"
#include "../util/error.h"

struct csr_quiesce
{
  const struct csr_cgroup *frozen; /* the cgroup frozen, or NULL */
  pid_t *stopped;                  /* the processes stopped with SIGSTOP */
  size_t n_stopped;
  const char *method; /* "cgroup-freezer", "sigstop" or "none" (nothing ran) */
};

/* Freeze CG (may be NULL); without a freezer, stop with SIGSTOP every
 * process that descends from the caller and lives in a pid namespace below
 * the caller's (the sandbox's: the caller is its keeper), but SKIP (its
 * init, which never writes); processes stopped before are left so.  Waits
 * until all are stopped (at most 5 s: a process that does not stop, in an
 * uninterruptible sleep, is an error).  *Q says how, for
 * csr_quiesce_release. */
int csr_quiesce (const struct csr_cgroup *cg, pid_t skip, struct csr_quiesce *q, csr_error **err);
/* Thaw, or SIGCONT what was stopped; *Q is emptied (-1: the thaw failed). */
int csr_quiesce_release (struct csr_quiesce *q, csr_error **err);

#endif
