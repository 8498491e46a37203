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
#include "../util/syscalls.h"
#include "cgroup-internal.h"
#include "mountinfo.h"
#include "../oci/devices.h"

#define CG_MAX_LEVELS 64      /* components of a cgroup path */
#define CG_MAX_DEPTH 32       /* nesting below a leaf that destroy walks */
#define CG_FILE_MAX (4 << 20) /* cgroup.procs of a big container */
#define CG_TIMEOUT_MS 5000    /* freeze, kill */
#define CG_RMDIR_TIMEOUT_MS 1000

static const char *const v1_controllers[]
    = { "cpu",      "cpuacct", "cpuset",     "memory",  "devices", "freezer", "net_cls",
        "net_prio", "blkio",   "perf_event", "hugetlb", "pids",    "rdma",    "misc" };

/* ---------------------------------------------------------------- small helpers */

static long long
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

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

static void
rtrim (char *s)
{
  size_t n = strlen (s);
  while (n > 0 && isspace ((unsigned char)s[n - 1]))
    s[--n] = '\0';
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
  const char *p = in;
  while (*p)
    {
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      const char *e = strchrnul (p, '/');
      size_t n = (size_t)(e - p);
      if (n == 2 && p[0] == '.' && p[1] == '.')
        return csr_error_set (err, EINVAL, "cgroup path '%s': '..' is not allowed", in);
      if (!(n == 1 && p[0] == '.'))
        {
          buf[o++] = '/';
          memcpy (buf + o, p, n);
          o += n;
          levels++;
        }
      p = e;
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

/* ---------------------------------------------------------------- hierarchies */

struct hier
{
  char *mnt;
  char *dev; /* "major:minor": one hierarchy */
  bool root; /* the mount shows the hierarchy's root */
};

struct hiers
{
  char *v2;
  bool v2_root;
  struct hier v1[CSR_CG_MAX_DIRS];
  size_t n_v1;
};

static void
hiers_free (struct hiers *h)
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

static void
add_v1 (struct hiers *h, const char *mnt, const char *dev, bool root)
{
  for (size_t i = 0; i < h->n_v1; i++)
    {
      struct hier *x = &h->v1[i];
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
  h->v1[h->n_v1++] = (struct hier){ m, d, root };
}

static int
read_mountinfo (struct hiers *h, csr_error **err)
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
          add_v1 (h, e->mount_point, dev, at_root);
        }
    }
  csr_mountinfo_release (&mi);
  return 0;
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
      rtrim (val);
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

/* ---------------------------------------------------------------- pids */

struct pidset
{
  pid_t *v;
  size_t n, cap;
};

static int
pidset_add (struct pidset *s, pid_t pid, csr_error **err)
{
  if (s->n == s->cap)
    {
      size_t ncap = s->cap ? s->cap * 2 : 16;
      pid_t *nv = realloc (s->v, ncap * sizeof *nv);
      if (nv == NULL)
        return csr_error_errno (err, "cgroup: pids");
      s->v = nv;
      s->cap = ncap;
    }
  s->v[s->n++] = pid;
  return 0;
}

static int
cmp_pid (const void *a, const void *b)
{
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return (x > y) - (x < y);
}

static void
pidset_sort (struct pidset *s)
{
  if (s->n == 0)
    return;
  qsort (s->v, s->n, sizeof *s->v, cmp_pid);
  size_t o = 1;
  for (size_t i = 1; i < s->n; i++)
    if (s->v[i] != s->v[o - 1])
      s->v[o++] = s->v[i];
  s->n = o;
}

static bool
pidset_has (const struct pidset *s, pid_t pid)
{
  return s->n > 0 && bsearch (&pid, s->v, s->n, sizeof *s->v, cmp_pid) != NULL;
}

/* Add the pids of DIR's cgroup.procs and of every cgroup below it.  A
 * missing directory or file holds nothing. */
static int
collect (const char *dir, int depth, struct pidset *s, csr_error **err)
{
  cleanup_free char *procs = NULL;
  int r = csr_cg_path_read (dir, "cgroup.procs", &procs, err);
  if (r < 0)
    return -1;
  if (r == 0)
    {
      char *p = procs;
      while (*p)
        {
          char *end;
          errno = 0;
          long v = strtol (p, &end, 10);
          if (end == p || errno || v <= 0 || v > INT32_MAX
              || (*end && !isspace ((unsigned char)*end)))
            return csr_error_set (err, EINVAL, "cgroup: %s/cgroup.procs: unexpected content", dir);
          if (pidset_add (s, (pid_t)v, err) < 0)
            return -1;
          p = end;
          while (*p && isspace ((unsigned char)*p))
            p++;
        }
    }
  if (depth >= CG_MAX_DEPTH)
    return 0;
  cleanup_dir DIR *d = opendir (dir);
  if (d == NULL)
    return errno == ENOENT || errno == ENOTDIR ? 0 : csr_error_errno (err, "cgroup: %s", dir);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      bool isdir = de->d_type == DT_DIR;
      if (de->d_type == DT_UNKNOWN)
        {
          struct stat st;
          isdir = fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
                  && S_ISDIR (st.st_mode);
        }
      if (!isdir)
        continue;
      cleanup_free char *sub = NULL;
      if (asprintf (&sub, "%s/%s", dir, de->d_name) < 0)
        return csr_error_errno (err, "cgroup: %s", dir);
      if (collect (sub, depth + 1, s, err) < 0)
        return -1;
    }
  return 0;
}

/* The pids in the cgroups DIRS[0..N) (and below), sorted, unique. */
static int
collect_all (const char *const *dirs, size_t n, struct pidset *s, csr_error **err)
{
  s->n = 0;
  for (size_t i = 0; i < n; i++)
    if (collect (dirs[i], 0, s, err) < 0)
      return -1;
  pidset_sort (s);
  return 0;
}

/* The directories of CG: its v1 ones, and its v2 one (alone on a v2 host,
 * the unified placement on a hybrid one). */
static size_t
dirs_of (const struct csr_cgroup *cg, const char **dirs)
{
  size_t n = 0;
  for (size_t i = 0; i < cg->n_v1 && i < CSR_CG_MAX_DIRS; i++)
    if (cg->v1[i])
      dirs[n++] = cg->v1[i];
  if (cg->v2 && n < CSR_CG_MAX_DIRS)
    dirs[n++] = cg->v2;
  return n;
}

/* A reused (pre-existing) leaf that holds processes: they become the
 * container's (and its delete kills them).  runc warns and goes on ("cgroup
 * is not empty"); so does csrun. */
static int
warn_if_populated (const char *dir, csr_error **err)
{
  struct pidset s = { 0 };
  int r = collect_all (&dir, 1, &s, err);
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

/* A frozen cgroup (itself or through an ancestor) would freeze the container
 * as soon as it joins: its set-up would hang, and a v1 task killed while
 * frozen stays in D state.  Refused, as runc refuses it ("container's cgroup
 * unexpectedly frozen"); csrun does not thaw a cgroup it did not freeze. */
static int events_frozen (const char *events);

static int
check_not_frozen (const char *dir, bool v2, csr_error **err)
{
  cleanup_free char *st = NULL;
  bool frozen = false;
  if (v2)
    {
      if (csr_cg_path_read (dir, "cgroup.freeze", &st, NULL) == 0)
        frozen = atoi (st) == 1;
      cleanup_free char *ev = NULL;
      if (!frozen && csr_cg_path_read (dir, "cgroup.events", &ev, NULL) == 0)
        frozen = events_frozen (ev) == 1;
    }
  else if (csr_cg_path_read (dir, "freezer.state", &st, NULL) == 0)
    {
      rtrim (st);
      frozen = strcmp (st, "THAWED") != 0;
    }
  if (frozen)
    return csr_error_set (err, EBUSY,
                          "container's cgroup unexpectedly frozen: %s (thaw it first: csrun "
                          "does not thaw a cgroup it did not freeze)",
                          dir);
  return 0;
}

/* ---------------------------------------------------------------- create */

int
csr_cg_container_make (const char *path, const struct csr_cgroup_resources *r, const char *roots_v2,
                       const char *const *roots_v1, struct csr_cgroup *cg,
                       struct csr_cgroup_applied *applied, csr_error **err)
{
  static const struct csr_cgroup_resources none = { 0 };
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

  struct hiers h = { 0 };
  if (roots_v2 || roots_v1)
    {
      if (roots_v2 && (h.v2 = strdup (roots_v2)) == NULL)
        return csr_error_errno (err, "cgroup");
      for (size_t i = 0; roots_v1 && roots_v1[i]; i++)
        {
          char dev[32];
          snprintf (dev, sizeof dev, "fake:%zu", i);
          add_v1 (&h, roots_v1[i], dev, true);
        }
    }
  else if (read_mountinfo (&h, err) < 0)
    {
      hiers_free (&h);
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
    if (check_not_frozen (m[i].leaf, use_v2 || (hybrid && i == nm - 1), err) < 0)
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
  memset (cg, 0, sizeof *cg);
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
  hiers_free (&h);
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
  size_t n = dirs_of (cg, dirs);
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
  size_t nd = dirs_of (cg, dirs);
  struct pidset s = { 0 };
  if (collect_all (dirs, nd > 0 ? 1 : 0, &s, err) < 0)
    {
      free (s.v);
      return -1;
    }
  *pids = s.v;
  *n = s.n;
  return 0;
}

/* ---------------------------------------------------------------- freeze */

/* "frozen N" of cgroup.events: N, or -1 without that key. */
static int
events_frozen (const char *events)
{
  const char *p = events;
  while (p && *p)
    {
      if (strncmp (p, "frozen ", 7) == 0)
        return atoi (p + 7);
      p = strchr (p, '\n');
      if (p)
        p++;
    }
  return -1;
}

static int
freeze_v2 (const char *dir, bool freeze, csr_error **err)
{
  int rc = csr_cg_path_write (dir, "cgroup.freeze", freeze ? "1" : "0", err);
  if (rc < 0)
    return -1;
  if (rc > 0)
    return csr_error_set (err, ENOTSUP, "cgroup: %s has no cgroup.freeze", dir);
  long long deadline = now_ms () + CG_TIMEOUT_MS;
  long delay = 1;
  for (;;)
    {
      cleanup_free char *ev = NULL;
      rc = csr_cg_path_read (dir, "cgroup.events", &ev, err);
      if (rc < 0)
        return -1;
      int frozen = rc == 0 ? events_frozen (ev) : -1;
      if (frozen < 0 || frozen == (freeze ? 1 : 0))
        return 0;
      if (now_ms () > deadline)
        break;
      sleep_ms (delay);
      delay = delay < 50 ? delay * 2 : 50;
    }
  if (freeze)
    csr_cg_path_write (dir, "cgroup.freeze", "0", NULL);
  return csr_error_set (err, ETIMEDOUT, "cgroup: %s did not %s", dir, freeze ? "freeze" : "thaw");
}

static int
freeze_v1 (const char *dir, bool freeze, csr_error **err)
{
  const char *want = freeze ? "FROZEN" : "THAWED";
  long long deadline = now_ms () + CG_TIMEOUT_MS;
  long delay = 1;
  for (;;)
    {
      /* Writing FROZEN again retries tasks that were not frozen yet (the
       * state reads FREEZING meanwhile). */
      if (csr_cg_path_write (dir, "freezer.state", want, err) != 0)
        return csr_error_set (err, ENOENT, "cgroup: %s/freezer.state is missing", dir);
      cleanup_free char *st = NULL;
      if (csr_cg_path_read (dir, "freezer.state", &st, err) != 0)
        return csr_error_set (err, ENOENT, "cgroup: %s/freezer.state is missing", dir);
      rtrim (st);
      if (strcmp (st, want) == 0)
        return 0;
      if (now_ms () > deadline)
        break;
      sleep_ms (delay);
      delay = delay < 50 ? delay * 2 : 50;
    }
  if (freeze)
    csr_cg_path_write (dir, "freezer.state", "THAWED", NULL);
  return csr_error_set (err, ETIMEDOUT, "cgroup: %s did not %s", dir, freeze ? "freeze" : "thaw");
}

int
csr_cgroup_freeze (const struct csr_cgroup *cg, bool freeze, csr_error **err)
{
  /* Hybrid: the v1 freezer (as runc); the unified cgroup.freeze only
   * without one. */
  for (size_t i = 0; i < cg->n_v1 && i < CSR_CG_MAX_DIRS; i++)
    if (cg->v1[i] && csr_cg_path_exists (cg->v1[i], "freezer.state"))
      return freeze_v1 (cg->v1[i], freeze, err);
  if (cg->v2)
    return freeze_v2 (cg->v2, freeze, err);
  return csr_error_set (err, ENOTSUP, "cgroup: no freezer");
}

/* ---------------------------------------------------------------- destroy */

/* SIGKILL the processes of DIRS (and below), until none is left or the
 * deadline.  A pid is signalled through a pidfd opened between two reads of
 * the cgroup that both list it: a pid reused by a process outside the
 * cgroup is never hit. */
static int
kill_all (const char *const *dirs, size_t n, bool signal, csr_error **err)
{
  struct pidset a = { 0 }, b = { 0 };
  int *fds = NULL;
  int ret = -1;
  long long deadline = now_ms () + CG_TIMEOUT_MS;
  long delay = 1;
  for (;;)
    {
      if (collect_all (dirs, n, &a, err) < 0)
        goto out;
      if (a.n == 0)
        {
          ret = 0;
          goto out;
        }
      if (pidset_has (&a, getpid ()))
        {
          csr_error_set (err, EBUSY, "cgroup: %s holds the calling process", dirs[0]);
          goto out;
        }
      if (signal)
        {
          free (fds);
          fds = malloc (a.n * sizeof *fds);
          if (fds == NULL)
            {
              csr_error_errno (err, "cgroup: kill");
              goto out;
            }
          for (size_t i = 0; i < a.n; i++)
            {
              fds[i] = csr_pidfd_open (a.v[i]);
              if (fds[i] < 0 && errno != ENOSYS)
                fds[i] = -2; /* gone already */
            }
          if (collect_all (dirs, n, &b, err) < 0)
            {
              for (size_t i = 0; i < a.n; i++)
                if (fds[i] >= 0)
                  close (fds[i]);
              goto out;
            }
          for (size_t i = 0; i < a.n; i++)
            {
              if (fds[i] != -2 && pidset_has (&b, a.v[i]))
                {
                  if (fds[i] >= 0)
                    csr_pidfd_send_signal (fds[i], SIGKILL);
                  else
                    kill (a.v[i], SIGKILL); /* no pidfds: as good as it gets */
                }
              if (fds[i] >= 0)
                close (fds[i]);
            }
        }
      if (now_ms () > deadline)
        {
          csr_error_set (err, ETIMEDOUT, "cgroup: %zu processes left in %s after %d ms", a.n,
                         dirs[0], CG_TIMEOUT_MS);
          goto out;
        }
      sleep_ms (delay);
      delay = delay < 20 ? delay * 2 : 20;
    }
out:
  free (fds);
  free (a.v);
  free (b.v);
  return ret;
}

/* rmdir DIR after the cgroups below it (a container may make its own). */
static int
rmdir_tree (const char *dir, int depth, csr_error **err)
{
  int ret = 0;
  if (depth < CG_MAX_DEPTH)
    {
      cleanup_dir DIR *d = opendir (dir);
      if (d == NULL)
        {
          if (errno == ENOENT)
            return 0;
          return csr_error_errno (err, "cgroup: %s", dir);
        }
      struct dirent *de;
      while ((de = readdir (d)) != NULL)
        {
          if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
            continue;
          bool isdir = de->d_type == DT_DIR;
          if (de->d_type == DT_UNKNOWN)
            {
              struct stat st;
              isdir = fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
                      && S_ISDIR (st.st_mode);
            }
          if (!isdir)
            continue;
          cleanup_free char *sub = NULL;
          if (asprintf (&sub, "%s/%s", dir, de->d_name) < 0)
            return csr_error_errno (err, "cgroup: %s", dir);
          if (rmdir_tree (sub, depth + 1, err) < 0)
            ret = -1;
        }
    }
  long long deadline = now_ms () + CG_RMDIR_TIMEOUT_MS;
  while (rmdir (dir) < 0)
    {
      if (errno == ENOENT)
        break;
      if (errno != EBUSY || now_ms () > deadline)
        return csr_error_errno (err, "cgroup: rmdir '%s'", dir);
      sleep_ms (10);
    }
  return ret;
}

int
csr_cgroup_delete (const struct csr_cgroup *cg, csr_error **err)
{
  const char *dirs[CSR_CG_MAX_DIRS];
  size_t n = dirs_of (cg, dirs);
  if (n == 0)
    return 0;
  csr_error *e = NULL;
  if (csr_cgroup_freeze (cg, false, &e) < 0)
    {
      if (e && e->status != ENOTSUP && e->status != ENOENT)
        csr_debug ("cgroup: thaw: %s", csr_error_text (e));
      csr_error_free (e);
    }
  int ret = 0;
  bool signal = true;
  if (cg->v2)
    {
      e = NULL;
      int rc = csr_cg_path_write (cg->v2, "cgroup.kill", "1", &e);
      if (rc == 0)
        signal = false;
      else if (rc < 0)
        {
          csr_debug ("cgroup: %s", csr_error_text (e));
          csr_error_free (e);
        }
    }
  if (kill_all (dirs, n, signal, err) < 0)
    ret = -1;
  for (size_t i = 0; i < n; i++)
    if (rmdir_tree (dirs[i], 0, err) < 0)
      ret = -1;
  return ret;
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
