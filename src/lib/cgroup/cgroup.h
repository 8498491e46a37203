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

struct oci_dev_rule;

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
/* issue 17: a v2 cgroup's cgroup.procs, opened for writing by the
 * supervisor, for a process that moves itself in by writing "0" (a warm
 * jail, forked by a zygote: no clone3 of ours); -2 when CG is not a v2
 * cgroup, -1 with *ERR. */
int csr_cgroup_procs_fd (const struct csr_cgroup *cg, csr_error **err);
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
/* Start the peak memory of csr_cgroup_stats again from the current usage
 * (v1's memory.max_usage_in_bytes); 0, or -errno (-EOPNOTSUPP on v2, whose
 * memory.peak resets only for the descriptor that wrote to it). */
int csr_cgroup_reset_peak (struct csr_cgroup *cg);
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

/* ================================================================ containers
 *
 * The cgroup of an OCI container: at linux.cgroupsPath (not csrun's own
 * csrun.slice names: a container outlives the csrun process that made it),
 * with linux.resources written, joined by the container before it starts,
 * frozen by pause, emptied and removed by delete.  cgroup v2 when the
 * unified hierarchy has the controllers, else the v1 hierarchies of a
 * hybrid host; none at all (reported) when nothing is writable.  The same
 * handle as the snippet cgroups: the launcher uses csr_cgroup_clone_fd,
 * csr_cgroup_self_enter_fds, csr_cgroup_self_enter and csr_cgroup_enter on
 * both. */

#define CSR_CG_MAX_DIRS 16

/* linux.resources.blockIO.weightDevice[] / throttle*Device[]. */
struct oci_blkio_dev
{
  int64_t major, minor;
  bool has_weight, has_leaf_weight;
  uint16_t weight, leaf_weight;
  uint64_t rate; /* throttle: bytes or operations per second */
};
enum
{
  OCI_THROTTLE_READ_BPS,
  OCI_THROTTLE_WRITE_BPS,
  OCI_THROTTLE_READ_IOPS,
  OCI_THROTTLE_WRITE_IOPS,
  OCI_THROTTLE_N,
};
/* linux.resources.hugepageLimits[]: pageSize as written ("2MB", "1GB"). */
struct oci_hugetlb_limit
{
  char *page_size;
  uint64_t limit;
};
/* linux.resources.network.priorities[]. */
struct oci_net_prio
{
  char *name;
  uint32_t priority;
};

/* linux.resources, as far as csrun applies them.  A field is written when
 * it is given: the has_* flag, or for the first six a non-zero value (-1:
 * unlimited, "max" on v2), so that `update` writes only what it was told.
 * Strings and arrays are owned (oci_cgroup_resources_release) except
 * DEVICES, which is borrowed. */
struct csr_cgroup_resources
{
  int64_t memory_limit; /* bytes; 0: not given, -1: unlimited */
  int64_t memory_swap;  /* memory+swap bytes (OCI semantics); 0: not given, -1: unlimited */
  int64_t pids_limit;   /* 0: not given, < 0: unlimited */
  int64_t cpu_quota;    /* us; 0: not given, -1: unlimited */
  uint64_t cpu_period;  /* us; 0: not given (a new cgroup keeps the kernel's 100000) */
  uint64_t cpu_shares;  /* 0: not given (v2: converted to cpu.weight) */
  bool oom_group;       /* v2 memory.oom.group 1 with the memory limit (snippet cgroups) */
  /* The device cgroup (oci/devices.h): with SET_DEVICES, deny-all + DEVICES
   * + the default devices (v1 devices hierarchy, or a v2 BPF program);
   * without, it is left alone. */
  bool set_devices;
  const struct oci_dev_rule *devices;
  size_t n_devices;

  /* memory: reservation (v1 soft limit, v2 memory.low; -1 unlimited),
   * kernel and kernelTCP (v1 kmem files where the kernel still has them,
   * else ignored with a warning, as runc 1.1 ignores them), swappiness
   * (0..100, v1 only), disableOOMKiller (v1 memory.oom_control). */
  bool has_memory_reservation, has_memory_kernel, has_memory_kernel_tcp, has_memory_swappiness,
      has_disable_oom_killer;
  int64_t memory_reservation, memory_kernel, memory_kernel_tcp;
  uint64_t memory_swappiness;
  bool disable_oom_killer;
  /* cpu: realtime runtime/period (v1 only), cpuset cpus/mems, idle. */
  bool has_cpu_rt_runtime, has_cpu_rt_period, has_cpu_idle;
  int64_t cpu_rt_runtime, cpu_idle;
  uint64_t cpu_rt_period;
  char *cpu_cpus, *cpu_mems; /* NULL: not given */
  /* blockIO */
  bool has_blkio_weight, has_blkio_leaf_weight;
  uint16_t blkio_weight, blkio_leaf_weight;
  struct oci_blkio_dev *blkio_weight_devices;
  size_t n_blkio_weight_devices;
  struct oci_blkio_dev *blkio_throttle[OCI_THROTTLE_N];
  size_t n_blkio_throttle[OCI_THROTTLE_N];
  /* hugepageLimits */
  struct oci_hugetlb_limit *hugetlb;
  size_t n_hugetlb;
  /* network: classID (v1 net_cls), priorities (v1 net_prio) */
  bool has_net_class_id;
  uint32_t net_class_id;
  struct oci_net_prio *net_prios;
  size_t n_net_prios;
  /* unified: cgroup v2 file name -> value (an error on a v1 container cgroup) */
  char **unified_keys, **unified_values;
  size_t n_unified;
};

/* What was enforced, for warnings. */
struct csr_cgroup_applied
{
  bool memory, swap, pids, cpu, shares, freezer;
  bool devices; /* the device rules are enforced */
};

/* The relative cgroup path for CGROUPS_PATH (linux.cgroupsPath, may be
 * NULL) and container ID: NULL -> "/csrun-containers/ID" (not csrun/: the snippet
 * runner's stale clean-up owns that directory); with SYSTEMD (the
 * --systemd-cgroup flag or "slice:prefix:name" syntax) "machine.slice:libpod:ID"
 * -> "/machine.slice/libpod-ID.scope" (cgroupfs emulation: csrun does not
 * talk to systemd); an absolute path as it is; a relative one under
 * /csrun-containers/.
 * ".." components are an error.  Malloc'ed into *OUT. */
int csr_cgroup_container_path (const char *cgroups_path, const char *id, bool systemd, char **out,
                               csr_error **err);

/* Create the cgroup at the relative PATH (mkdir -p; v2: enabling the
 * controllers in each ancestor's cgroup.subtree_control) and write R.
 * Returns 1 with *OUT set, 0 when no cgroup hierarchy is writable here (*OUT
 * NULL: the caller reports it), -1 on an error (nothing left behind: only
 * directories this call made are removed).  An existing leaf is reused; one
 * that holds processes is a warning (as runc: they become the container's,
 * and its delete kills them), a frozen one an error.  Each new v1 cpuset
 * level, and any empty one above it, gets its parent's cpuset.cpus/mems.
 * A limit whose controller is missing: memory, pids and cpu quota/shares
 * are reported false in *APPLIED (the caller warns); everything else
 * (cpuset, hugetlb, blkio, net_cls/net_prio, rt, unified...) is an error
 * (ENOTSUP), never silently ignored.  R may be NULL (no limits).
 * ROOTS_V2 / ROOTS_V1 override the host's mounts for tests (both NULL: read
 * /proc/self/mountinfo; either non-NULL: both are overrides, a NULL one
 * meaning none of that kind): ROOTS_V1 is a NULL-terminated list of v1 mount
 * points.  Files missing there are controllers missing (limit not applied). */
int csr_cgroup_container_create (const char *path, const struct csr_cgroup_resources *r,
                                 const char *roots_v2, const char *const *roots_v1,
                                 struct csr_cgroup **out, struct csr_cgroup_applied *applied,
                                 csr_error **err);
/* The handle of an existing container cgroup, from the directories its
 * state recorded (V2 may be NULL; N_V1 at most CSR_CG_MAX_DIRS).  *OUT is
 * NULL with return 0 when there are none. */
int csr_cgroup_container_open (const char *v2, char *const *v1, size_t n_v1,
                               struct csr_cgroup **out, csr_error **err);
/* Its directories, for the state: the v2 one (or NULL), and the v1 ones. */
const char *csr_cgroup_v2_path (const struct csr_cgroup *cg);
size_t csr_cgroup_v1_paths (const struct csr_cgroup *cg, const char *const **paths);
/* Free the handle (closing its fds); the cgroup itself stays (containers:
 * csr_cgroup_delete removes it).  Safe on NULL. */
void csr_cgroup_free (struct csr_cgroup *cg);
static inline void
csr_cgroup_freep (struct csr_cgroup **cg)
{
  csr_cgroup_free (*cg);
}
#define cleanup_cgroup __attribute__ ((cleanup (csr_cgroup_freep)))

/* Write R into the existing cgroup CG (`csrun update`): only the fields R
 * gives (a cpu quota alone keeps the period, and the reverse); what was
 * written goes to *APPLIED (may be NULL). */
int csr_cgroup_update (const struct csr_cgroup *cg, const struct csr_cgroup_resources *r,
                       struct csr_cgroup_applied *applied, csr_error **err);
/* The pids in CG (v2 dir, else the first v1 dir, and the cgroups below it):
 * sorted, malloc'ed array (NULL when *N is 0).  A missing directory is empty. */
int csr_cgroup_pids (const struct csr_cgroup *cg, pid_t **pids, size_t *n, csr_error **err);
/* Freeze (FREEZE true) or thaw: v2 cgroup.freeze, v1 freezer.state; waits
 * until the kernel says FROZEN (at most 5 s).  ENOTSUP without a freezer. */
int csr_cgroup_freeze (const struct csr_cgroup *cg, bool freeze, csr_error **err);
/* Kill everything in CG (v2 cgroup.kill when present, else SIGKILL to each
 * listed pid until empty, at most 5 s; thaws first), then rmdir the leaf
 * directories and any cgroups the container made below them (never their
 * parents).  Missing directories are fine.  EBUSY when the calling process
 * is in CG (it is not killed). */
int csr_cgroup_delete (const struct csr_cgroup *cg, csr_error **err);

/* `csrun events`: CG's statistics as the JSON object runc prints as an
 * event's "data" (cpu, memory, pids; see stats.c), malloc'ed into
 * *OUT.  Missing files count 0. */
int csr_cgroup_stats_json (const struct csr_cgroup *cg, char **out, csr_error **err);
/* How many processes the kernel OOM-killed in CG so far (v2 memory.events,
 * v1 memory.oom_control "oom_kill"); 0 when unknown. */
uint64_t csr_cgroup_oom_kills (const struct csr_cgroup *cg);

#endif
