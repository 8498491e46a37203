#include "config.h"

/* csrun — the one cgroup handle (struct csr_cgroup) of both placement
 * policies, and what the launcher does with it: clone into it (v2), let
 * the child move itself (v1 "tasks" fds), or move the child from outside.
 * An ephemeral cgroup (ephemeral.c) dispatches to its backend; a
 * container's (container.c, BE NULL) works on its recorded directories. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/log.h"
#include "cgroup-internal.h"

/* ------------------------------------------------------------ object */

struct csr_cgroup *
csr_cg_new (const struct csr_cgroup_backend *be, csr_error **err)
{
  struct csr_cgroup *cg = calloc (1, sizeof *cg);
  if (cg == NULL)
    {
      csr_error_errno (err, "cgroup: allocate");
      return NULL;
    }
  cg->be = be;
  for (size_t i = 0; i < CSR_CG_V1_N; i++)
    cg->dirs[i].fd = cg->dirs[i].parent_fd = -1;
  cg->v2_fd = -1;
  csr_cg_rename (cg);
  return cg;
}

void
csr_cg_free (struct csr_cgroup *cg)
{
  if (cg == NULL)
    return;
  for (size_t i = 0; i < CSR_CG_V1_N; i++)
    {
      if (cg->dirs[i].fd >= 0)
        close (cg->dirs[i].fd);
      if (cg->dirs[i].parent_fd >= 0)
        close (cg->dirs[i].parent_fd);
      free (cg->dirs[i].parent);
    }
  csr_cg_container_release (cg);
  free (cg);
}

/* ------------------------------------------------------------ faces */

enum csr_cgroup_mechanism
csr_cgroup_mechanism (const struct csr_cgroup *cg)
{
  if (cg == NULL)
    return CSR_CG_NONE;
  if (cg->be)
    return cg->be->mechanism;
  return cg->n_v1 ? CSR_CG_V1 : cg->v2 ? CSR_CG_V2 : CSR_CG_NONE;
}

bool
csr_cgroup_swap_limited (const struct csr_cgroup *cg)
{
  return cg && cg->swap_limited;
}

int
csr_cgroup_enter (struct csr_cgroup *cg, pid_t pid, csr_error **err)
{
  if (cg == NULL)
    return 0;
  if (pid <= 0)
    return csr_error_set (err, EINVAL, "cgroup: bad pid %ld", (long)pid);
  if (cg->be == NULL)
    return csr_cg_container_enter (cg, pid, err);
  return cg->be->enter (cg, pid, err);
}

int
csr_cgroup_clone_fd (const struct csr_cgroup *cg)
{
  if (cg == NULL)
    return -1;
  if (cg->be == NULL)
    return cg->has_v2_fd ? cg->v2_fd : -1;
  if (cg->be->mechanism != CSR_CG_V2 || cg->n_dirs == 0)
    return -1;
  return cg->dirs[0].fd;
}

/* A container's v1 directories' "tasks" files. */
static int
container_tasks_fds (const struct csr_cgroup *cg, int *fds, csr_error **err)
{
  int n = 0;
  for (size_t i = 0; i < cg->n_v1 && i < CSR_CG_MAX_DIRS; i++)
    {
      char path[PATH_MAX];
      int fd = -1;
      if ((size_t)snprintf (path, sizeof path, "%s/tasks", cg->v1[i]) < sizeof path)
        fd = open (path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0)
        {
          csr_error_errno (err, "cgroup: open %s", path);
          while (n > 0)
            close (fds[--n]);
          return -1;
        }
      fds[n++] = fd;
    }
  return n;
}

int
csr_cgroup_self_enter_fds (const struct csr_cgroup *cg, int *fds, csr_error **err)
{
  int n = 0;
  if (cg == NULL)
    return 0;
  if (cg->be == NULL)
    return container_tasks_fds (cg, fds, err);
  if (cg->be->mechanism != CSR_CG_V1)
    return 0;
  for (size_t i = 0; i < cg->n_dirs; i++)
    {
      if (cg->dirs[i].fd < 0)
        continue;
      int fd = openat (cg->dirs[i].fd, "tasks", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0)
        {
          csr_error_errno (err, "cgroup: open %s/%s/tasks", cg->dirs[i].parent, cg->name);
          while (n > 0)
            close (fds[--n]);
          return -1;
        }
      fds[n++] = fd;
    }
  return n;
}

int
csr_cgroup_procs_fd (const struct csr_cgroup *cg, csr_error **err)
{
  int dir = csr_cgroup_clone_fd (cg);
  if (dir < 0)
    return -2;
  int fd = openat (dir, "cgroup.procs", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return csr_error_errno (err, "cgroup: open the cgroup.procs of %s", cg->name);
  return fd;
}

int
csr_cgroup_self_enter (const int *fds, int n, csr_error **err)
{
  int rc = 0;
  for (int i = 0; i < n; i++)
    {
      if (rc == 0 && write (fds[i], "0", 1) != 1)
        rc = csr_error_errno (err, "cgroup: move the jail into its cgroup");
      close (fds[i]);
    }
  return rc;
}

int
csr_cgroup_stats (struct csr_cgroup *cg, struct csr_cgroup_stats *st, csr_error **err)
{
  memset (st, 0, sizeof *st);
  if (cg == NULL || cg->be == NULL)
    return 0;
  return cg->be->stats (cg, st, err);
}

void
csr_cgroup_destroy (struct csr_cgroup *cg)
{
  if (cg == NULL)
    return;
  if (cg->be)
    cg->be->destroy (cg);
  else
    {
      csr_error *e = NULL;
      if (csr_cgroup_delete (cg, &e) < 0)
        csr_warn ("%s", csr_error_text (e));
      csr_error_free (e);
    }
  csr_cg_free (cg);
}

void
csr_cgroup_free (struct csr_cgroup *cg)
{
  csr_cg_free (cg);
}
