/* csrun — a container's statistics from its cgroup (csrun events). */
#ifndef CSRUN_OCI_STATS_H
#define CSRUN_OCI_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oci/cgroup.h"
#include "util/error.h"

#define OCI_STATS_MAX_CPUS 1024

/* Times in nanoseconds, sizes in bytes; a limit of 0 means unlimited. */
struct oci_cgroup_stats
{
  bool has_cpu, has_memory, has_pids, has_oom;
  uint64_t cpu_total, cpu_user, cpu_kernel;
  uint64_t percpu[OCI_STATS_MAX_CPUS];
  size_t n_percpu;
  uint64_t periods, throttled_periods, throttled_time;
  uint64_t mem_usage, mem_max, mem_limit, mem_failcnt, swap_usage, swap_limit;
  uint64_t pids_current, pids_limit;
  uint64_t oom_kills; /* memory.events oom_kill (v2), memory.oom_control oom_kill (v1) */
};

/* Read CG's statistics: -1 when it has no cgroup or none of its files can be
 * read (the cgroup is gone). */
int oci_cgroup_stats (const struct oci_cgroup *cg, struct oci_cgroup_stats *s, csr_error **err);

/* {"type":"stats","id":ID,"data":{"cpu":{...},"memory":{...},"pids":{...}}} on one
 * line, runc's event layout (malloc'ed; NULL when out of memory). */
char *oci_stats_event_json (const char *id, const struct oci_cgroup_stats *s);

#endif
