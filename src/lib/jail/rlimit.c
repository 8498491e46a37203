#include "config.h"
#include "rlimit.h"

#include <errno.h>
#include <sys/resource.h>

static int
set_limit (int res, const char *name, uint64_t value, csr_error **err)
{
  struct rlimit rl = { .rlim_cur = (rlim_t)value, .rlim_max = (rlim_t)value };
  if (setrlimit (res, &rl) < 0)
    return csr_error_errno (err, "setrlimit %s to %llu", name, (unsigned long long)value);
  return 0;
}

int
csr_rlimits_apply (const struct jail_snippet *spec, csr_error **err)
{
  uint64_t nofile = spec->rlimit_nofile ? spec->rlimit_nofile : 1024;
  uint64_t fsize = spec->rlimit_fsize ? spec->rlimit_fsize : spec->tmp_size;
  if (set_limit (RLIMIT_CORE, "core", 0, err) < 0)
    return -1;
  if (set_limit (RLIMIT_NOFILE, "nofile", nofile, err) < 0)
    return -1;
  if (fsize && set_limit (RLIMIT_FSIZE, "fsize", fsize, err) < 0)
    return -1;
  if (spec->rlimit_as && set_limit (RLIMIT_AS, "as", spec->rlimit_as, err) < 0)
    return -1;
  if (spec->rlimit_data && set_limit (RLIMIT_DATA, "data", spec->rlimit_data, err) < 0)
    return -1;
  if (spec->rlimit_nproc && set_limit (RLIMIT_NPROC, "nproc", spec->rlimit_nproc, err) < 0)
    return -1;
  return 0;
}
