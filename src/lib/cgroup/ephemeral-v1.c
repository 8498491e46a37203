/* csrun — the cgroup v1 backend, for hybrid hosts whose memory, pids and cpu
 * controllers are v1 hierarchies.
 *
 * Layout: <mount>/csrun/csrun-<pid>-<n> in each of the memory, pids, cpu and
 * cpuacct hierarchies (found in /proc/self/mountinfo; co-mounted controllers
 * such as cpu,cpuacct share one directory).  The memory hierarchy is required
 * (without it v1 is not used); a missing or unwritable pids or cpu hierarchy
 * only leaves that limit unenforced; cpuacct is only for the cpu-time
 * statistic.  The OOM killer stays enabled (memory.oom_control untouched). */
#include "config.h"
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/log.h"

#define BIT(i) (1u << (i))

static int
v1_enter (struct csr_cgroup *cg, pid_t pid, csr_error **err)
{
  char buf[24];
  snprintf (buf, sizeof buf, "%ld", (long)pid);
  for (size_t i = 0; i < cg->n_dirs; i++)
    {
      struct csr_cg_dir *d = &cg->dirs[i];
      if (d->fd < 0)
        continue;
      int r = csr_cg_write (d->fd, "cgroup.procs", buf);
      if (r < 0)
        return csr_error_set (err, -r, "cgroup: move pid %ld into %s/%s", (long)pid, d->parent,
                              cg->name);
    }
  return 0;
}

/* Remove the directories created so far (all of CG's, in reverse order). */
static void
remove_dirs (struct csr_cgroup *cg)
{
  for (size_t i = cg->n_dirs; i-- > 0;)
    csr_cg_dir_remove (&cg->dirs[i], cg->name, false);
}

static void
v1_destroy (struct csr_cgroup *cg)
{
  remove_dirs (cg);
}

static const struct csr_cgroup_backend v1_backend = {
  .mechanism = CSR_CG_V1,
  .enter = v1_enter,
  .stats = csr_cg_v1_stats,
  .destroy = v1_destroy,
};

/* Group the mounts into directories (one per distinct mount point). */
static int
plan_dirs (struct csr_cgroup *cg, const char *const v1[CSR_CG_V1_N], csr_error **err)
{
  const char *mounts[CSR_CG_V1_N] = { NULL };
  for (int i = 0; i < CSR_CG_V1_N; i++)
    {
      if (v1[i] == NULL)
        continue;
      size_t j;
      for (j = 0; j < cg->n_dirs; j++)
        if (strcmp (mounts[j], v1[i]) == 0)
          break;
      if (j == cg->n_dirs)
        {
          mounts[j] = v1[i];
          if (asprintf (&cg->dirs[j].parent, "%s/" CSR_CG_V1_DIR, v1[i]) < 0)
            {
              cg->dirs[j].parent = NULL;
              return csr_error_errno (err, "cgroup: allocate");
            }
          cg->n_dirs++;
        }
      cg->dirs[j].mask |= BIT (i);
    }
  return 0;
}

/* Open <mount>/csrun (creating it the first time), then create and open
 * the leaf in it: D's fds, 0 or -errno. */
static int
make_one (struct csr_cgroup *cg, struct csr_cg_dir *d)
{
  if (d->parent_fd < 0)
    {
      int pfd = csr_cg_open_dir (d->parent);
      if (pfd == -ENOENT)
        {
          /* d->parent is "<mount>/csrun": create it from the mount's fd. */
          char *slash = strrchr (d->parent, '/');
          *slash = '\0';
          int mfd = csr_cg_open_dir (d->parent[0] ? d->parent : "/");
          *slash = '/';
          if (mfd < 0)
            return mfd;
          pfd = csr_cg_mkdir_open (mfd, CSR_CG_V1_DIR, true);
          close (mfd);
        }
      if (pfd < 0)
        return pfd;
      d->parent_fd = pfd;
    }
  int fd = csr_cg_mkdir_open (d->parent_fd, cg->name, false);
  if (fd < 0)
    return fd;
  d->fd = fd;
  return 0;
}

int
csr_cg_v1_create (const char *const v1[CSR_CG_V1_N], const struct csr_cgroup_limits *limits,
                  struct csr_cgroup **out, struct csr_cgroup_enforced *enforced, csr_error **err)
{
  if (v1[CSR_CG_V1_MEMORY] == NULL)
    {
      csr_debug ("cgroup v1: no memory hierarchy");
      return 0;
    }
  struct csr_cgroup *cg = csr_cg_new (&v1_backend, err);
  if (cg == NULL)
    return -1;
  if (plan_dirs (cg, v1, err) < 0)
    {
      csr_cg_free (cg);
      return -1;
    }
  /* The memory hierarchy comes first (index order).  A name taken in any
   * hierarchy (a leftover of a crashed csrun with our pid) → the next name. */
  for (int tries = 0;; tries++)
    {
      bool retry = false;
      for (size_t i = 0; i < cg->n_dirs && !retry; i++)
        {
          struct csr_cg_dir *d = &cg->dirs[i];
          int fd = make_one (cg, d);
          if (fd >= 0)
            continue;
          if (fd == -EEXIST && tries < 64)
            retry = true;
          else if (d->mask & BIT (CSR_CG_V1_MEMORY))
            {
              csr_debug ("cgroup v1: create %s/%s: %s", d->parent, cg->name, strerror (-fd));
              remove_dirs (cg);
              csr_cg_free (cg);
              return 0;
            }
          else
            csr_debug ("cgroup v1: create %s/%s: %s (its limits stay unenforced)", d->parent,
                       cg->name, strerror (-fd));
        }
      if (!retry)
        break;
      remove_dirs (cg);
      csr_cg_rename (cg);
    }
  if (csr_cg_write_limits (cg, limits, enforced, err) < 0)
    {
      remove_dirs (cg);
      csr_cg_free (cg);
      return -1;
    }
  csr_debug ("cgroup v1: created %s in %zu hierarchies", cg->name, cg->n_dirs);
  *out = cg;
  return 1;
}
