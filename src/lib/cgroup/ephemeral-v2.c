/* csrun — the cgroup v2 backend.
 *
 * Layout: <parent>/csrun.slice/csrun-<pid>-<n>, where <parent> is the cgroup2
 * mount as root, and the parent of the caller's own cgroup when rootless
 * (e.g. .../user@1000.service/app.slice when csrun runs in a scope below it).
 *
 * The "no internal processes" rule: controllers can only be enabled in the
 * cgroup.subtree_control of a cgroup without processes (the root excepted).
 * csrun never enables them in the caller's own cgroup (it holds the caller);
 * it enables memory, pids and cpu in <parent> (which has no processes of its
 * own when it delegates to children, as a systemd slice does) and in
 * csrun.slice, which csrun creates and never puts a process in.  The jail's
 * cgroups are leaves.  If <parent> holds processes, the kernel refuses
 * (EBUSY) and v2 is not used.  Rootless, the move of the jail's init into its
 * cgroup needs write access to cgroup.procs of the common ancestor of both
 * cgroups, <parent>: a delegated subtree gives it; checked up front. */
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

static const char *const wanted[] = { "memory", "pids", "cpu" };

/* Enable in DFD's cgroup.subtree_control what DFD's cgroup.controllers offers
 * of memory, pids and cpu, and what is not enabled yet.  Returns false when
 * memory is not enabled at the end. */
static bool
enable_controllers (int dfd, const char *where)
{
  char avail[512], on[512], req[64] = "";
  if (csr_cg_read (dfd, "cgroup.controllers", avail, sizeof avail) < 0)
    return false;
  if (csr_cg_read (dfd, "cgroup.subtree_control", on, sizeof on) < 0)
    return false;
  size_t n = 0;
  for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++)
    if (csr_cg_word_in (avail, wanted[i]) && !csr_cg_word_in (on, wanted[i]))
      n += (size_t)snprintf (req + n, sizeof req - n, "%s+%s", n ? " " : "", wanted[i]);
  if (n == 0)
    return csr_cg_word_in (on, "memory");
  int r = csr_cg_write (dfd, "cgroup.subtree_control", req);
  if (r == 0)
    return strstr (req, "+memory") || csr_cg_word_in (on, "memory");
  /* One refused controller fails the whole write: try them one by one. */
  bool memory = csr_cg_word_in (on, "memory");
  char *save = NULL;
  for (char *tok = strtok_r (req, " ", &save); tok; tok = strtok_r (NULL, " ", &save))
    {
      int r1 = csr_cg_write (dfd, "cgroup.subtree_control", tok);
      if (r1 == 0 && strcmp (tok, "+memory") == 0)
        memory = true;
      if (r1 < 0)
        csr_debug ("cgroup v2: cannot enable %s in %s: %s", tok + 1, where, strerror (-r1));
    }
  return memory;
}

static int
v2_enter (struct csr_cgroup *cg, pid_t pid, csr_error **err)
{
  char buf[24];
  snprintf (buf, sizeof buf, "%ld", (long)pid);
  int r = csr_cg_write (cg->dirs[0].fd, "cgroup.procs", buf);
  if (r < 0)
    return csr_error_set (err, -r, "cgroup: move pid %ld into %s/%s", (long)pid, cg->dirs[0].parent,
                          cg->name);
  return 0;
}

static void
v2_destroy (struct csr_cgroup *cg)
{
  csr_cg_dir_remove (&cg->dirs[0], cg->name, true);
}

static const struct csr_cgroup_backend v2_backend = {
  .mechanism = CSR_CG_V2,
  .enter = v2_enter,
  .stats = csr_cg_v2_stats,
  .destroy = v2_destroy,
};

int
csr_cg_v2_create (const char *v2_parent, const struct csr_cgroup_limits *limits,
                  struct csr_cgroup **out, struct csr_cgroup_enforced *enforced, csr_error **err)
{
  char buf[512];
  cleanup_close int pfd = csr_cg_open_dir (v2_parent);
  if (pfd < 0)
    {
      csr_debug ("cgroup v2: %s: %s", v2_parent, strerror (-pfd));
      return 0;
    }
  if (csr_cg_read (pfd, "cgroup.controllers", buf, sizeof buf) < 0
      || !csr_cg_word_in (buf, "memory"))
    {
      csr_debug ("cgroup v2: no memory controller in %s", v2_parent);
      return 0;
    }
  /* Moving the jail's init from our cgroup into csrun.slice/... needs write
   * access to the common ancestor's cgroup.procs: <parent>'s. */
  if (faccessat (pfd, "cgroup.procs", W_OK, AT_EACCESS) < 0)
    {
      csr_debug ("cgroup v2: %s is not delegated to us", v2_parent);
      return 0;
    }
  /* csrun.slice gets what <parent> enables for it: all of memory, pids and
   * cpu that <parent> has, or enable them there. */
  cleanup_close int sfd
      = openat (pfd, CSR_CG_V2_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  char sbuf[512];
  bool slice_ok = sfd >= 0 && csr_cg_read (sfd, "cgroup.controllers", sbuf, sizeof sbuf) >= 0;
  for (size_t i = 0; slice_ok && i < sizeof wanted / sizeof *wanted; i++)
    if (csr_cg_word_in (buf, wanted[i]) && !csr_cg_word_in (sbuf, wanted[i]))
      slice_ok = false;
  if (!slice_ok && !enable_controllers (pfd, v2_parent))
    {
      csr_debug ("cgroup v2: cannot enable the memory controller in %s", v2_parent);
      return 0;
    }
  if (sfd < 0)
    {
      sfd = csr_cg_mkdir_open (pfd, CSR_CG_V2_DIR, true);
      if (sfd < 0)
        {
          csr_debug ("cgroup v2: create %s/" CSR_CG_V2_DIR ": %s", v2_parent, strerror (-sfd));
          return 0;
        }
    }
  if (!enable_controllers (sfd, CSR_CG_V2_DIR))
    {
      csr_debug ("cgroup v2: cannot enable the memory controller in %s/" CSR_CG_V2_DIR, v2_parent);
      return 0;
    }
  struct csr_cgroup *cg = csr_cg_new (&v2_backend, err);
  if (cg == NULL)
    return -1;
  cg->n_dirs = 1;
  if (asprintf (&cg->dirs[0].parent, "%s/" CSR_CG_V2_DIR, v2_parent) < 0)
    {
      cg->dirs[0].parent = NULL;
      csr_cg_free (cg);
      return csr_error_errno (err, "cgroup: allocate");
    }
  int fd = -EEXIST;
  for (int tries = 0; tries < 64 && fd == -EEXIST; tries++)
    {
      if (tries)
        csr_cg_rename (cg);
      fd = csr_cg_mkdir_open (sfd, cg->name, false);
    }
  if (fd < 0)
    {
      csr_debug ("cgroup v2: create %s/%s: %s", cg->dirs[0].parent, cg->name, strerror (-fd));
      csr_cg_free (cg);
      return 0;
    }
  cg->dirs[0].fd = fd;
  cg->dirs[0].parent_fd = steal_fd (&sfd);
  if (csr_cg_read (fd, "cgroup.controllers", buf, sizeof buf) < 0
      || !csr_cg_word_in (buf, "memory"))
    {
      csr_debug ("cgroup v2: no memory controller in %s/%s", cg->dirs[0].parent, cg->name);
      v2_destroy (cg);
      csr_cg_free (cg);
      return 0;
    }
  if (csr_cg_write_limits (cg, limits, enforced, err) < 0)
    {
      v2_destroy (cg);
      csr_cg_free (cg);
      return -1;
    }
  csr_debug ("cgroup v2: created %s/%s", cg->dirs[0].parent, cg->name);
  *out = cg;
  return 1;
}
