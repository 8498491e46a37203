/* csrun — resource limits of the payload (setrlimit). */
#ifndef CSRUN_RLIMIT_H
#define CSRUN_RLIMIT_H

#include "../util/error.h"
#include "spec.h"

/* core 0, nofile, fsize, and (when asked) address space, data and nproc. */
int csr_rlimits_apply (const struct jail_snippet *spec, csr_error **err);

#endif
