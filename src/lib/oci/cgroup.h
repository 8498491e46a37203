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
#include "config.h"

#define OCI_CG_MAX_DIRS 16

/* The container's cgroup directories (absolute paths). */
struct oci_cgroup
{
  char *v2;                  /* the v2 directory, or NULL */
  char *v1[OCI_CG_MAX_DIRS]; /* one per v1 hierarchy it was made in */
  size_t n_v1;
};

/* linux.resources, as far as csrun applies them. */
struct oci_cgroup_resources
{
  int64_t memory_limit; /* bytes; <= 0: none */
  int64_t memory_swap;  /* memory+swap bytes (OCI semantics); 0: not given, -1: unlimited */
  int64_t pids_limit;   /* <= 0: none */
  int64_t cpu_quota;    /* us; <= 0: none */
  uint64_t cpu_period;  /* us; 0: 100000 */
  uint64_t cpu_shares;  /* 0: not given (v2: converted to cpu.weight) */
  /* The device cgroup (oci/devices.h): with SET_DEVICES, deny-all + DEVICES
   * + the default devices (v1 devices hierarchy, or a v2 BPF program);
   * without, it is left alone. */
  bool set_devices;
  const struct oci_dev_rule *devices;
  size_t n_devices;
};

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
 * directories this call made are removed).  An existing leaf is reused only
 * when no process is in it.  R may be NULL (no limits).
 * ROOTS_V2 / ROOTS_V1 override the host's mounts for tests (both NULL: read
 * /proc/self/mountinfo; either non-NULL: both are overrides, a NULL one
 * meaning none of that kind): ROOTS_V1 is a NULL-terminated list of v1 mount
 * points.  Files missing there are controllers missing (limit not applied). */
int oci_cgroup_create (const char *path, const struct oci_cgroup_resources *r, const char *roots_v2,
                       const char *const *roots_v1, struct oci_cgroup *cg,
                       struct oci_cgroup_applied *applied, csr_error **err);

/* Write R into the existing cgroup CG (`csrun update`); what was written
 * goes to *APPLIED (may be NULL). */
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

#endif
