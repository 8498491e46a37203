/* csrun — resource limits through cgroups (v2 preferred, v1 on hybrid hosts),
 * with rlimits as the reported fallback.  One cgroup per jail, created by the
 * supervisor (which never joins it), removed at the end; stale ones from a
 * crashed csrun are removed on start.  csrun never touches a cgroup it did not
 * create (its cgroups are named csrun-<pid>-<n> under a csrun.slice/csrun
 * directory it owns). */
#ifndef CSRUN_CGROUP_H
#define CSRUN_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

struct csr_cgroup_limits
{
  uint64_t memory; /* bytes; 0 = none (memory.max + memory.swap.max 0, or v1 limit_in_bytes +
                      memsw when available) */
  uint64_t pids;   /* 0 = none */
  uint64_t cpu_quota_us, cpu_period_us; /* cpu.max "quota period"; 0 = none */
};

enum csr_cgroup_mechanism
{
  CSR_CG_NONE,
  CSR_CG_V2,
  CSR_CG_V1,
};
const char *
csr_cgroup_mechanism_name (enum csr_cgroup_mechanism m); /* "none" "cgroup-v2" "cgroup-v1" */

struct csr_cgroup; /* opaque */

/* Create a cgroup for one jail with LIMITS.  Tries v2 (a writable delegated
 * subtree: the caller's own cgroup's parent when rootless and delegated;
 * /sys/fs/cgroup/csrun.slice as root) with the needed controllers enabled,
 * then v1 (memory, pids, cpu hierarchies that csrun can write).  *OUT is
 * NULL with return 0 when no cgroup can be written (the caller falls back to
 * rlimits and reports it); -1 only on unexpected errors after a cgroup was
 * chosen. *ENFORCED gets which limits are really in force (a limit that was
 * not asked for, 0, is reported false; so is one whose controller is missing).
 * Creating the cgroup never moves anyone: csr_cgroup_enter does. */
struct csr_cgroup_enforced
{
  bool memory, pids, cpu;
};
int csr_cgroup_create (const struct csr_cgroup_limits *limits, struct csr_cgroup **out,
                       struct csr_cgroup_enforced *enforced, csr_error **err);
enum csr_cgroup_mechanism csr_cgroup_mechanism (const struct csr_cgroup *cg);
/* Move PID (the jail's init, still waiting for its go) into the cgroup. */
int csr_cgroup_enter (struct csr_cgroup *cg, pid_t pid, csr_error **err);
/* A directory fd of a v2 cgroup, for clone3(CLONE_INTO_CGROUP), which starts
 * the jail inside it (csr_cgroup_enter is then not needed: a migration on
 * v1 costs an RCU grace period, ~10 ms); -1 for v1 and NULL. */
int csr_cgroup_clone_fd (const struct csr_cgroup *cg);
/* cgroup v1: the jail's init moves itself.  The supervisor opens the "tasks"
 * file of each of the cgroup's v1 directories (FDS gets at most CSR_CG_V1_N,
 * O_CLOEXEC); the child writes "0" to each (csr_cgroup_self_enter).  A task
 * moving only itself skips the kernel's global threadgroup lock, whose write
 * side waits for an RCU grace period: moving the jail from outside costs
 * 15-30 ms, this ~0.02 ms.  The write is checked against the credentials the
 * file was opened with (the supervisor's).  Returns the number of fds (0 for
 * v2 or NULL), or -1 with nothing left open. */
int csr_cgroup_self_enter_fds (const struct csr_cgroup *cg, int *fds, csr_error **err);
/* In the jail's init, before it unshares its cgroup namespace: write "0" to
 * each of FDS and close them. */
int csr_cgroup_self_enter (const int *fds, int n, csr_error **err);
/* After the jail ended: was anything OOM-killed, peak memory (bytes, 0 if
 * unknown), cpu time (usec, 0 if unknown). */
struct csr_cgroup_stats
{
  bool oom_killed;
  uint64_t memory_peak;
  uint64_t cpu_usec;
};
int csr_cgroup_stats (struct csr_cgroup *cg, struct csr_cgroup_stats *st, csr_error **err);
/* Kill every process in the cgroup (cgroup.kill on v2; SIGKILL to each pid of
 * cgroup.procs on v1, repeated until empty), then remove it.  Safe on NULL. */
void csr_cgroup_destroy (struct csr_cgroup *cg);
/* Remove csrun's cgroups whose creator (the pid in the name) is gone. */
void csr_cgroup_cleanup_stale (void);
/* Whether swap is limited too (v2 memory.swap.max 0, v1 memory.memsw.limit_in_bytes
 * equal to the memory limit); false when the kernel has no swap accounting. */
bool csr_cgroup_swap_limited (const struct csr_cgroup *cg);

/* For tests (and hosts with unusual mounts): the same with explicit roots
 * instead of what /proc/self/mountinfo and /proc/self/cgroup say. */
enum
{
  CSR_CG_V1_MEMORY,
  CSR_CG_V1_PIDS,
  CSR_CG_V1_CPU,
  CSR_CG_V1_CPUACCT, /* statistics only (cpu time) */
  CSR_CG_V1_N,
};
struct csr_cgroup_roots
{
  /* The cgroup2 directory that gets csrun.slice/ (root: the cgroup2 mount;
   * rootless: the parent of the caller's own cgroup); NULL = no v2. */
  const char *v2_parent;
  /* Mount points of the v1 hierarchies, indexed by CSR_CG_V1_*; NULL = not
   * mounted; equal strings for co-mounted controllers (cpu,cpuacct). */
  const char *v1[CSR_CG_V1_N];
};
int csr_cgroup_create_at (const struct csr_cgroup_roots *roots,
                          const struct csr_cgroup_limits *limits, struct csr_cgroup **out,
                          struct csr_cgroup_enforced *enforced, csr_error **err);
void csr_cgroup_cleanup_stale_at (const struct csr_cgroup_roots *roots);
/* The roots this host has (computed once per process); NULL on failure. */
const struct csr_cgroup_roots *csr_cgroup_host_roots (void);

#endif
