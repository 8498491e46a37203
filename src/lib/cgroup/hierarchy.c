#include "config.h"

/* csrun — the one hierarchy finder for v2, v1 and hybrid hosts: which
 * cgroup file systems are mounted where (from mountinfo.c), the caller's
 * own cgroup (/proc/self/cgroup), the delegated v2 parent the snippet
 * cgroups go under, and every v1 hierarchy with a real controller for the
 * container cgroups (named-only ones such as name=systemd are skipped;
 * co-mounted controllers and bind mounts of one hierarchy count once). */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
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
#include "../util/syscalls.h"
#include "cgroup-internal.h"
#include "mountinfo.h"

#include <pthread.h>

#define CSR_CG_MAX_V1_MOUNTS CSR_CG_MAX_DIRS

static const char *const v1_controllers[]
    = { "cpu",      "cpuacct", "cpuset",     "memory",  "devices", "freezer", "net_cls",
        "net_prio", "blkio",   "perf_event", "hugetlb", "pids",    "rdma",    "misc" };

/* ---------------------------------------------------------------- snippet roots */

bool
csr_cg_parse_proc_cgroup (const char *text, const char **path, size_t *len)
{
  for (const char *line = text; line && *line;
       line = strchr (line, '\n'), line = line ? line + 1 : NULL)
    {
      if (strncmp (line, "0::", 3) != 0)
        continue;
      const char *p = line + 3;
      const char *end = strchr (p, '\n');
      size_t l = end ? (size_t)(end - p) : strlen (p);
      if (l == 0 || p[0] != '/')
        return false;
      *path = p;
      *len = l;
      return true;
    }
  return false;
}

int
csr_cg_parse_mountinfo (const char *text, struct csr_cg_mounts *m, csr_error **err)
{
  static const char *const v1_names[CSR_CG_V1_N] = { "memory", "pids", "cpu", "cpuacct" };
  memset (m, 0, sizeof *m);
  struct csr_mountinfo mi;
  if (csr_mountinfo_parse (text, &mi, err) < 0)
    return -1;
  for (size_t k = 0; k < mi.n; k++)
    {
      const struct csr_mountinfo_entry *e = &mi.e[k];
      if (strcmp (e->fstype, "cgroup2") == 0 && m->v2 == NULL)
        {
          m->v2 = strdup (e->mount_point);
          m->v2_root = strdup (e->root);
          if (m->v2 == NULL || m->v2_root == NULL)
            goto nomem;
        }
      else if (strcmp (e->fstype, "cgroup") == 0)
        for (int i = 0; i < CSR_CG_V1_N; i++)
          if (m->v1[i] == NULL && csr_mountinfo_has_opt (e->super_opts, v1_names[i])
              && (m->v1[i] = strdup (e->mount_point)) == NULL)
            goto nomem;
    }
  csr_mountinfo_release (&mi);
  return 0;
nomem:
  csr_mountinfo_release (&mi);
  csr_cg_mounts_clear (m);
  return csr_error_errno (err, "parse mountinfo");
}

void
csr_cg_mounts_clear (struct csr_cg_mounts *m)
{
  free (m->v2);
  free (m->v2_root);
  for (int i = 0; i < CSR_CG_V1_N; i++)
    free (m->v1[i]);
  memset (m, 0, sizeof *m);
}

char *
csr_cg_v2_parent (const struct csr_cg_mounts *m, const char *own, size_t own_len, bool is_root)
{
  if (m->v2 == NULL)
    return NULL;
  if (is_root)
    return strdup (m->v2);
  if (own == NULL || own_len == 0 || own[0] != '/')
    return NULL;
  /* The mount may show a subtree (field 4): OWN must be inside it. */
  const char *root = m->v2_root ? m->v2_root : "/";
  size_t rl = strcmp (root, "/") == 0 ? 0 : strlen (root);
  if (rl > 0)
    {
      if (own_len < rl || memcmp (own, root, rl) != 0 || (own_len > rl && own[rl] != '/'))
        return NULL;
      own += rl;
      own_len -= rl;
    }
  /* Drop the last component: our own cgroup holds processes (ours), so the
   * jail's cgroups go next to it, in csrun.slice/ under its parent. */
  while (own_len > 0 && own[own_len - 1] == '/')
    own_len--;
  if (own_len == 0)
    return NULL; /* we are in the root: nothing above it to use */
  while (own_len > 0 && own[own_len - 1] != '/')
    own_len--;
  while (own_len > 0 && own[own_len - 1] == '/')
    own_len--;
  char *out;
  if (asprintf (&out, "%s%.*s", m->v2, (int)own_len, own) < 0)
    return NULL;
  return out;
}

static struct csr_cgroup_roots host_roots;
static struct csr_cg_mounts host_mounts;
static char *host_v2_parent;
static bool host_ok;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void
discover (void)
{
  cleanup_free char *mi = NULL;
  csr_error *e = NULL;
  if (csr_read_file ("/proc/self/mountinfo", 16 << 20, &mi, NULL, &e) < 0
      || csr_cg_parse_mountinfo (mi, &host_mounts, &e) < 0)
    {
      csr_debug ("cgroup: %s", csr_error_text (e));
      csr_error_free (e);
      return;
    }
  if (host_mounts.v2)
    {
      bool is_root = geteuid () == 0;
      cleanup_free char *self = NULL;
      const char *own = NULL;
      size_t own_len = 0;
      if (!is_root)
        {
          if (csr_read_file ("/proc/self/cgroup", 1 << 20, &self, NULL, &e) < 0)
            {
              csr_debug ("cgroup: %s", csr_error_text (e));
              csr_error_free (e);
              e = NULL;
            }
          else if (!csr_cg_parse_proc_cgroup (self, &own, &own_len))
            own = NULL;
        }
      host_v2_parent = csr_cg_v2_parent (&host_mounts, own, own_len, is_root);
      /* A hybrid host: the v2 tree has no memory controller (it is bound to a
       * v1 hierarchy) and can't get one while this boot lasts: no need to
       * look at it again on every run. */
      char buf[512];
      cleanup_close int fd = host_v2_parent ? csr_cg_open_dir (host_v2_parent) : -1;
      if (fd >= 0 && csr_cg_read (fd, "cgroup.controllers", buf, sizeof buf) >= 0
          && !csr_cg_word_in (buf, "memory"))
        {
          csr_debug ("cgroup: no memory controller in the cgroup2 tree %s: v2 is not used",
                     host_v2_parent);
          free (host_v2_parent);
          host_v2_parent = NULL;
        }
    }
  host_roots.v2_parent = host_v2_parent;
  for (int i = 0; i < CSR_CG_V1_N; i++)
    host_roots.v1[i] = host_mounts.v1[i];
  host_ok = true;
  csr_debug ("cgroup: v2 parent %s; v1 memory %s, pids %s, cpu %s, cpuacct %s",
             host_v2_parent ? host_v2_parent : "-", host_roots.v1[0] ? host_roots.v1[0] : "-",
             host_roots.v1[1] ? host_roots.v1[1] : "-", host_roots.v1[2] ? host_roots.v1[2] : "-",
             host_roots.v1[3] ? host_roots.v1[3] : "-");
}

const struct csr_cgroup_roots *
csr_cgroup_host_roots (void)
{
  pthread_once (&host_once, discover);
  return host_ok ? &host_roots : NULL;
}

/* ---------------------------------------------------------------- container hierarchies */

void
csr_cg_hiers_free (struct csr_cg_hiers *h)
{
  free (h->v2);
  for (size_t i = 0; i < h->n_v1; i++)
    {
      free (h->v1[i].mnt);
      free (h->v1[i].dev);
    }
  memset (h, 0, sizeof *h);
}

static bool
has_v1_controller (const char *opts)
{
  cleanup_free char *copy = strdup (opts);
  if (copy == NULL)
    return false;
  char *save = NULL;
  for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
    for (size_t i = 0; i < sizeof v1_controllers / sizeof v1_controllers[0]; i++)
      if (strcmp (t, v1_controllers[i]) == 0)
        return true;
  return false;
}

void
csr_cg_hiers_add_v1 (struct csr_cg_hiers *h, const char *mnt, const char *dev, bool root)
{
  for (size_t i = 0; i < h->n_v1; i++)
    {
      struct csr_cg_hier *x = &h->v1[i];
      /* Mounted over: the later mount is the visible one.  The same
       * hierarchy again (a bind mount): keep one, preferring its root. */
      if (strcmp (x->mnt, mnt) == 0 || (strcmp (x->dev, dev) == 0 && root && !x->root))
        {
          char *m = strdup (mnt), *d = strdup (dev);
          if (m == NULL || d == NULL)
            {
              free (m);
              free (d);
              return;
            }
          free (x->mnt);
          free (x->dev);
          x->mnt = m;
          x->dev = d;
          x->root = root;
          return;
        }
      if (strcmp (x->dev, dev) == 0)
        return;
    }
  if (h->n_v1 == CSR_CG_MAX_DIRS)
    {
      csr_debug ("cgroup: more than %d v1 hierarchies, ignoring %s", CSR_CG_MAX_DIRS, mnt);
      return;
    }
  char *m = strdup (mnt), *d = strdup (dev);
  if (m == NULL || d == NULL)
    {
      free (m);
      free (d);
      return;
    }
  h->v1[h->n_v1++] = (struct csr_cg_hier){ m, d, root };
}

int
csr_cg_hiers_read (struct csr_cg_hiers *h, csr_error **err)
{
  struct csr_mountinfo mi;
  if (csr_mountinfo_read (&mi, err) < 0)
    return csr_error_wrap (err, "cgroup");
  for (size_t k = 0; k < mi.n; k++)
    {
      const struct csr_mountinfo_entry *e = &mi.e[k];
      char dev[32];
      snprintf (dev, sizeof dev, "%u:%u", e->major, e->minor);
      bool at_root = strcmp (e->root, "/") == 0;
      if (strcmp (e->fstype, "cgroup2") == 0)
        {
          if (h->v2 == NULL || (at_root && !h->v2_root))
            {
              char *m = strdup (e->mount_point);
              if (m == NULL)
                {
                  csr_mountinfo_release (&mi);
                  return csr_error_errno (err, "cgroup: mountinfo");
                }
              free (h->v2);
              h->v2 = m;
              h->v2_root = at_root;
            }
        }
      else if (strcmp (e->fstype, "cgroup") == 0)
        {
          if (!has_v1_controller (e->super_opts))
            {
              csr_debug ("cgroup: skipping the named hierarchy at %s (%s)", e->mount_point,
                         e->super_opts);
              continue;
            }
          csr_cg_hiers_add_v1 (h, e->mount_point, dev, at_root);
        }
    }
  csr_mountinfo_release (&mi);
  return 0;
}
