#include "config.h"
#include "cgroup.h"

/* csrun — the cgroup of an OCI container (see cgroup.h).
 *
 * Hierarchies come from /proc/self/mountinfo (or the test overrides): the
 * first cgroup2 mount, and every cgroup v1 mount with at least one real
 * controller (named-only hierarchies such as name=systemd are skipped;
 * co-mounted controllers and bind mounts of one hierarchy count once).  v2 is
 * used when its root lists the memory controller, or when there is no v1
 * hierarchy at all; otherwise the v1 hierarchies are, and a hybrid host's
 * controller-less unified mount is left alone.
 *
 * Directories are made level by level and each level csrun made is
 * remembered, so an error removes exactly those (deepest first) and nothing
 * that existed before.  A pre-existing leaf is reused only when it holds no
 * process.  In a new v1 cpuset directory cpuset.cpus and cpuset.mems start
 * empty (unless the parent has cgroup.clone_children), which makes joining
 * fail: they are copied from the parent at each level csrun makes.
 *
 * Files that do not exist are "controller not here": the limit is not
 * applied (and not an error).  That is also what makes plain directories
 * usable as fake hierarchies in the unit tests. */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/path.h"
#include "../util/syscalls.h"
#include "cgroup-internal.h"
#include "mountinfo.h"
#include "../oci/devices.h"

#define CG_MAX_LEVELS 64      /* components of a cgroup path */
#define CG_MAX_DEPTH 32       /* nesting below a leaf that destroy walks */
#define CG_FILE_MAX (4 << 20) /* cgroup.procs of a big container */
#define CG_TIMEOUT_MS 5000    /* freeze, kill */
#define CG_RMDIR_TIMEOUT_MS 1000

/* Is WORD one of the blank-separated words of S? */
static bool
has_word (const char *s, const char *word)
{
  size_t wl = strlen (word);
  const char *p = s;
  while (*p)
    {
      while (*p && isspace ((unsigned char)*p))
        p++;
      const char *e = p;
      while (*e && !isspace ((unsigned char)*e))
        e++;
      if ((size_t)(e - p) == wl && memcmp (p, word, wl) == 0)
        return true;
      p = e;
    }
  return false;
}

static bool
is_blank (const char *s)
{
  for (; *s; s++)
    if (!isspace ((unsigned char)*s))
      return false;
  return true;
}

/* ---------------------------------------------------------------- paths */

/* The absolute path IN with "//" and "." collapsed.  ".." and the root
 * cgroup itself are errors. */
static int
normalize (const char *in, char **out, csr_error **err)
{
  size_t len = strlen (in);
  cleanup_free char *buf = malloc (len + 2);
  if (buf == NULL)
    return csr_error_errno (err, "cgroup path");
  size_t o = 0, levels = 0;
  const char *p = in, *c;
  size_t n;
  while ((c = csr_path_next (&p, &n)) != NULL)
    {
      if (csr_path_is_dotdot (c, n))
        return csr_error_set (err, EINVAL, "cgroup path '%s': '..' is not allowed", in);
      if (!csr_path_is_dot (c, n))
        {
          buf[o++] = '/';
          memcpy (buf + o, c, n);
          o += n;
          levels++;
        }
    }
  if (o == 0)
    return csr_error_set (err, EINVAL, "cgroup path '%s' is the root cgroup", in);
  if (levels > CG_MAX_LEVELS)
    return csr_error_set (err, EINVAL, "cgroup path '%s': more than %d levels", in, CG_MAX_LEVELS);
  buf[o] = '\0';
  *out = steal_pointer (&buf);
  return 0;
}

static bool
looks_systemd (const char *s)
{
  if (s[0] == '/')
    return false;
  size_t colons = 0;
  for (const char *p = s; *p; p++)
    colons += *p == ':';
  return colons == 2;
}

/* Append the cgroupfs path of systemd slice SLICE ("a-b.slice" ->
 * "/a.slice/a-b.slice"; "-.slice" is the root) to *PATH. */
static int
expand_slice (const char *slice, char **path, csr_error **err)
{
  size_t sl = strlen (slice);
  const char *suffix = ".slice";
  size_t xl = strlen (suffix);
  if (sl <= xl || strcmp (slice + sl - xl, suffix) != 0 || strchr (slice, '/'))
    return csr_error_set (err, EINVAL, "cgroup: invalid systemd slice '%s'", slice);
  if (strcmp (slice, "-.slice") == 0)
    return 0;
  size_t bl = sl - xl;
  const char *p = slice;
  const char *end = slice + bl;
  while (p <= end)
    {
      const char *dash = memchr (p, '-', (size_t)(end - p));
      if (dash == NULL)
        dash = end;
      if (dash == p)
        return csr_error_set (err, EINVAL, "cgroup: invalid systemd slice '%s'", slice);
      char *n = NULL;
      if (asprintf (&n, "%s/%.*s.slice", *path, (int)(dash - slice), slice) < 0)
        return csr_error_errno (err, "cgroup path");
      free (*path);
      *path = n;
      p = dash + 1;
    }
  return 0;
}

/* "slice:prefix:name" -> "/expanded/slice/prefix-name.scope". */
static int
systemd_path (const char *spec, char **out, csr_error **err)
{
  const char *c1 = spec[0] == '/' ? NULL : strchr (spec, ':');
  const char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  if (c1 == NULL || c2 == NULL || strchr (c2 + 1, ':'))
    return csr_error_set (err, EINVAL,
                          "cgroup path '%s': expected systemd syntax 'slice:prefix:name'", spec);
  cleanup_free char *slice = strndup (spec, (size_t)(c1 - spec));
  cleanup_free char *prefix = strndup (c1 + 1, (size_t)(c2 - c1 - 1));
  const char *name = c2 + 1;
  if (slice == NULL || prefix == NULL)
    return csr_error_errno (err, "cgroup path");
  if (*name == '\0' || strchr (name, '/') || strchr (prefix, '/') || strcmp (name, "..") == 0
      || strcmp (prefix, "..") == 0)
    return csr_error_set (err, EINVAL, "cgroup path '%s': invalid systemd unit name", spec);
  cleanup_free char *path = strdup ("");
  if (path == NULL)
    return csr_error_errno (err, "cgroup path");
  if (expand_slice (*slice ? slice : "system.slice", &path, err) < 0)
    return csr_error_wrap (err, "cgroup path '%s'", spec);
  size_t nl = strlen (name);
  bool is_slice = nl > 6 && strcmp (name + nl - 6, ".slice") == 0;
  cleanup_free char *full = NULL;
  int r;
  if (is_slice)
    r = asprintf (&full, "%s/%s", path, name);
  else if (*prefix)
    r = asprintf (&full, "%s/%s-%s.scope", path, prefix, name);
  else
    r = asprintf (&full, "%s/%s.scope", path, name);
  if (r < 0)
    return csr_error_errno (err, "cgroup path");
  return normalize (full, out, err);
}

int
csr_cgroup_container_path (const char *cgroups_path, const char *id, bool systemd, char **out,
                           csr_error **err)
{
  *out = NULL;
  cleanup_free char *full = NULL;
  if (cgroups_path == NULL || *cgroups_path == '\0')
    {
      if (id == NULL || *id == '\0' || strchr (id, '/') || strcmp (id, ".") == 0
          || strcmp (id, "..") == 0)
        return csr_error_set (err, EINVAL, "cgroup path: invalid container id '%s'",
                              id ? id : "(null)");
      if (asprintf (&full, "/csrun-containers/%s", id) < 0)
        return csr_error_errno (err, "cgroup path");
      return normalize (full, out, err);
    }
  if (systemd || looks_systemd (cgroups_path))
    return systemd_path (cgroups_path, out, err);
  if (cgroups_path[0] == '/')
    return normalize (cgroups_path, out, err);
  if (asprintf (&full, "/csrun-containers/%s", cgroups_path) < 0)
    return csr_error_errno (err, "cgroup path");
  return normalize (full, out, err);
}

/* ---------------------------------------------------------------- making directories */

/* One hierarchy's directory while it is being made. */
struct made
{
  char *leaf;                  /* root + path */
  size_t ends[CG_MAX_LEVELS];  /* strlen of each level's path */
  bool created[CG_MAX_LEVELS]; /* made by csrun (to remove on an error) */
  size_t n;
};

/* Remove the levels csrun made, deepest first; free M. */
static void
made_undo (struct made *m)
{
  if (m->leaf == NULL)
    return;
  for (size_t i = m->n; i > 0; i--)
    if (m->created[i - 1])
      {
        m->leaf[m->ends[i - 1]] = '\0';
        if (rmdir (m->leaf) < 0)
          csr_debug ("cgroup: cannot remove %s: %s", m->leaf, strerror (errno));
      }
  free (m->leaf);
  memset (m, 0, sizeof *m);
}

static void
made_free (struct made *m)
{
  free (m->leaf);
  memset (m, 0, sizeof *m);
}

/* v2: enable the wanted controllers in DIR's cgroup.subtree_control (those
 * its cgroup.controllers lists and that are not on yet).  Never fatal: a
 * controller left off only means its limit files are missing below. */
static void
enable_controllers (const char *dir)
{
  static const char *const want[] = { "memory", "pids", "cpu", "cpuset", "io", "hugetlb" };
  cleanup_free char *avail = NULL;
  cleanup_free char *on = NULL;
  if (csr_cg_path_read (dir, "cgroup.controllers", &avail, NULL) != 0)
    return;
  if (csr_cg_path_read (dir, "cgroup.subtree_control", &on, NULL) < 0)
    return;
  char all[128] = "";
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (has_word (avail, want[i]) && !(on && has_word (on, want[i])))
      {
        if (*all)
          strcat (all, " ");
        strcat (all, "+");
        strcat (all, want[i]);
      }
  if (*all == '\0')
    return;
  csr_error *e = NULL;
  if (csr_cg_path_write (dir, "cgroup.subtree_control", all, &e) == 0)
    return;
  csr_debug ("cgroup: %s", e ? csr_error_text (e) : "no cgroup.subtree_control");
  csr_error_free (e);
  /* All at once failed: one at a time, so one refusal (cpu with realtime
   * tasks, say) does not cost the others. */
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (has_word (avail, want[i]) && !(on && has_word (on, want[i])))
      {
        char one[16];
        snprintf (one, sizeof one, "+%s", want[i]);
        e = NULL;
        if (csr_cg_path_write (dir, "cgroup.subtree_control", one, &e) < 0)
          csr_debug ("cgroup: %s", csr_error_text (e));
        csr_error_free (e);
      }
}

/* v1 cpuset: fill the empty cpuset.cpus / cpuset.mems of DIR from PARENT
 * (a new level starts empty unless cgroup.clone_children; an existing empty
 * one above the container can't take it either: runc and crun fill both).
 * Levels are visited top-down, so PARENT is already filled.  Nothing to do
 * outside the cpuset hierarchy or where the value is there. */
static int
copy_cpuset (const char *parent, const char *dir, csr_error **err)
{
  static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
  for (size_t i = 0; i < 2; i++)
    {
      cleanup_free char *cur = NULL;
      cleanup_free char *val = NULL;
      int r = csr_cg_path_read (dir, files[i], &cur, err);
      if (r != 0)
        return r < 0 ? -1 : 0;
      if (!is_blank (cur))
        continue;
      if (csr_cg_path_read (parent, files[i], &val, err) != 0)
        return csr_error_set (err, ENOENT, "cgroup: %s/%s is missing", parent, files[i]);
      csr_cg_rtrim (val);
      if (*val == '\0')
        return csr_error_set (err, ENOSPC, "cgroup: %s/%s is empty", parent, files[i]);
      if (csr_cg_path_write (dir, files[i], val, err) != 0)
        return csr_error_set (err, ENOENT, "cgroup: %s/%s is missing", dir, files[i]);
    }
  return 0;
}

enum mk_mode
{
  MK_V1,    /* a v1 hierarchy: cpuset levels filled */
  MK_V2,    /* the v2 hierarchy with the limits: controllers enabled */
  MK_PLAIN, /* a hybrid host's unified hierarchy: directories only */
};

/* mkdir -p ROOT+PATH (PATH normalized, absolute), remembering each level
 * made.  MK_V2: enable controllers in each ancestor first; MK_V1: fill the
 * cpuset of each level.  1 made or already there, 0 when not permitted
 * (nothing left behind), -1 on an error (nothing left behind). */
static int
make_dirs (const char *root, const char *path, enum mk_mode mode, struct made *m, csr_error **err)
{
  memset (m, 0, sizeof *m);
  size_t rl = strlen (root);
  while (rl > 0 && root[rl - 1] == '/')
    rl--;
  if (asprintf (&m->leaf, "%.*s%s", (int)rl, root, path) < 0)
    {
      m->leaf = NULL;
      return csr_error_errno (err, "cgroup: %s", root);
    }
  char *leaf = m->leaf;
  size_t pos = rl; /* at the '/' before the next component */
  while (leaf[pos] == '/')
    {
      size_t end = pos + 1;
      while (leaf[end] && leaf[end] != '/')
        end++;
      if (m->n == CG_MAX_LEVELS)
        {
          made_undo (m);
          return csr_error_set (err, EINVAL, "cgroup path '%s' is too deep", path);
        }
      char saved = leaf[end];
      if (mode == MK_V2)
        {
          /* The parent of this level: ROOT or the level before. */
          leaf[pos] = '\0';
          enable_controllers (pos == 0 ? "/" : leaf);
          leaf[pos] = '/';
        }
      leaf[end] = '\0';
      m->ends[m->n] = end;
      if (mkdir (leaf, 0755) == 0)
        m->created[m->n++] = true;
      else
        {
          int e = errno;
          struct stat st;
          if (e == EEXIST && stat (leaf, &st) == 0 && S_ISDIR (st.st_mode))
            m->created[m->n++] = false;
          else if (e == EACCES || e == EPERM || e == EROFS)
            {
              csr_debug ("cgroup: cannot make %s: %s", leaf, strerror (e));
              made_undo (m);
              return 0;
            }
          else
            {
              errno = e == EEXIST ? ENOTDIR : e;
              csr_error_errno (err, "cgroup: mkdir '%s'", leaf);
              made_undo (m);
              return -1;
            }
        }
      if (mode == MK_V1)
        {
          leaf[pos] = '\0';
          cleanup_free char *parent = strdup (pos == 0 ? "/" : leaf);
          leaf[pos] = '/';
          if (parent == NULL || copy_cpuset (parent, leaf, err) < 0)
            {
              if (parent == NULL)
                csr_error_errno (err, "cgroup");
              made_undo (m);
              return -1;
            }
        }
      leaf[end] = saved;
      pos = end;
    }
  return 1;
}

/* A reused (pre-existing) leaf that holds processes: they become the
 * container's (and its delete kills them).  runc warns and goes on ("cgroup
 * is not empty"); so does csrun. */
static int
warn_if_populated (const char *dir, csr_error **err)
{
  struct pidset s = { 0 };
  int r = csr_cg_collect_all (&dir, 1, &s, err);
  size_t n = s.n;
  free (s.v);
  if (r < 0)
    return -1;
  if (n > 0)
    csr_warn ("container's cgroup is not empty: %s holds %zu processes (they share the "
              "container's cgroup now, and its delete kills them)",
              dir, n);
  return 0;
}

/* ---------------------------------------------------------------- create */

int
csr_cg_container_make (const char *path, const struct csr_cgroup_resources *r, const char *roots_v2,
                       const char *const *roots_v1, struct csr_cgroup *cg,
                       struct csr_cgroup_applied *applied, csr_error **err)
{
  static const struct csr_cgroup_resources none = { 0 };
  cg->be = NULL; /* the container face */
  cg->n_dirs = 0;
  cg->v2 = NULL;
  memset (cg->v1, 0, sizeof cg->v1);
  cg->n_v1 = 0;
  cg->has_v2_fd = false;
  memset (applied, 0, sizeof *applied);
  if (r == NULL)
    r = &none;
  if (path == NULL || path[0] != '/')
    return csr_error_set (err, EINVAL, "cgroup path '%s' is not absolute", path ? path : "(null)");
  cleanup_free char *rel = NULL;
  if (normalize (path, &rel, err) < 0 || csr_cg_resources_check (r, false, err) < 0)
    return -1;

  struct csr_cg_hiers h = { 0 };
  if (roots_v2 || roots_v1)
    {
      if (roots_v2 && (h.v2 = strdup (roots_v2)) == NULL)
        return csr_error_errno (err, "cgroup");
      for (size_t i = 0; roots_v1 && roots_v1[i]; i++)
        {
          char dev[32];
          snprintf (dev, sizeof dev, "fake:%zu", i);
          csr_cg_hiers_add_v1 (&h, roots_v1[i], dev, true);
        }
    }
  else if (csr_cg_hiers_read (&h, err) < 0)
    {
      csr_cg_hiers_free (&h);
      return -1;
    }

  bool use_v2 = false;
  if (h.v2)
    {
      cleanup_free char *ctl = NULL;
      use_v2 = h.n_v1 == 0
               || (csr_cg_path_read (h.v2, "cgroup.controllers", &ctl, NULL) == 0
                   && has_word (ctl, "memory"));
    }

  /* m[0..nm): the v1 leaves, or the v2 one; hybrid: the unified one after
   * the v1 ones. */
  struct made m[CSR_CG_MAX_DIRS + 1];
  size_t nm = 0;
  bool hybrid = false;
  int ret = -1;
  if (use_v2)
    {
      int rc = make_dirs (h.v2, rel, MK_V2, &m[0], err);
      if (rc <= 0)
        {
          ret = rc;
          goto out;
        }
      nm = 1;
    }
  else
    {
      for (size_t i = 0; i < h.n_v1; i++)
        {
          int rc = make_dirs (h.v1[i].mnt, rel, MK_V1, &m[nm], err);
          if (rc < 0)
            goto fail;
          if (rc > 0)
            nm++;
        }
      /* A hybrid host: the container also gets its place in the unified
       * hierarchy (runc and crun do it: systemd and tools that read
       * "0::" in /proc/PID/cgroup find it there).  No controller is
       * enabled in it (that would change the host's unified root); not
       * permitted there (rootless) is fine. */
      if (nm > 0 && h.v2)
        {
          int rc = make_dirs (h.v2, rel, MK_PLAIN, &m[nm], err);
          if (rc < 0)
            goto fail;
          if (rc > 0)
            {
              nm++;
              hybrid = true;
            }
        }
    }
  if (nm == 0)
    {
      csr_debug ("cgroup: no writable cgroup hierarchy for %s", rel);
      ret = 0;
      goto out;
    }

  for (size_t i = 0; i < nm; i++)
    if (!m[i].created[m[i].n - 1] && warn_if_populated (m[i].leaf, err) < 0)
      goto fail;
  for (size_t i = 0; i < nm; i++)
    if (csr_cg_check_not_frozen (m[i].leaf, use_v2 || (hybrid && i == nm - 1), err) < 0)
      goto fail;

  /* CG borrows the leaves until the limits are written. */
  if (use_v2)
    cg->v2 = m[0].leaf;
  else
    {
      for (size_t i = 0; i < nm - (hybrid ? 1 : 0); i++)
        cg->v1[cg->n_v1++] = m[i].leaf;
      if (hybrid)
        cg->v2 = m[nm - 1].leaf;
    }
  int arc = csr_cg_resources_apply (cg, r, false, applied, err);
  /* Give the borrowed leaves back (only them: the handle's fds stay -1). */
  cg->v2 = NULL;
  memset (cg->v1, 0, sizeof cg->v1);
  cg->n_v1 = 0;
  if (arc < 0)
    goto fail;
  for (size_t i = 0; i < nm; i++)
    if (csr_cg_path_exists (m[i].leaf, use_v2 ? "cgroup.freeze" : "freezer.state"))
      applied->freezer = true;

  if (use_v2)
    cg->v2 = steal_pointer (&m[0].leaf);
  else
    {
      for (size_t i = 0; i < nm - (hybrid ? 1 : 0); i++)
        cg->v1[cg->n_v1++] = steal_pointer (&m[i].leaf);
      if (hybrid)
        cg->v2 = steal_pointer (&m[nm - 1].leaf);
    }
  for (size_t i = 0; i < nm; i++)
    made_free (&m[i]);
  ret = 1;
  goto out;

fail:
  csr_error_wrap (err, "cgroup %s", rel);
  for (size_t i = nm; i > 0; i--)
    made_undo (&m[i - 1]);
  memset (applied, 0, sizeof *applied);
  ret = -1;
out:
  csr_cg_hiers_free (&h);
  return ret;
}

/* ---------------------------------------------------------------- enter, pids */

int
csr_cgroup_update (const struct csr_cgroup *cg, const struct csr_cgroup_resources *r,
                   struct csr_cgroup_applied *applied, csr_error **err)
{
  struct csr_cgroup_applied ap = { 0 };
  if (csr_cg_resources_apply (cg, r, true, &ap, err) < 0)
    return -1;
  if (applied)
    *applied = ap;
  return 0;
}

int
csr_cg_container_enter (const struct csr_cgroup *cg, pid_t pid, csr_error **err)
{
  const char *dirs[CSR_CG_MAX_DIRS];
  size_t n = csr_cg_dirs_of (cg, dirs);
  char v[24];
  snprintf (v, sizeof v, "%ld", (long)pid);
  for (size_t i = 0; i < n; i++)
    {
      int rc = csr_cg_path_write (dirs[i], "cgroup.procs", v, err);
      if (rc < 0)
        return csr_error_wrap (err, "cgroup: move pid %ld", (long)pid);
      if (rc > 0)
        return csr_error_set (err, ENOENT, "cgroup: move pid %ld: %s/cgroup.procs is missing",
                              (long)pid, dirs[i]);
    }
  return 0;
}

int
csr_cgroup_pids (const struct csr_cgroup *cg, pid_t **pids, size_t *n, csr_error **err)
{
  *pids = NULL;
  *n = 0;
  const char *dirs[CSR_CG_MAX_DIRS];
  size_t nd = csr_cg_dirs_of (cg, dirs);
  struct pidset s = { 0 };
  if (csr_cg_collect_all (dirs, nd > 0 ? 1 : 0, &s, err) < 0)
    {
      free (s.v);
      return -1;
    }
  *pids = s.v;
  *n = s.n;
  return 0;
}

void
csr_cg_container_release (struct csr_cgroup *cg)
{
  if (cg == NULL)
    return;
  free (cg->v2);
  for (size_t i = 0; i < cg->n_v1 && i < CSR_CG_MAX_DIRS; i++)
    free (cg->v1[i]);
  if (cg->has_v2_fd && cg->v2_fd >= 0)
    close (cg->v2_fd);
  cg->v2 = NULL;
  memset (cg->v1, 0, sizeof cg->v1);
  cg->n_v1 = 0;
  cg->has_v2_fd = false;
  cg->v2_fd = -1;
}

/* The v2 directory, for CLONE_INTO_CGROUP (a failure: the launcher moves
 * the container instead). */
static void
open_v2 (struct csr_cgroup *cg)
{
  if (cg->v2 == NULL)
    return;
  cg->v2_fd = open (cg->v2, O_PATH | O_DIRECTORY | O_CLOEXEC);
  cg->has_v2_fd = cg->v2_fd >= 0;
}

int
csr_cgroup_container_create (const char *path, const struct csr_cgroup_resources *r,
                             const char *roots_v2, const char *const *roots_v1,
                             struct csr_cgroup **out, struct csr_cgroup_applied *applied,
                             csr_error **err)
{
  *out = NULL;
  struct csr_cgroup *cg = csr_cg_new (NULL, err);
  if (cg == NULL)
    return -1;
  int rc = csr_cg_container_make (path, r, roots_v2, roots_v1, cg, applied, err);
  if (rc <= 0)
    {
      csr_cg_free (cg);
      return rc;
    }
  open_v2 (cg);
  *out = cg;
  return 1;
}

int
csr_cgroup_container_open (const char *v2, char *const *v1, size_t n_v1, struct csr_cgroup **out,
                           csr_error **err)
{
  *out = NULL;
  if (v2 == NULL && n_v1 == 0)
    return 0;
  if (n_v1 > CSR_CG_MAX_DIRS)
    return csr_error_set (err, EINVAL, "cgroup: more than %d v1 directories", CSR_CG_MAX_DIRS);
  struct csr_cgroup *cg = csr_cg_new (NULL, err);
  if (cg == NULL)
    return -1;
  if (v2 && (cg->v2 = strdup (v2)) == NULL)
    goto nomem;
  for (size_t i = 0; i < n_v1; i++)
    {
      if ((cg->v1[i] = strdup (v1[i])) == NULL)
        goto nomem;
      cg->n_v1 = i + 1;
    }
  open_v2 (cg);
  *out = cg;
  return 0;
nomem:
  csr_cg_free (cg);
  return csr_error_errno (err, "cgroup");
}

const char *
csr_cgroup_v2_path (const struct csr_cgroup *cg)
{
  return cg ? cg->v2 : NULL;
}

size_t
csr_cgroup_v1_paths (const struct csr_cgroup *cg, const char *const **paths)
{
  *paths = cg ? (const char *const *)cg->v1 : NULL;
  return cg ? cg->n_v1 : 0;
}
