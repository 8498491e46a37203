/* csrun — resource limits of one jail: a cgroup when one can be written,
 * rlimits for what it can't cover, and an honest account of what is enforced. */
#ifndef CSRUN_LIMITS_H
#define CSRUN_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "../cgroup/cgroup.h"
#include "../jail/spec.h"
#include "../util/error.h"

struct csr_limits_request
{
  uint64_t memory;        /* bytes, 0 = none */
  uint64_t pids;          /* 0 = none */
  uint64_t cpu_millis;    /* CPU time per second of wall clock, in thousandths of a CPU; 0 = none */
  unsigned explicit_mask; /* CSR_LIMIT_* the user asked for: those must be enforced */
  bool best_effort;       /* --best-effort-limits: report, don't fail */
};

/* The fewest processes a snippet jail starts with: its init and Python (the
 * gate runs in Python's own process).  Measured: with a pids cgroup of 1 the
 * init can't fork Python. */
#define CSR_LIMITS_MIN_PIDS 2

enum
{
  CSR_LIMIT_MEMORY = 1,
  CSR_LIMIT_PIDS = 2,
  CSR_LIMIT_CPU = 4,
};

struct csr_limits_applied
{
  char mechanism[32];     /* "cgroup-v2", "cgroup-v1", "rlimit", "cgroup-v1+rlimit", "none" */
  bool memory, pids, cpu; /* enforced */
  bool memory_by_rlimit;  /* RLIMIT_DATA: each process's private writable memory, not the jail's
                             resident memory */
  struct csr_cgroup *cg;
};

/* Decide how REQ is enforced for one jail: create its cgroup (SPEC->cgroup),
 * and set SPEC's rlimits for what the cgroup can't do (memory -> RLIMIT_DATA,
 * pids -> RLIMIT_NPROC, which the kernel counts per user namespace).  An
 * explicit limit that nothing can enforce is an error unless best_effort. */
int csr_limits_prepare (const struct csr_limits_request *req, struct jail_snippet *spec,
                        struct csr_limits_applied *out, csr_error **err);
/* After the jail ended: the cgroup's statistics (zeroes without a cgroup),
 * then the cgroup is killed and removed. */
void csr_limits_finish (struct csr_limits_applied *ap, struct csr_cgroup_stats *st);

struct csr_limits;
/* The warning about L's limits that are weaker than a cgroup (rlimits) or not
 * enforced at all, written to BUF; NULL when every limit asked for is in a
 * cgroup. */
const char *csr_limits_warning (const struct csr_limits *l, char *buf, size_t size);

#endif
