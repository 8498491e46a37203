#include "config.h"

/* csrun — cgroup statistics: a snippet cgroup's after its run (OOM kill,
 * peak memory, cpu time), and an OCI container's for `csrun events`, in the
 * shape runc prints ("data" of {"type":"stats","id":...,"data":{...}}):
 * cpu.usage {total, percpu, kernel, user} (ns), cpu.throttling, memory
 * {cache, usage, swap, kernel: {usage, max, failcnt, limit}, raw}, pids
 * {current, limit}.  What the cgroup lacks is left out (or 0), as runc does.
 * v1: cpuacct.*, cpu.stat, memory.*, pids.*; v2: cpu.stat, memory.current,
 * memory.max, memory.peak, memory.swap.*, memory.stat, pids.*. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "cgroup-internal.h"

/* The directory of CG holding FILE (v1 dirs first, then v2), or NULL. */
static const char *
holder (const struct csr_cgroup *cg, const char *file)
{
  for (size_t i = 0; i < cg->n_v1 && i < CSR_CG_MAX_DIRS; i++)
    if (cg->v1[i] && csr_cg_path_exists (cg->v1[i], file))
      return cg->v1[i];
  if (cg->v2 && csr_cg_path_exists (cg->v2, file))
    return cg->v2;
  return NULL;
}

/* A single number (or "max" -> UINT64_MAX as runc reports it); 0 when absent. */
static uint64_t
num (const struct csr_cgroup *cg, const char *file)
{
  const char *d = holder (cg, file);
  cleanup_free char *s = NULL;
  if (d == NULL || csr_cg_path_read (d, file, &s, NULL) != 0)
    return 0;
  if (strncmp (s, "max", 3) == 0)
    return UINT64_MAX;
  return strtoull (s, NULL, 10);
}

/* KEY's value in the "key value" lines of FILE (0 when absent). */
static uint64_t
keyed (const struct csr_cgroup *cg, const char *file, const char *key)
{
  const char *d = holder (cg, file);
  cleanup_free char *s = NULL;
  if (d == NULL || csr_cg_path_read (d, file, &s, NULL) != 0)
    return 0;
  size_t kl = strlen (key);
  for (char *p = s; p && *p; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : NULL)
    if (strncmp (p, key, kl) == 0 && p[kl] == ' ')
      return strtoull (p + kl + 1, NULL, 10);
  return 0;
}

/* "usage":N,"max":N,"failcnt":N,"limit":N for the v1 memory files with
 * PREFIX ("memory", "memory.memsw", "memory.kmem"). */
static void
v1_mem_entry (FILE *f, const struct csr_cgroup *cg, const char *prefix)
{
  char u[64], m[64], fc[64], l[64];
  snprintf (u, sizeof u, "%s.usage_in_bytes", prefix);
  snprintf (m, sizeof m, "%s.max_usage_in_bytes", prefix);
  snprintf (fc, sizeof fc, "%s.failcnt", prefix);
  snprintf (l, sizeof l, "%s.limit_in_bytes", prefix);
  fprintf (f,
           "{\"usage\":%" PRIu64 ",\"max\":%" PRIu64 ",\"failcnt\":%" PRIu64 ",\"limit\":%" PRIu64
           "}",
           num (cg, u), num (cg, m), num (cg, fc), num (cg, l));
}

/* memory.stat as "raw": {"key":N,...}. */
static void
raw_stat (FILE *f, const struct csr_cgroup *cg)
{
  const char *d = holder (cg, "memory.stat");
  cleanup_free char *s = NULL;
  fputs ("\"raw\":{", f);
  if (d && csr_cg_path_read (d, "memory.stat", &s, NULL) == 0)
    {
      bool first = true;
      char *save = NULL;
      for (char *line = strtok_r (s, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
        {
          char key[64];
          unsigned long long v;
          /* Kernel identifiers only ([a-z0-9_]): nothing to escape. */
          if (sscanf (line, "%63[a-z0-9_] %llu", key, &v) != 2)
            continue;
          fprintf (f, "%s\"%s\":%llu", first ? "" : ",", key, v);
          first = false;
        }
    }
  fputc ('}', f);
}

static void
cpu_stats (FILE *f, const struct csr_cgroup *cg, bool v2)
{
  uint64_t total, user, kernel;
  fputs ("\"cpu\":{\"usage\":{", f);
  if (v2)
    {
      total = keyed (cg, "cpu.stat", "usage_usec") * 1000;
      user = keyed (cg, "cpu.stat", "user_usec") * 1000;
      kernel = keyed (cg, "cpu.stat", "system_usec") * 1000;
      fprintf (f, "\"total\":%" PRIu64, total);
    }
  else
    {
      /* cpuacct.stat counts USER_HZ ticks. */
      long hz = sysconf (_SC_CLK_TCK);
      uint64_t ns_per_tick = hz > 0 ? 1000000000ULL / (uint64_t)hz : 10000000ULL;
      total = num (cg, "cpuacct.usage");
      user = keyed (cg, "cpuacct.stat", "user") * ns_per_tick;
      kernel = keyed (cg, "cpuacct.stat", "system") * ns_per_tick;
      fprintf (f, "\"total\":%" PRIu64 ",\"percpu\":[", total);
      const char *d = holder (cg, "cpuacct.usage_percpu");
      cleanup_free char *s = NULL;
      if (d && csr_cg_path_read (d, "cpuacct.usage_percpu", &s, NULL) == 0)
        {
          char *p = s, *end;
          bool first = true;
          for (;;)
            {
              unsigned long long v = strtoull (p, &end, 10);
              if (end == p)
                break;
              fprintf (f, "%s%llu", first ? "" : ",", v);
              first = false;
              p = end;
            }
        }
      fputc (']', f);
    }
  fprintf (f, ",\"kernel\":%" PRIu64 ",\"user\":%" PRIu64 "}", kernel, user);
  uint64_t throttled_time = v2 ? keyed (cg, "cpu.stat", "throttled_usec") * 1000
                               : keyed (cg, "cpu.stat", "throttled_time");
  fprintf (f,
           ",\"throttling\":{\"periods\":%" PRIu64 ",\"throttled_periods\":%" PRIu64
           ",\"throttled_time\":%" PRIu64 "}}",
           keyed (cg, "cpu.stat", "nr_periods"), keyed (cg, "cpu.stat", "nr_throttled"),
           throttled_time);
}

static void
memory_stats (FILE *f, const struct csr_cgroup *cg, bool v2)
{
  fputs (",\"memory\":{", f);
  if (v2)
    {
      fprintf (f, "\"cache\":%" PRIu64, keyed (cg, "memory.stat", "file"));
      fprintf (f,
               ",\"usage\":{\"usage\":%" PRIu64 ",\"max\":%" PRIu64 ",\"failcnt\":%" PRIu64
               ",\"limit\":%" PRIu64 "}",
               num (cg, "memory.current"), num (cg, "memory.peak"),
               keyed (cg, "memory.events", "max"), num (cg, "memory.max"));
      fprintf (f, ",\"swap\":{\"usage\":%" PRIu64 ",\"max\":%" PRIu64 ",\"limit\":%" PRIu64 "}",
               num (cg, "memory.swap.current"), num (cg, "memory.swap.peak"),
               num (cg, "memory.swap.max"));
    }
  else
    {
      fprintf (f, "\"cache\":%" PRIu64 ",\"usage\":", keyed (cg, "memory.stat", "cache"));
      v1_mem_entry (f, cg, "memory");
      fputs (",\"swap\":", f);
      v1_mem_entry (f, cg, "memory.memsw");
      fputs (",\"kernel\":", f);
      v1_mem_entry (f, cg, "memory.kmem");
    }
  fputc (',', f);
  raw_stat (f, cg);
  fputc ('}', f);
}

int
csr_cgroup_stats_json (const struct csr_cgroup *cg, char **out, csr_error **err)
{
  *out = NULL;
  bool v2 = cg->v2 && cg->n_v1 == 0;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    return csr_error_errno (err, "cgroup stats");
  fputc ('{', f);
  cpu_stats (f, cg, v2);
  memory_stats (f, cg, v2);
  uint64_t limit = num (cg, "pids.max");
  fprintf (f, ",\"pids\":{\"current\":%" PRIu64 ",\"limit\":%" PRIu64 "}", num (cg, "pids.current"),
           limit == UINT64_MAX ? 0 : limit);
  fputs (",\"blkio\":{},\"hugetlb\":{}}", f);
  if (ferror (f))
    {
      fclose (f);
      free (buf);
      return csr_error_set (err, EIO, "cgroup stats: write error");
    }
  if (fclose (f) != 0)
    {
      free (buf);
      return csr_error_errno (err, "cgroup stats");
    }
  *out = buf;
  return 0;
}

uint64_t
csr_cgroup_oom_kills (const struct csr_cgroup *cg)
{
  bool v2 = cg->v2 && cg->n_v1 == 0;
  if (v2)
    return keyed (cg, "memory.events", "oom_kill");
  /* v1: "oom_kill N" (kernels since 4.13) in memory.oom_control. */
  return keyed (cg, "memory.oom_control", "oom_kill");
}

/* ---------------------------------------------------------------- snippet cgroups */

/* The directory of the ephemeral cgroup CG holding controller IDX, or NULL. */
static struct csr_cg_dir *
ctl_dir (struct csr_cgroup *cg, int idx)
{
  for (size_t i = 0; i < cg->n_dirs; i++)
    if ((cg->dirs[i].mask & (1u << idx)) && cg->dirs[i].fd >= 0)
      return &cg->dirs[i];
  return NULL;
}

int
csr_cg_v2_stats (struct csr_cgroup *cg, struct csr_cgroup_stats *st, csr_error **err)
{
  char buf[1024];
  uint64_t v;
  int fd = cg->dirs[0].fd;
  ssize_t r = csr_cg_read (fd, "memory.events", buf, sizeof buf);
  if (r < 0 && r != -ENOENT)
    return csr_error_set (err, (int)-r, "cgroup: read %s/%s/memory.events", cg->dirs[0].parent,
                          cg->name);
  if (r >= 0 && csr_cg_key_u64 (buf, "oom_kill", &v))
    st->oom_killed = v > 0;
  if (csr_cg_read (fd, "memory.peak", buf, sizeof buf) > 0)
    st->memory_peak = strtoull (buf, NULL, 10); /* kernel 5.19+ */
  if (csr_cg_read (fd, "cpu.stat", buf, sizeof buf) > 0 && csr_cg_key_u64 (buf, "usage_usec", &v))
    st->cpu_usec = v;
  return 0;
}

int
csr_cg_v1_stats (struct csr_cgroup *cg, struct csr_cgroup_stats *st, csr_error **err)
{
  char buf[1024];
  uint64_t v;
  struct csr_cg_dir *mem = ctl_dir (cg, CSR_CG_V1_MEMORY);
  if (mem)
    {
      /* "oom_kill N" is in memory.oom_control since kernel 4.13; memory.failcnt
       * only says the limit was hit (reclaim), not that anything was killed. */
      ssize_t r = csr_cg_read (mem->fd, "memory.oom_control", buf, sizeof buf);
      if (r < 0)
        return csr_error_set (err, (int)-r, "cgroup: read %s/%s/memory.oom_control", mem->parent,
                              cg->name);
      if (csr_cg_key_u64 (buf, "oom_kill", &v))
        st->oom_killed = v > 0;
      if (csr_cg_read (mem->fd, "memory.max_usage_in_bytes", buf, sizeof buf) > 0)
        st->memory_peak = strtoull (buf, NULL, 10);
    }
  struct csr_cg_dir *acct = ctl_dir (cg, CSR_CG_V1_CPUACCT);
  if (acct && csr_cg_read (acct->fd, "cpuacct.usage", buf, sizeof buf) > 0)
    st->cpu_usec = strtoull (buf, NULL, 10) / 1000; /* ns */
  return 0;
}

/* issue 17: between two attempts in one jail. */
int
csr_cgroup_reset_peak (struct csr_cgroup *cg)
{
  if (cg == NULL || cg->be == NULL)
    return -EINVAL;
  if (csr_cgroup_mechanism (cg) != CSR_CG_V1)
    return -EOPNOTSUPP; /* v2's memory.peak resets only for the fd that wrote it */
  struct csr_cg_dir *mem = ctl_dir (cg, CSR_CG_V1_MEMORY);
  if (mem == NULL)
    return -ENOENT;
  return csr_cg_write (mem->fd, "memory.max_usage_in_bytes", "0");
}
