#include "config.h"
#include "rlimit.h"

#include <errno.h>
#include <sys/resource.h>

size_t
csr_rlimits_list (const struct jail_snippet *spec, struct csr_rlimit *out)
{
  uint64_t nofile = spec->rlimit_nofile ? spec->rlimit_nofile : 1024;
  uint64_t fsize = spec->rlimit_fsize ? spec->rlimit_fsize : spec->tmp_size;
  size_t n = 0;
  out[n++] = (struct csr_rlimit){ RLIMIT_CORE, "core", 0 };
  out[n++] = (struct csr_rlimit){ RLIMIT_NOFILE, "nofile", nofile };
  if (fsize)
    out[n++] = (struct csr_rlimit){ RLIMIT_FSIZE, "fsize", fsize };
  if (spec->rlimit_as)
    out[n++] = (struct csr_rlimit){ RLIMIT_AS, "as", spec->rlimit_as };
  if (spec->rlimit_data)
    out[n++] = (struct csr_rlimit){ RLIMIT_DATA, "data", spec->rlimit_data };
  if (spec->rlimit_nproc)
    out[n++] = (struct csr_rlimit){ RLIMIT_NPROC, "nproc", spec->rlimit_nproc };
  return n;
}

int
csr_rlimits_apply (const struct jail_snippet *spec, csr_error **err)
{
  struct csr_rlimit l[CSR_RLIMITS_MAX];
  size_t n = csr_rlimits_list (spec, l);
  for (size_t i = 0; i < n; i++)
    {
      struct rlimit rl = { .rlim_cur = (rlim_t)l[i].value, .rlim_max = (rlim_t)l[i].value };
      if (setrlimit (l[i].resource, &rl) < 0)
        return csr_error_errno (err, "setrlimit %s to %llu", l[i].name,
                                (unsigned long long)l[i].value);
    }
  return 0;
}
