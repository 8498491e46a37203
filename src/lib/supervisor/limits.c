#include "config.h"
#include "limits.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../util/log.h"
#include "result.h"

#define CPU_PERIOD_US 100000

static const char *
missing_list (unsigned mask, char *buf, size_t size)
{
  snprintf (buf, size, "%s%s%s", mask & CSR_LIMIT_MEMORY ? " --memory" : "",
            mask & CSR_LIMIT_PIDS ? " --pids" : "", mask & CSR_LIMIT_CPU ? " --cpus" : "");
  return buf;
}

int
csr_limits_prepare (const struct csr_limits_request *req, struct jail_snippet *spec,
                    struct csr_limits_applied *out, csr_error **err)
{
  memset (out, 0, sizeof *out);
  struct csr_cgroup_limits cl = { .memory = req->memory, .pids = req->pids };
  if (req->cpu_millis)
    {
      cl.cpu_period_us = CPU_PERIOD_US;
      cl.cpu_quota_us = req->cpu_millis * CPU_PERIOD_US / 1000;
    }
  struct csr_cgroup_enforced enf = { false, false, false };
  bool any = req->memory || req->pids || req->cpu_millis;
  if (any && csr_cgroup_create (&cl, &out->cg, &enf, err) < 0)
    return -1;
  bool rl = false;
  out->memory = req->memory && out->cg && enf.memory;
  out->pids = req->pids && out->cg && enf.pids;
  out->cpu = req->cpu_millis && out->cg && enf.cpu;
  if (req->memory && !out->memory)
    {
      /* RLIMIT_DATA, not RLIMIT_AS: since Linux 4.7 it counts a process's
       * private writable mappings (heap, anonymous mmap, thread stacks), what
       * a snippet really allocates, and not the address space reserved but
       * not yet usable (each glibc malloc arena reserves 64 MiB PROT_NONE: 15
       * threads broke under RLIMIT_AS 512M; 32 run under RLIMIT_DATA). */
      spec->rlimit_data = req->memory;
      out->memory = out->memory_by_rlimit = rl = true;
    }
  if (req->pids && !out->pids)
    {
      spec->rlimit_nproc = req->pids;
      out->pids = rl = true;
    }
  spec->jail.cgroup = out->cg;
  const char *cgname = out->cg ? csr_cgroup_mechanism_name (csr_cgroup_mechanism (out->cg)) : NULL;
  snprintf (out->mechanism, sizeof out->mechanism, "%s%s%s", cgname ? cgname : "",
            cgname && rl ? "+" : "", rl ? "rlimit" : (cgname ? "" : "none"));

  unsigned missing = 0;
  if (req->cpu_millis && !out->cpu)
    missing |= CSR_LIMIT_CPU;
  char buf[64];
  if (missing & req->explicit_mask && !req->best_effort)
    {
      csr_limits_finish (out, NULL);
      return csr_error_set (err, 0,
                            "cannot enforce%s here (no writable cgroup with that controller); "
                            "pass --best-effort-limits to run anyway",
                            missing_list (missing & req->explicit_mask, buf, sizeof buf));
    }
  return 0;
}

void
csr_limits_finish (struct csr_limits_applied *ap, struct csr_cgroup_stats *st)
{
  if (st)
    memset (st, 0, sizeof *st);
  if (ap->cg == NULL)
    return;
  if (st)
    {
      csr_error *e = NULL;
      if (csr_cgroup_stats (ap->cg, st, &e) < 0)
        {
          csr_debug ("cgroup statistics: %s", csr_error_text (e));
          csr_error_free (e);
        }
    }
  csr_cgroup_destroy (ap->cg);
  ap->cg = NULL;
}

const char *
csr_limits_warning (const struct csr_limits *l, char *buf, size_t size)
{
  bool rl = l->mechanism && strstr (l->mechanism, "rlimit") != NULL;
  bool nocpu = l->cpu_millis && !l->cpu_enforced;
  bool nomem = l->memory_bytes && !l->memory_enforced;
  bool nopids = l->pids && !l->pids_enforced;
  if (!rl && !nocpu && !nomem && !nopids)
    return NULL;
  snprintf (buf, size, "limits %s%s%s%s%s",
            rl ? "enforced by rlimits, not a cgroup (no writable cgroup here)" : "incomplete",
            nomem ? "; memory not limited" : "", nopids ? "; pids not limited" : "",
            nocpu ? "; cpu not limited" : "",
            rl && l->memory_by_rlimit
                ? "; memory is a per-process limit on private writable memory (RLIMIT_DATA)"
                : "");
  return buf;
}
