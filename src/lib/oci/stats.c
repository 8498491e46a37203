/* csrun — a container's statistics read from its cgroup (csrun events):
 * cpu, memory, pids and the OOM-kill count, from cgroup v2 or from the v1
 * hierarchies the container was placed in. */
#include "config.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "util/cleanup.h"

/* The contents of DIR/NAME (at most 64 KiB), or NULL when it can't be read. */
static char *
read_small (const char *dir, const char *name)
{
  char path[4096];
  if ((size_t)snprintf (path, sizeof path, "%s/%s", dir, name) >= sizeof path)
    return NULL;
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return NULL;
  size_t cap = 65536, len = 0;
  char *buf = malloc (cap + 1);
  if (buf == NULL)
    return NULL;
  for (;;)
    {
      ssize_t r = read (fd, buf + len, cap - len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          free (buf);
          return NULL;
        }
      if (r == 0 || (len += (size_t)r) == cap)
        break;
    }
  buf[len] = '\0';
  return buf;
}

/* DIR/NAME as one unsigned number ("max" is 0 = unlimited); false if absent. */
static bool
read_u64 (const char *dir, const char *name, uint64_t *out)
{
  cleanup_free char *s = read_small (dir, name);
  if (s == NULL)
    return false;
  if (strncmp (s, "max", 3) == 0)
    {
      *out = 0;
      return true;
    }
  char *end;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno || end == s)
    return false;
  *out = v;
  return true;
}

/* The value of KEY in a "key value" per line file; false if absent. */
static bool
keyed_u64 (const char *text, const char *key, uint64_t *out)
{
  size_t kl = strlen (key);
  for (const char *l = text; l && *l; l = strchr (l, '\n'), l = l ? l + 1 : NULL)
    if (strncmp (l, key, kl) == 0 && l[kl] == ' ')
      {
        *out = strtoull (l + kl + 1, NULL, 10);
        return true;
      }
  return false;
}

static void
read_percpu (const char *text, struct oci_cgroup_stats *s)
{
  s->n_percpu = 0;
  const char *c = text;
  while (s->n_percpu < OCI_STATS_MAX_CPUS)
    {
      char *end;
      unsigned long long v = strtoull (c, &end, 10);
      if (end == c)
        break;
      s->percpu[s->n_percpu++] = v;
      c = end;
    }
}

static void
stats_v2 (const char *dir, struct oci_cgroup_stats *s)
{
  cleanup_free char *cpu = read_small (dir, "cpu.stat");
  uint64_t v;
  if (cpu && keyed_u64 (cpu, "usage_usec", &v))
    {
      s->has_cpu = true;
      s->cpu_total = v * 1000;
      if (keyed_u64 (cpu, "user_usec", &v))
        s->cpu_user = v * 1000;
      if (keyed_u64 (cpu, "system_usec", &v))
        s->cpu_kernel = v * 1000;
      if (keyed_u64 (cpu, "nr_periods", &v))
        s->periods = v;
      if (keyed_u64 (cpu, "nr_throttled", &v))
        s->throttled_periods = v;
      if (keyed_u64 (cpu, "throttled_usec", &v))
        s->throttled_time = v * 1000;
    }
  if (read_u64 (dir, "memory.current", &s->mem_usage))
    {
      s->has_memory = true;
      (void)read_u64 (dir, "memory.max", &s->mem_limit);
      (void)read_u64 (dir, "memory.peak", &s->mem_max);
      (void)read_u64 (dir, "memory.swap.current", &s->swap_usage);
      (void)read_u64 (dir, "memory.swap.max", &s->swap_limit);
      cleanup_free char *ev = read_small (dir, "memory.events");
      if (ev && keyed_u64 (ev, "oom_kill", &v))
        {
          s->has_oom = true;
          s->oom_kills = v;
        }
    }
  if (read_u64 (dir, "pids.current", &s->pids_current))
    {
      s->has_pids = true;
      (void)read_u64 (dir, "pids.max", &s->pids_limit);
    }
}

static void
stats_v1 (const char *dir, struct oci_cgroup_stats *s)
{
  uint64_t v;
  if (!s->has_cpu && read_u64 (dir, "cpuacct.usage", &s->cpu_total))
    {
      s->has_cpu = true;
      cleanup_free char *per = read_small (dir, "cpuacct.usage_percpu");
      if (per)
        read_percpu (per, s);
      cleanup_free char *st = read_small (dir, "cpuacct.stat");
      long hz = sysconf (_SC_CLK_TCK);
      uint64_t tick = hz > 0 ? 1000000000u / (uint64_t)hz : 10000000u;
      if (st && keyed_u64 (st, "user", &v))
        s->cpu_user = v * tick;
      if (st && keyed_u64 (st, "system", &v))
        s->cpu_kernel = v * tick;
    }
  cleanup_free char *cpu = read_small (dir, "cpu.stat");
  if (cpu && keyed_u64 (cpu, "nr_periods", &v))
    {
      s->periods = v;
      if (keyed_u64 (cpu, "nr_throttled", &v))
        s->throttled_periods = v;
      if (keyed_u64 (cpu, "throttled_time", &v))
        s->throttled_time = v;
    }
  if (!s->has_memory && read_u64 (dir, "memory.usage_in_bytes", &s->mem_usage))
    {
      s->has_memory = true;
      (void)read_u64 (dir, "memory.limit_in_bytes", &s->mem_limit);
      (void)read_u64 (dir, "memory.max_usage_in_bytes", &s->mem_max);
      (void)read_u64 (dir, "memory.failcnt", &s->mem_failcnt);
      (void)read_u64 (dir, "memory.memsw.usage_in_bytes", &s->swap_usage);
      (void)read_u64 (dir, "memory.memsw.limit_in_bytes", &s->swap_limit);
      cleanup_free char *oom = read_small (dir, "memory.oom_control");
      if (oom && keyed_u64 (oom, "oom_kill", &v))
        {
          s->has_oom = true;
          s->oom_kills = v;
        }
    }
  if (!s->has_pids && read_u64 (dir, "pids.current", &s->pids_current))
    {
      s->has_pids = true;
      (void)read_u64 (dir, "pids.max", &s->pids_limit);
    }
}

int
oci_cgroup_stats (const struct oci_cgroup *cg, struct oci_cgroup_stats *s, csr_error **err)
{
  memset (s, 0, sizeof *s);
  if (cg->v2 == NULL && cg->n_v1 == 0)
    return csr_error_set (err, ENOENT, "the container has no cgroup: no statistics");
  /* v1 first: on a hybrid host the controllers are there, v2 has none. */
  for (size_t i = 0; i < cg->n_v1; i++)
    stats_v1 (cg->v1[i], s);
  if (cg->v2 && !s->has_cpu && !s->has_memory && !s->has_pids)
    stats_v2 (cg->v2, s);
  if (!s->has_cpu && !s->has_memory && !s->has_pids)
    return csr_error_set (err, ENOENT, "the container's cgroup is gone or has no controllers");
  return 0;
}

#define KEY(k) yajl_gen_string (y, (const unsigned char *)(k), strlen (k))
#define STR(v) yajl_gen_string (y, (const unsigned char *)(v), strlen (v))
#define NUM(k, v) (KEY (k), yajl_gen_integer (y, (long long)(v)))

char *
oci_stats_event_json (const char *id, const struct oci_cgroup_stats *s)
{
  yajl_gen y = yajl_gen_alloc (NULL);
  if (y == NULL)
    return NULL;
  yajl_gen_map_open (y);
  KEY ("type");
  STR ("stats");
  KEY ("id");
  STR (id);
  KEY ("data");
  yajl_gen_map_open (y);
  KEY ("cpu");
  yajl_gen_map_open (y);
  KEY ("usage");
  yajl_gen_map_open (y);
  if (s->n_percpu)
    {
      KEY ("percpu");
      yajl_gen_array_open (y);
      for (size_t i = 0; i < s->n_percpu; i++)
        yajl_gen_integer (y, (long long)s->percpu[i]);
      yajl_gen_array_close (y);
    }
  NUM ("total", s->cpu_total);
  NUM ("kernel", s->cpu_kernel);
  NUM ("user", s->cpu_user);
  yajl_gen_map_close (y);
  KEY ("throttling");
  yajl_gen_map_open (y);
  NUM ("periods", s->periods);
  NUM ("throttledPeriods", s->throttled_periods);
  NUM ("throttledTime", s->throttled_time);
  yajl_gen_map_close (y);
  yajl_gen_map_close (y);
  KEY ("memory");
  yajl_gen_map_open (y);
  KEY ("usage");
  yajl_gen_map_open (y);
  NUM ("limit", s->mem_limit);
  NUM ("usage", s->mem_usage);
  NUM ("max", s->mem_max);
  NUM ("failcnt", s->mem_failcnt);
  yajl_gen_map_close (y);
  KEY ("swap");
  yajl_gen_map_open (y);
  NUM ("limit", s->swap_limit);
  NUM ("usage", s->swap_usage);
  yajl_gen_map_close (y);
  yajl_gen_map_close (y);
  KEY ("pids");
  yajl_gen_map_open (y);
  NUM ("current", s->pids_current);
  NUM ("limit", s->pids_limit);
  yajl_gen_map_close (y);
  yajl_gen_map_close (y);
  yajl_gen_status st = yajl_gen_map_close (y);
  const unsigned char *buf;
  size_t len;
  char *out = NULL;
  if (st == yajl_gen_status_ok && yajl_gen_get_buf (y, &buf, &len) == yajl_gen_status_ok)
    out = strndup ((const char *)buf, len);
  yajl_gen_free (y);
  return out;
}
