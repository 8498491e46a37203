/* csrun — the cgroup of an OCI container: at linux.cgroupsPath (not csrun's
 * own csrun.slice names: a container outlives the csrun process that made
 * it), with linux.resources written, joined by the container before it
 * starts, frozen by pause, emptied and removed by delete.  cgroup v2 when
 * the unified hierarchy has the controllers, else the v1 hierarchies of a
 * hybrid host; none at all (reported) when nothing is writable. */
#ifndef CSRUN_OCI_CGROUP_H
#define CSRUN_OCI_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"
#include "../oci/oci-config.h"

#define OCI_CG_MAX_DIRS 16

/* The container's cgroup directories (absolute paths). */
struct oci_cgroup
{
  /* The v2 directory, or NULL.  With v1 directories too (a hybrid host)
   * it is the container's place in the controller-less unified hierarchy
   * (as runc and crun put it there): joined, listed and removed, but the
   * limits and the freezer are the v1 ones. */
  char *v2;
  char *v1[OCI_CG_MAX_DIRS]; /* one per v1 hierarchy it was made in */
  size_t n_v1;
};

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
struct oci_cgroup_resources
{
  int64_t memory_limit; /* bytes; 0: not given, -1: unlimited */
  int64_t memory_swap;  /* memory+swap bytes (OCI semantics); 0: not given, -1: unlimited */
  int64_t pids_limit;   /* 0: not given, < 0: unlimited */
  int64_t cpu_quota;    /* us; 0: not given, -1: unlimited */
  uint64_t cpu_period;  /* us; 0: not given (a new cgroup keeps the kernel's 100000) */
  uint64_t cpu_shares;  /* 0: not given (v2: converted to cpu.weight) */
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

/* Parse the linux.resources object JSON[0..LEN) into *R (zeroed first; its
 * "devices" array is left to the config parser, which has the rules'
 * syntax).  Strict: wrong types, out-of-range values (swappiness above 100,
 * a blkio weight outside 10..1000, a negative hugetlb limit...) and
 * malformed entries are errors naming the JSON path. */
int oci_cgroup_resources_parse (const char *json, size_t len, struct oci_cgroup_resources *r,
                                csr_error **err);
/* Free what oci_cgroup_resources_parse allocated (not DEVICES). */
void oci_cgroup_resources_release (struct oci_cgroup_resources *r);
/* Whether R asks for anything beyond the device rules. */
bool oci_cgroup_resources_any (const struct oci_cgroup_resources *r);

/* What was enforced, for warnings. */
struct oci_cgroup_applied
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
int oci_cgroup_path (const char *cgroups_path, const char *id, bool systemd, char **out,
                     csr_error **err);

/* Create the cgroup at the relative PATH (mkdir -p; v2: enabling the
 * controllers in each ancestor's cgroup.subtree_control) and write R.
 * Returns 1 with *CG filled, 0 when no cgroup hierarchy is writable here (*CG
 * empty: the caller reports it), -1 on an error (nothing left behind: only
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
int oci_cgroup_create (const char *path, const struct oci_cgroup_resources *r, const char *roots_v2,
                       const char *const *roots_v1, struct oci_cgroup *cg,
                       struct oci_cgroup_applied *applied, csr_error **err);

/* Write R into the existing cgroup CG (`csrun update`): only the fields R
 * gives (a cpu quota alone keeps the period, and the reverse); what was
 * written goes to *APPLIED (may be NULL). */
int oci_cgroup_update (const struct oci_cgroup *cg, const struct oci_cgroup_resources *r,
                       struct oci_cgroup_applied *applied, csr_error **err);
/* Move PID into every directory of CG (cgroup.procs). */
int oci_cgroup_enter (const struct oci_cgroup *cg, pid_t pid, csr_error **err);
/* The pids in CG (v2 dir, else the first v1 dir, and the cgroups below it):
 * sorted, malloc'ed array (NULL when *N is 0).  A missing directory is empty. */
int oci_cgroup_pids (const struct oci_cgroup *cg, pid_t **pids, size_t *n, csr_error **err);
/* Freeze (FREEZE true) or thaw: v2 cgroup.freeze, v1 freezer.state; waits
 * until the kernel says FROZEN (at most 5 s).  ENOTSUP without a freezer. */
int oci_cgroup_freeze (const struct oci_cgroup *cg, bool freeze, csr_error **err);
/* Kill everything in CG (v2 cgroup.kill when present, else SIGKILL to each
 * listed pid until empty, at most 5 s; thaws first), then rmdir the leaf
 * directories and any cgroups the container made below them (never their
 * parents).  Missing directories are fine.  EBUSY when the calling process
 * is in CG (it is not killed). */
int oci_cgroup_destroy (const struct oci_cgroup *cg, csr_error **err);
void oci_cgroup_release (struct oci_cgroup *cg);

/* `csrun events`: CG's statistics as the JSON object runc prints as an
 * event's "data" (cpu, memory, pids; see cgroup-stats.c), malloc'ed into
 * *OUT.  Missing files count 0. */
int oci_cgroup_stats_json (const struct oci_cgroup *cg, char **out, csr_error **err);
/* How many processes the kernel OOM-killed in CG so far (v2 memory.events,
 * v1 memory.oom_control "oom_kill"); 0 when unknown. */
uint64_t oci_cgroup_oom_kills (const struct oci_cgroup *cg);

#endif
