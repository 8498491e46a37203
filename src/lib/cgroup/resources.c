#include "config.h"

/* csrun — linux.resources written into an OCI container's cgroup files
 * (see cgroup.h and cgroup-res.c for which setting goes where).
 *
 * v1: each setting goes to the first of the container's directories that
 * has its file.  A missing memory, pids or cpu quota/shares file is "not
 * applied" (reported false, the caller warns: podman runs rootless v1
 * containers without those); every other setting with no file to take it
 * is an error (ENOTSUP naming the controller), as runc fails a limit it
 * can't set.  v2: the one directory. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "cgroup-internal.h"
#include "../oci/devices.h"

static const char *const throttle_v1[OCI_THROTTLE_N]
    = { "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
        "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device" };
static const char *const throttle_v2[OCI_THROTTLE_N] = { "rbps", "wbps", "riops", "wiops" };

/* One directory of the cgroup the limits go to: its fd (-1: none, every
 * file missing) and its path for messages. */
struct tdir
{
  int fd;
  const char *name;
};

struct tgt
{
  struct tdir v2d; /* the v2 directory (fd -1 if none) */
  struct tdir v1[CSR_CG_MAX_DIRS];
  size_t n_v1;
  bool v2; /* the v2 directory takes the limits (no v1 directory) */
  bool update;
};

static bool
texists (const struct tdir *d, const char *file)
{
  return d->fd >= 0 && faccessat (d->fd, file, F_OK, 0) == 0;
}

/* Write VAL to D's FILE in one write(2): 0 written, 1 when the file does
 * not exist (controller not there), -1 on an error. */
static int
twrite (const struct tdir *d, const char *file, const char *val, csr_error **err)
{
  if (d->fd < 0)
    return 1;
  int r = csr_cg_write (d->fd, file, val);
  if (r == -ENOENT)
    return 1;
  if (r < 0)
    return csr_error_set (err, -r, "cgroup: write '%s' to '%s/%s': %s", val, d->name, file,
                          strerror (-r));
  return 0;
}

/* Read D's FILE into *OUT (malloc'ed): 0 read, 1 when it does not exist, -1 error. */
static int
tread (const struct tdir *d, const char *file, char **out, csr_error **err)
{
  *out = NULL;
  if (d->fd < 0)
    return 1;
  cleanup_close int fd = openat (d->fd, file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return 1;
      return csr_error_errno (err, "cgroup: open '%s/%s'", d->name, file);
    }
  if (csr_read_fd (fd, 4 << 20, out, NULL, err) < 0)
    return csr_error_wrap (err, "cgroup: '%s/%s'", d->name, file);
  return 0;
}

/* The first v1 directory with FILE, or NULL. */
static const struct tdir *
v1_find (const struct tgt *t, const char *file)
{
  for (size_t i = 0; i < t->n_v1; i++)
    if (texists (&t->v1[i], file))
      return &t->v1[i];
  return NULL;
}

/* The directory for FILE: the v2 one, or the v1 one that has it (NULL). */
static const struct tdir *
dir_for (const struct tgt *t, const char *file)
{
  if (t->v2)
    return texists (&t->v2d, file) ? &t->v2d : NULL;
  return v1_find (t, file);
}

static int
unsupported (const char *what, const char *ctl, csr_error **err)
{
  return csr_error_set (
      err, ENOTSUP, "linux.resources.%s: no %s controller in the container's cgroup", what, ctl);
}

/* Write VAL to FILE wherever it is; *FLAG true when written; a missing file
 * leaves *FLAG alone. */
static int
soft (const struct tgt *t, const char *file, const char *val, bool *flag, csr_error **err)
{
  const struct tdir *dir = dir_for (t, file);
  if (dir == NULL)
    return 0;
  int rc = twrite (dir, file, val, err);
  if (rc < 0)
    return -1;
  csr_debug ("cgroup: %s/%s = %s", dir->name, file, val);
  if (flag)
    *flag = true;
  return 0;
}

/* Write VAL to FILE, which must exist (else ENOTSUP for WHAT/CTL). */
static int
hard (const struct tgt *t, const char *file, const char *val, const char *what, const char *ctl,
      csr_error **err)
{
  const struct tdir *dir = dir_for (t, file);
  if (dir == NULL)
    return unsupported (what, ctl, err);
  if (twrite (dir, file, val, err) < 0)
    return csr_error_wrap (err, "linux.resources.%s", what);
  csr_debug ("cgroup: %s/%s = %s", dir->name, file, val);
  return 0;
}

static void
fmt_limit (char *buf, size_t n, int64_t v, bool v2)
{
  if (v < 0)
    snprintf (buf, n, v2 ? "max" : "-1");
  else
    snprintf (buf, n, "%" PRId64, v);
}

/* ---------------------------------------------------------------- memory */

static int
memory_v1 (const struct tgt *t, const struct csr_cgroup_resources *r, struct csr_cgroup_applied *a,
           csr_error **err)
{
  char v[32], sw[32];
  int64_t swap = r->memory_swap;
  /* runc: an unlimited memory with no swap given makes both unlimited. */
  if (r->memory_limit == -1 && swap == 0)
    swap = -1;
  const struct tdir *mdir = v1_find (t, "memory.limit_in_bytes");
  bool want_swap = swap != 0 && mdir && texists (mdir, "memory.memsw.limit_in_bytes");
  fmt_limit (sw, sizeof sw, swap, false);
  if (want_swap && swap == -1)
    {
      /* Raising memory+swap first: the memory limit must stay below it. */
      if (twrite (mdir, "memory.memsw.limit_in_bytes", sw, err) < 0)
        return -1;
      a->swap = true;
      want_swap = false;
    }
  if (r->memory_limit != 0 && mdir)
    {
      fmt_limit (v, sizeof v, r->memory_limit, false);
      csr_error *e = NULL;
      int rc = twrite (mdir, "memory.limit_in_bytes", v, &e);
      if (rc < 0 && e->status == EINVAL && want_swap)
        {
          /* Above the current memory+swap limit: raise that first. */
          csr_error_free (e);
          if (twrite (mdir, "memory.memsw.limit_in_bytes", sw, err) < 0)
            return -1;
          a->swap = true;
          want_swap = false;
          rc = twrite (mdir, "memory.limit_in_bytes", v, err);
          if (rc < 0)
            return -1;
        }
      else if (rc < 0)
        {
          if (err && *err == NULL)
            *err = e;
          else
            csr_error_free (e);
          return -1;
        }
      a->memory = true;
    }
  if (want_swap)
    {
      if (twrite (mdir, "memory.memsw.limit_in_bytes", sw, err) < 0)
        return -1;
      a->swap = true;
    }
  if (r->has_memory_reservation)
    {
      fmt_limit (v, sizeof v, r->memory_reservation, false);
      if (hard (t, "memory.soft_limit_in_bytes", v, "memory.reservation", "memory", err) < 0)
        return -1;
    }
  if (r->has_memory_swappiness)
    {
      snprintf (v, sizeof v, "%" PRIu64, r->memory_swappiness);
      if (hard (t, "memory.swappiness", v, "memory.swappiness", "memory", err) < 0)
        return -1;
    }
  if (r->has_disable_oom_killer && (r->disable_oom_killer || t->update))
    if (hard (t, "memory.oom_control", r->disable_oom_killer ? "1" : "0", "memory.disableOOMKiller",
              "memory", err)
        < 0)
      return -1;
  static const char *const kfiles[]
      = { "memory.kmem.limit_in_bytes", "memory.kmem.tcp.limit_in_bytes" };
  static const char *const knames[] = { "kernel", "kernelTCP" };
  const bool khas[] = { r->has_memory_kernel, r->has_memory_kernel_tcp };
  const int64_t kval[] = { r->memory_kernel, r->memory_kernel_tcp };
  for (int i = 0; i < 2; i++)
    {
      if (!khas[i])
        continue;
      fmt_limit (v, sizeof v, kval[i], false);
      const struct tdir *d = v1_find (t, kfiles[i]);
      csr_error *e = NULL;
      /* The kernel deprecated kernel memory limits (runc 1.1 ignores them):
       * set where it still takes them, else a warning. */
      if (d == NULL || twrite (d, kfiles[i], v, &e) != 0)
        {
          csr_warn ("linux.resources.memory.%s ignored: %s", knames[i],
                    e ? csr_error_text (e) : "this kernel has no kernel memory limit");
          csr_error_free (e);
        }
    }
  return 0;
}

/* The current memory.max of DIR in bytes (-1: max, 0: unknown). */
static int64_t
current_memory_max (const struct tdir *dir)
{
  cleanup_free char *cur = NULL;
  if (tread (dir, "memory.max", &cur, NULL) != 0)
    return 0;
  if (strncmp (cur, "max", 3) == 0)
    return -1;
  return strtoll (cur, NULL, 10);
}

static int
memory_v2 (const struct tgt *t, const struct csr_cgroup_resources *r, struct csr_cgroup_applied *a,
           csr_error **err)
{
  const struct tdir *dir = &t->v2d;
  char v[32];
  if (r->memory_limit != 0)
    {
      fmt_limit (v, sizeof v, r->memory_limit, true);
      if (soft (t, "memory.max", v, &a->memory, err) < 0)
        return -1;
      /* The whole cgroup on OOM, not one victim (kernel 4.19+). */
      if (r->oom_group && a->memory && soft (t, "memory.oom.group", "1", NULL, err) < 0)
        return -1;
    }
  /* OCI's swap is memory+swap; v2's memory.swap.max is swap alone. */
  int64_t mem = r->memory_limit, swap = r->memory_swap;
  if (mem == -1 && swap == 0)
    swap = -1;
  if (swap > 0 && mem == 0)
    mem = current_memory_max (dir); /* update with the swap alone */
  if (swap != 0)
    {
      if (swap > 0 && mem <= 0)
        return csr_error_set (err, EINVAL,
                              "linux.resources.memory.swap: a memory+swap limit needs a memory "
                              "limit");
      fmt_limit (v, sizeof v, swap < 0 ? -1 : swap - mem, true);
      if (soft (t, "memory.swap.max", v, &a->swap, err) < 0)
        return -1;
    }
  if (r->has_memory_reservation)
    {
      fmt_limit (v, sizeof v, r->memory_reservation, true);
      if (hard (t, "memory.low", v, "memory.reservation", "memory", err) < 0)
        return -1;
    }
  /* No v2 file for these (runc's and crun's v2 code skip them too). */
  if (r->has_memory_swappiness)
    csr_warn ("linux.resources.memory.swappiness ignored: cgroup v2 has no per-cgroup "
              "swappiness");
  if (r->has_disable_oom_killer && r->disable_oom_killer)
    csr_warn ("linux.resources.memory.disableOOMKiller ignored: cgroup v2 can't disable the "
              "OOM killer");
  if (r->has_memory_kernel || r->has_memory_kernel_tcp)
    csr_warn ("linux.resources.memory.kernel/kernelTCP ignored: cgroup v2 has no kernel memory "
              "limit");
  return 0;
}

/* ---------------------------------------------------------------- cpu */

/* PERIOD_FILE then QUOTA_FILE; when the period is refused (EINVAL: the
 * current quota does not fit it) the other order. */
static int
two_in_order (const struct tgt *t, const char *first, const char *fv, const char *second,
              const char *sv, const char *what, bool soft_missing, bool *flag, csr_error **err)
{
  const struct tdir *d1 = fv ? dir_for (t, first) : NULL;
  const struct tdir *d2 = sv ? dir_for (t, second) : NULL;
  if ((fv && d1 == NULL) || (sv && d2 == NULL))
    {
      if (soft_missing)
        return 0;
      return unsupported (what, "cpu", err);
    }
  if (fv)
    {
      csr_error *e = NULL;
      if (twrite (d1, first, fv, &e) < 0)
        {
          if (e->status != EINVAL || sv == NULL)
            {
              if (err && *err == NULL)
                *err = e;
              else
                csr_error_free (e);
              return csr_error_wrap (err, "linux.resources.%s", what);
            }
          csr_error_free (e);
          if (twrite (d2, second, sv, err) < 0 || twrite (d1, first, fv, err) < 0)
            return csr_error_wrap (err, "linux.resources.%s", what);
          if (flag)
            *flag = true;
          return 0;
        }
    }
  if (sv)
    {
      if (twrite (d2, second, sv, err) < 0)
        return csr_error_wrap (err, "linux.resources.%s", what);
      if (flag)
        *flag = true;
    }
  return 0;
}

static int
cpu_v1 (const struct tgt *t, const struct csr_cgroup_resources *r, struct csr_cgroup_applied *a,
        csr_error **err)
{
  char p[32], q[32];
  if (r->cpu_shares > 0)
    {
      snprintf (p, sizeof p, "%" PRIu64, r->cpu_shares);
      if (soft (t, "cpu.shares", p, &a->shares, err) < 0)
        return -1;
    }
  if (r->cpu_period > 0 || r->cpu_quota != 0)
    {
      snprintf (p, sizeof p, "%" PRIu64, r->cpu_period);
      fmt_limit (q, sizeof q, r->cpu_quota, false);
      bool done = false;
      if (two_in_order (t, "cpu.cfs_period_us", r->cpu_period > 0 ? p : NULL, "cpu.cfs_quota_us",
                        r->cpu_quota != 0 ? q : NULL, "cpu.quota", true, &done, err)
          < 0)
        return -1;
      a->cpu = done && r->cpu_quota > 0;
    }
  if (r->has_cpu_rt_period || r->has_cpu_rt_runtime)
    {
      snprintf (p, sizeof p, "%" PRIu64, r->cpu_rt_period);
      snprintf (q, sizeof q, "%" PRId64, r->cpu_rt_runtime);
      if (two_in_order (t, "cpu.rt_period_us", r->has_cpu_rt_period ? p : NULL, "cpu.rt_runtime_us",
                        r->has_cpu_rt_runtime ? q : NULL, "cpu.realtimeRuntime", false, NULL, err)
          < 0)
        return -1;
    }
  if (r->has_cpu_idle)
    {
      snprintf (p, sizeof p, "%" PRId64, r->cpu_idle);
      if (hard (t, "cpu.idle", p, "cpu.idle", "cpu", err) < 0)
        return -1;
    }
  return 0;
}

static uint64_t
shares_to_weight (uint64_t shares)
{
  if (shares < 2)
    shares = 2;
  if (shares > 262144)
    shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

static int
cpu_v2 (const struct tgt *t, const struct csr_cgroup_resources *r, struct csr_cgroup_applied *a,
        csr_error **err)
{
  const struct tdir *dir = &t->v2d;
  char v[64];
  if (r->cpu_quota != 0 || r->cpu_period > 0)
    {
      char q[32];
      fmt_limit (q, sizeof q, r->cpu_quota, true);
      if (r->cpu_period == 0)
        snprintf (v, sizeof v, "%s", q); /* the kernel keeps the period */
      else if (r->cpu_quota != 0)
        snprintf (v, sizeof v, "%s %" PRIu64, q, r->cpu_period);
      else
        {
          /* The period alone: no quota on a new cgroup (runc writes "max
           * PERIOD"); an update keeps the current quota. */
          cleanup_free char *cur = NULL;
          char word[32] = "max";
          if (t->update && tread (dir, "cpu.max", &cur, NULL) == 0)
            sscanf (cur, "%31s", word);
          snprintf (v, sizeof v, "%s %" PRIu64, word, r->cpu_period);
        }
      bool done = false;
      if (soft (t, "cpu.max", v, &done, err) < 0)
        return -1;
      a->cpu = done && r->cpu_quota > 0;
    }
  if (r->cpu_shares > 0)
    {
      snprintf (v, sizeof v, "%" PRIu64, shares_to_weight (r->cpu_shares));
      if (soft (t, "cpu.weight", v, &a->shares, err) < 0)
        return -1;
    }
  if (r->has_cpu_rt_period || r->has_cpu_rt_runtime)
    return csr_error_set (err, ENOTSUP,
                          "linux.resources.cpu.realtimePeriod/realtimeRuntime: cgroup v2 has no "
                          "realtime group scheduling");
  if (r->has_cpu_idle)
    {
      snprintf (v, sizeof v, "%" PRId64, r->cpu_idle);
      if (hard (t, "cpu.idle", v, "cpu.idle", "cpu", err) < 0)
        return -1;
    }
  return 0;
}

static int
cpuset (const struct tgt *t, const struct csr_cgroup_resources *r, csr_error **err)
{
  if (r->cpu_cpus && hard (t, "cpuset.cpus", r->cpu_cpus, "cpu.cpus", "cpuset", err) < 0)
    return -1;
  if (r->cpu_mems && hard (t, "cpuset.mems", r->cpu_mems, "cpu.mems", "cpuset", err) < 0)
    return -1;
  return 0;
}

/* ---------------------------------------------------------------- blkio / io */

/* v2 io.weight is 1..10000 where blkio's is 10..1000 (runc's conversion). */
static uint64_t
blkio_to_io_weight (uint16_t w)
{
  return 1 + ((uint64_t)w - 10) * 9999 / 990;
}

static int
blkio_v1 (const struct tgt *t, const struct csr_cgroup_resources *r, csr_error **err)
{
  char v[96];
  /* With BFQ the weight files carry its prefix (runc and crun try it first). */
  bool bfq = v1_find (t, "blkio.bfq.weight") != NULL;
  const char *wfile = bfq ? "blkio.bfq.weight" : "blkio.weight";
  const char *wdfile = bfq ? "blkio.bfq.weight_device" : "blkio.weight_device";
  if (r->has_blkio_weight)
    {
      snprintf (v, sizeof v, "%u", r->blkio_weight);
      if (hard (t, wfile, v, "blockIO.weight", "blkio (weight)", err) < 0)
        return -1;
    }
  if (r->has_blkio_leaf_weight)
    {
      snprintf (v, sizeof v, "%u", r->blkio_leaf_weight);
      if (hard (t, "blkio.leaf_weight", v, "blockIO.leafWeight", "blkio (leaf weight)", err) < 0)
        return -1;
    }
  for (size_t i = 0; i < r->n_blkio_weight_devices; i++)
    {
      const struct oci_blkio_dev *d = &r->blkio_weight_devices[i];
      if (d->has_weight)
        {
          snprintf (v, sizeof v, "%" PRId64 ":%" PRId64 " %u", d->major, d->minor, d->weight);
          if (hard (t, wdfile, v, "blockIO.weightDevice", "blkio (weight)", err) < 0)
            return -1;
        }
      if (d->has_leaf_weight)
        {
          snprintf (v, sizeof v, "%" PRId64 ":%" PRId64 " %u", d->major, d->minor, d->leaf_weight);
          if (hard (t, "blkio.leaf_weight_device", v, "blockIO.weightDevice.leafWeight",
                    "blkio (leaf weight)", err)
              < 0)
            return -1;
        }
    }
  for (int k = 0; k < OCI_THROTTLE_N; k++)
    for (size_t i = 0; i < r->n_blkio_throttle[k]; i++)
      {
        const struct oci_blkio_dev *d = &r->blkio_throttle[k][i];
        snprintf (v, sizeof v, "%" PRId64 ":%" PRId64 " %" PRIu64, d->major, d->minor, d->rate);
        if (hard (t, throttle_v1[k], v, "blockIO.throttle*Device", "blkio (throttle)", err) < 0)
          return -1;
      }
  return 0;
}

static int
blkio_v2 (const struct tgt *t, const struct csr_cgroup_resources *r, csr_error **err)
{
  char v[128];
  bool bfq = texists (&t->v2d, "io.bfq.weight");
  if (r->has_blkio_weight)
    {
      if (bfq)
        snprintf (v, sizeof v, "%u", r->blkio_weight);
      else
        snprintf (v, sizeof v, "%" PRIu64, blkio_to_io_weight (r->blkio_weight));
      if (hard (t, bfq ? "io.bfq.weight" : "io.weight", v, "blockIO.weight", "io (weight)", err)
          < 0)
        return -1;
    }
  bool leaf = r->has_blkio_leaf_weight;
  for (size_t i = 0; i < r->n_blkio_weight_devices; i++)
    {
      const struct oci_blkio_dev *d = &r->blkio_weight_devices[i];
      leaf = leaf || d->has_leaf_weight;
      if (!d->has_weight)
        continue;
      snprintf (v, sizeof v, "%" PRId64 ":%" PRId64 " %" PRIu64, d->major, d->minor,
                bfq ? d->weight : blkio_to_io_weight (d->weight));
      if (hard (t, bfq ? "io.bfq.weight" : "io.weight", v, "blockIO.weightDevice", "io (weight)",
                err)
          < 0)
        return -1;
    }
  if (leaf)
    return csr_error_set (err, ENOTSUP,
                          "linux.resources.blockIO.leafWeight: cgroup v2 has no "
                          "leaf weights");
  for (int k = 0; k < OCI_THROTTLE_N; k++)
    for (size_t i = 0; i < r->n_blkio_throttle[k]; i++)
      {
        const struct oci_blkio_dev *d = &r->blkio_throttle[k][i];
        snprintf (v, sizeof v, "%" PRId64 ":%" PRId64 " %s=%" PRIu64, d->major, d->minor,
                  throttle_v2[k], d->rate);
        if (hard (t, "io.max", v, "blockIO.throttle*Device", "io", err) < 0)
          return -1;
      }
  return 0;
}

/* ---------------------------------------------------------------- hugetlb */

/* Does DIR have hugetlb.* files (the controller)? */
static bool
has_hugetlb (const struct tdir *dir)
{
  int fd = dir->fd >= 0 ? openat (dir->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  cleanup_dir DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return false;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (strncmp (de->d_name, "hugetlb.", 8) == 0)
      return true;
  return false;
}

static int
hugetlb (const struct tgt *t, const struct csr_cgroup_resources *r, csr_error **err)
{
  if (r->n_hugetlb == 0)
    return 0;
  const struct tdir *dir = NULL;
  if (t->v2)
    dir = has_hugetlb (&t->v2d) ? &t->v2d : NULL;
  else
    for (size_t i = 0; i < t->n_v1 && dir == NULL; i++)
      if (has_hugetlb (&t->v1[i]))
        dir = &t->v1[i];
  if (dir == NULL)
    return unsupported ("hugepageLimits", "hugetlb", err);
  for (size_t i = 0; i < r->n_hugetlb; i++)
    {
      const struct oci_hugetlb_limit *h = &r->hugetlb[i];
      char file[64], v[32];
      snprintf (file, sizeof file, t->v2 ? "hugetlb.%s.max" : "hugetlb.%s.limit_in_bytes",
                h->page_size);
      if (!texists (dir, file))
        return csr_error_set (err, EINVAL,
                              "linux.resources.hugepageLimits: invalid hugepage size '%s' (not "
                              "supported by this kernel)",
                              h->page_size);
      snprintf (v, sizeof v, "%" PRIu64, h->limit);
      if (twrite (dir, file, v, err) < 0)
        return csr_error_wrap (err, "linux.resources.hugepageLimits");
    }
  return 0;
}

/* ---------------------------------------------------------------- network, unified */

static int
network (const struct tgt *t, const struct csr_cgroup_resources *r, csr_error **err)
{
  if (t->v2 && (r->has_net_class_id || r->n_net_prios))
    return csr_error_set (err, ENOTSUP,
                          "linux.resources.network: cgroup v2 has no net_cls/net_prio "
                          "controller");
  char v[128];
  if (r->has_net_class_id)
    {
      snprintf (v, sizeof v, "%" PRIu32, r->net_class_id);
      if (hard (t, "net_cls.classid", v, "network.classID", "net_cls", err) < 0)
        return -1;
    }
  for (size_t i = 0; i < r->n_net_prios; i++)
    {
      snprintf (v, sizeof v, "%s %" PRIu32, r->net_prios[i].name, r->net_prios[i].priority);
      if (hard (t, "net_prio.ifpriomap", v, "network.priorities", "net_prio", err) < 0)
        return -1;
    }
  return 0;
}

static int
unified (const struct tgt *t, const struct csr_cgroup_resources *r, csr_error **err)
{
  if (r->n_unified == 0)
    return 0;
  if (!t->v2)
    return csr_error_set (err, EINVAL,
                          "invalid configuration: linux.resources.unified needs cgroup v2 (the "
                          "container's cgroup is v1)");
  cleanup_free char *avail = NULL;
  if (tread (&t->v2d, "cgroup.controllers", &avail, NULL) != 0)
    avail = NULL; /* unknown: the files decide */
  for (size_t i = 0; i < r->n_unified; i++)
    {
      /* The controller must be on here (crun's words); "cgroup." files are
       * the core's. */
      const char *k = r->unified_keys[i];
      size_t cl = strcspn (k, ".");
      if (avail && !(cl == 6 && strncmp (k, "cgroup", 6) == 0))
        {
          bool on = false;
          for (const char *p = avail; *p && !on;)
            {
              p += strspn (p, " \n");
              size_t wl = strcspn (p, " \n");
              on = wl > 0 && wl == cl && strncmp (p, k, cl) == 0;
              p += wl;
            }
          if (!on)
            return csr_error_set (err, ENOTSUP,
                                  "linux.resources.unified: the requested cgroup controller `%.*s` "
                                  "is not available",
                                  (int)cl, k);
        }
      int rc = twrite (&t->v2d, k, r->unified_values[i], err);
      if (rc < 0)
        return csr_error_wrap (err, "linux.resources.unified");
      if (rc > 0)
        return csr_error_set (err, ENOENT,
                              "linux.resources.unified: %s: no such file in the container's "
                              "cgroup",
                              k);
    }
  return 0;
}

/* ---------------------------------------------------------------- all */

/* "2MB" for 2048 kB (the kernel's hugetlb file names). */
static void
page_size_name (unsigned long long kb, char *buf, size_t n)
{
  if (kb >= 1048576 && kb % 1048576 == 0)
    snprintf (buf, n, "%lluGB", kb / 1048576);
  else if (kb >= 1024 && kb % 1024 == 0)
    snprintf (buf, n, "%lluMB", kb / 1024);
  else
    snprintf (buf, n, "%lluKB", kb);
}

/* Is SIZE one of this kernel's huge page sizes (/sys/kernel/mm/hugepages)?
 * Unknown (no such directory) counts as yes: the cgroup's files decide. */
static bool
page_size_known (const char *size)
{
  cleanup_dir DIR *d = opendir ("/sys/kernel/mm/hugepages");
  if (d == NULL)
    return true;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      unsigned long long kb;
      char name[32];
      if (sscanf (de->d_name, "hugepages-%llukB", &kb) != 1)
        continue;
      page_size_name (kb, name, sizeof name);
      if (strcmp (name, size) == 0)
        return true;
    }
  return false;
}

int
csr_cg_resources_check (const struct csr_cgroup_resources *r, bool update, csr_error **err)
{
  /* runc: "invalid hugepage size" unless the kernel has it. */
  for (size_t i = 0; i < r->n_hugetlb; i++)
    if (!page_size_known (r->hugetlb[i].page_size))
      return csr_error_set (err, EINVAL,
                            "linux.resources.hugepageLimits: invalid hugepage size '%s' (this "
                            "kernel has no such huge page size)",
                            r->hugetlb[i].page_size);
  /* A new cgroup has no memory limit for the swap to be above (an update
   * takes the current one). */
  if (!update && r->memory_swap > 0 && r->memory_limit == 0)
    return csr_error_set (err, EINVAL, "cgroup: a memory+swap limit needs a memory limit");
  if (r->memory_swap < -1)
    return csr_error_set (err, EINVAL, "cgroup: invalid memory+swap limit %" PRId64,
                          r->memory_swap);
  if (r->memory_swap > 0 && r->memory_limit < 0)
    return csr_error_set (err, EINVAL, "cgroup: a memory+swap limit needs a memory limit");
  if (r->memory_swap > 0 && r->memory_limit > 0 && r->memory_swap < r->memory_limit)
    return csr_error_set (
        err, EINVAL, "cgroup: memory+swap limit %" PRId64 " is below the memory limit %" PRId64,
        r->memory_swap, r->memory_limit);
  if (r->memory_limit < -1 || r->cpu_quota < -1)
    return csr_error_set (err, EINVAL, "cgroup: invalid negative limit");
  return 0;
}

/* CG's directories as targets: an ephemeral cgroup's fds (borrowed), or a
 * container's paths opened here (a missing directory has no files). */
static int
targets (const struct csr_cgroup *cg, struct tgt *t, csr_error **err)
{
  t->v2d = (struct tdir){ -1, NULL };
  t->n_v1 = 0;
  if (cg->be)
    {
      bool v2 = cg->be->mechanism == CSR_CG_V2;
      for (size_t i = 0; i < cg->n_dirs; i++)
        {
          char *name;
          if (asprintf (&name, "%s/%s", cg->dirs[i].parent, cg->name) < 0)
            return csr_error_errno (err, "cgroup");
          struct tdir d = { cg->dirs[i].fd, name };
          if (v2)
            t->v2d = d;
          else
            t->v1[t->n_v1++] = d;
        }
      t->v2 = v2;
      return 0;
    }
  if (cg->v2)
    t->v2d = (struct tdir){ open (cg->v2, O_RDONLY | O_DIRECTORY | O_CLOEXEC), cg->v2 };
  for (size_t i = 0; i < cg->n_v1 && i < CSR_CG_MAX_DIRS; i++)
    if (cg->v1[i])
      t->v1[t->n_v1++]
          = (struct tdir){ open (cg->v1[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC), cg->v1[i] };
  t->v2 = cg->v2 && cg->n_v1 == 0;
  return 0;
}

static void
targets_release (const struct csr_cgroup *cg, struct tgt *t)
{
  struct tdir *all[CSR_CG_MAX_DIRS + 1];
  size_t n = 0;
  all[n++] = &t->v2d;
  for (size_t i = 0; i < t->n_v1; i++)
    all[n++] = &t->v1[i];
  for (size_t i = 0; i < n; i++)
    {
      if (cg->be)
        free ((char *)all[i]->name);
      else if (all[i]->fd >= 0)
        close (all[i]->fd);
    }
}

static int apply (const struct csr_cgroup *cg, const struct tgt *t,
                  const struct csr_cgroup_resources *r, struct csr_cgroup_applied *a,
                  csr_error **err);

int
csr_cg_resources_apply (const struct csr_cgroup *cg, const struct csr_cgroup_resources *r,
                        bool update, struct csr_cgroup_applied *a, csr_error **err)
{
  struct tgt t = { .update = update };
  if (csr_cg_resources_check (r, update, err) < 0)
    return -1;
  if (targets (cg, &t, err) < 0)
    {
      targets_release (cg, &t);
      return -1;
    }
  int rc = apply (cg, &t, r, a, err);
  targets_release (cg, &t);
  return rc;
}

static int
apply (const struct csr_cgroup *cg, const struct tgt *tp, const struct csr_cgroup_resources *r,
       struct csr_cgroup_applied *a, csr_error **err)
{
  const struct tgt t = *tp;
  if (t.v2)
    {
      if (cpuset (&t, r, err) < 0 || memory_v2 (&t, r, a, err) < 0 || cpu_v2 (&t, r, a, err) < 0)
        return -1;
    }
  else if (cpuset (&t, r, err) < 0 || memory_v1 (&t, r, a, err) < 0 || cpu_v1 (&t, r, a, err) < 0)
    return -1;
  if (r->pids_limit != 0)
    {
      char v[32];
      fmt_limit (v, sizeof v, r->pids_limit < 0 ? -1 : r->pids_limit, true);
      if (soft (&t, "pids.max", v, &a->pids, err) < 0)
        return -1;
    }
  if ((t.v2 ? blkio_v2 : blkio_v1) (&t, r, err) < 0 || hugetlb (&t, r, err) < 0
      || network (&t, r, err) < 0 || unified (&t, r, err) < 0)
    return -1;
  if (r->set_devices)
    {
      if (t.v2)
        {
          /* Any v2 cgroup takes a device program, controllers or not. */
          if (oci_devices_apply_v2 (cg->v2, r->devices, r->n_devices, err) < 0)
            return -1;
          a->devices = true;
        }
      else
        {
          const struct tdir *d = v1_find (&t, "devices.allow");
          if (d)
            {
              if (oci_devices_apply_v1 (d->name, r->devices, r->n_devices, err) < 0)
                return -1;
              a->devices = true;
            }
        }
    }
  return 0;
}
