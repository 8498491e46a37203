/* csrun — resource limits of the payload (setrlimit). */
#ifndef CSRUN_RLIMIT_H
#define CSRUN_RLIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "spec.h"

/* One limit: RESOURCE (RLIMIT_*) set to VALUE, soft and hard. */
struct csr_rlimit
{
  int resource;
  const char *name;
  uint64_t value;
};
#define CSR_RLIMITS_MAX 6

/* The limits of SPEC's payload, in the order they are set (OUT holds
 * CSR_RLIMITS_MAX): core 0, nofile, fsize, and (when asked) address space,
 * data and nproc.  Their number. */
size_t csr_rlimits_list (const struct jail_snippet *spec, struct csr_rlimit *out);

/* Set them (csr_rlimits_list) in the calling process. */
int csr_rlimits_apply (const struct jail_snippet *spec, csr_error **err);

#endif
