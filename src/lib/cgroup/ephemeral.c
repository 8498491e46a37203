/* csrun — cgroups: the common part (naming, discovery of the hierarchies,
 * choosing a backend, killing and removing, stale clean-up).  The backends
 * (cgroup-v2.c, cgroup-v1.c) only know how to create a cgroup, set limits,
 * move a process in and read statistics.
 *
 * Safety rules kept here: csrun only creates, kills in and removes
 * directories named csrun-<pid>-<n> directly under its own directories
 * (<cgroup2 parent>/csrun.slice, <v1 mount>/csrun) and whatever is below them;
 * removal is rmdir only (never unlink, never through a symlink); signals go
 * only to processes listed in those cgroups' cgroup.procs (through a pidfd
 * opened before the list is read again, so a recycled pid is never hit). */
#include "config.h"
#include "cgroup.h"
#include "cgroup-internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
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
#include "mountinfo.h"

/* How long destroy waits for the processes of a cgroup to go. */
#define DRAIN_NS (2 * 1000000000LL)
/* Nested cgroups the jail might have made below its own: how deep we follow. */
#define MAX_DEPTH 8

const char *
csr_cgroup_mechanism_name (enum csr_cgroup_mechanism m)
{
  switch (m)
    {
    case CSR_CG_V2:
      return "cgroup-v2";
    case CSR_CG_V1:
      return "cgroup-v1";
    case CSR_CG_NONE:
    default:
      return "none";
    }
}

/* ------------------------------------------------------------ test seams */

static const struct csr_cgroup_test_hooks *test_hooks;

void
csr_cgroup_set_test_hooks (const struct csr_cgroup_test_hooks *hooks)
{
  test_hooks = hooks;
}

int
csr_cg_mkdirat (int dfd, const char *name, mode_t mode)
{
  if (test_hooks && test_hooks->mkdirat)
    return test_hooks->mkdirat (dfd, name, mode);
  return mkdirat (dfd, name, mode);
}

int
csr_cg_rmdirat (int dfd, const char *name)
{
  if (test_hooks && test_hooks->rmdirat)
    return test_hooks->rmdirat (dfd, name);
  /* unlinkat does not follow a symlink: it fails with ENOTDIR on one. */
  return unlinkat (dfd, name, AT_REMOVEDIR);
}

/* ------------------------------------------------------------ names */

static unsigned long name_counter;

int
csr_cg_name_format (char *buf, size_t size, pid_t pid, unsigned long n)
{
  int r = snprintf (buf, size, "csrun-%ld-%lu", (long)pid, n);
  return r < 0 || (size_t)r >= size ? -1 : r;
}

/* Digits without a leading zero (a lone "0" only when ZERO_OK), up to MAX. */
static const char *
parse_number (const char *p, unsigned long max, bool zero_ok, unsigned long *out)
{
  if (!isdigit ((unsigned char)*p))
    return NULL;
  if (*p == '0' && (!zero_ok || isdigit ((unsigned char)p[1])))
    return NULL;
  unsigned long v = 0;
  for (; isdigit ((unsigned char)*p); p++)
    {
      unsigned d = (unsigned)(*p - '0');
      if (v > (max - d) / 10)
        return NULL;
      v = v * 10 + d;
    }
  *out = v;
  return p;
}

bool
csr_cg_name_parse (const char *name, pid_t *pid, unsigned long *n)
{
  if (strncmp (name, "csrun-", 6) != 0)
    return false;
  unsigned long p, c;
  const char *s = parse_number (name + 6, INT_MAX, false, &p);
  if (s == NULL || *s != '-')
    return false;
  s = parse_number (s + 1, ULONG_MAX, true, &c);
  if (s == NULL || *s != '\0')
    return false;
  if (pid)
    *pid = (pid_t)p;
  if (n)
    *n = c;
  return true;
}

void
csr_cg_rename (struct csr_cgroup *cg)
{
  unsigned long n = __atomic_add_fetch (&name_counter, 1, __ATOMIC_RELAXED);
  csr_cg_name_format (cg->name, sizeof cg->name, getpid (), n);
}

/* ------------------------------------------------------------ small parsers */

bool
csr_cg_word_in (const char *list, const char *word)
{
  size_t wl = strlen (word);
  const char *p = list;
  while (*p)
    {
      while (*p == ' ' || *p == '\n' || *p == '\t')
        p++;
      const char *s = p;
      while (*p && *p != ' ' && *p != '\n' && *p != '\t')
        p++;
      if ((size_t)(p - s) == wl && wl > 0 && memcmp (s, word, wl) == 0)
        return true;
    }
  return false;
}

bool
csr_cg_key_u64 (const char *text, const char *key, uint64_t *val)
{
  size_t kl = strlen (key);
  for (const char *line = text; line && *line;
       line = strchr (line, '\n'), line = line ? line + 1 : NULL)
    {
      if (strncmp (line, key, kl) != 0 || line[kl] != ' ')
        continue;
      const char *p = line + kl + 1;
      if (!isdigit ((unsigned char)*p))
        return false;
      errno = 0;
      char *end;
      unsigned long long v = strtoull (p, &end, 10);
      if (errno != 0 || (*end != '\n' && *end != '\0'))
        return false;
      *val = (uint64_t)v;
      return true;
    }
  return false;
}

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

/* ------------------------------------------------------------ kill + remove */

static long long
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
sleep_ns (long long ns)
{
  struct timespec ts
      = { .tv_sec = (time_t)(ns / 1000000000LL), .tv_nsec = (long)(ns % 1000000000LL) };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* The pids of DFD/cgroup.procs (a malloc'ed array, in the file's order), or -errno. */
static ssize_t
read_pids (int dfd, pid_t **out)
{
  *out = NULL;
  cleanup_close int fd = openat (dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return -errno;
  cleanup_free char *text = NULL;
  size_t len;
  if (csr_read_fd (fd, 64 << 20, &text, &len, NULL) < 0)
    return -EIO;
  size_t cap = 0, n = 0;
  for (const char *p = text; *p; p++)
    cap += *p == '\n';
  if (cap == 0 && len == 0)
    return 0;
  pid_t *pids = calloc (cap + 1, sizeof *pids);
  if (pids == NULL)
    return -ENOMEM;
  for (char *p = text, *end; *p; p = end)
    {
      long v = strtol (p, &end, 10);
      if (end == p)
        break;
      if (v > 0 && v <= INT_MAX && n <= cap)
        pids[n++] = (pid_t)v;
      while (*end == '\n' || *end == ' ')
        end++;
    }
  *out = pids;
  return (ssize_t)n;
}

static int
cmp_pid (const void *a, const void *b)
{
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return (x > y) - (x < y);
}

/* SIGKILL every process listed in DFD/cgroup.procs.  A pidfd is opened for
 * each pid, then the list is read again: a pid still listed after its pidfd
 * was opened names a process in this cgroup, and the pidfd pins it.  Returns
 * how many processes were listed (0: empty), or -errno. */
static ssize_t
kill_listed (int dfd)
{
  cleanup_free pid_t *first = NULL;
  ssize_t n = read_pids (dfd, &first);
  if (n <= 0)
    return n;
  cleanup_free int *fds = malloc ((size_t)n * sizeof *fds);
  if (fds == NULL)
    return -ENOMEM;
  bool no_pidfd = false;
  for (ssize_t i = 0; i < n; i++)
    {
      fds[i] = csr_pidfd_open (first[i]);
      if (fds[i] < 0 && errno == ENOSYS)
        no_pidfd = true;
    }
  cleanup_free pid_t *again = NULL;
  ssize_t m = read_pids (dfd, &again);
  if (m > 0)
    qsort (again, (size_t)m, sizeof *again, cmp_pid);
  pid_t self = getpid ();
  ssize_t listed = 0;
  for (ssize_t i = 0; i < n; i++)
    {
      if (first[i] == self)
        continue; /* never: the supervisor is not in a jail's cgroup */
      listed++;
      if (m > 0 && bsearch (&first[i], again, (size_t)m, sizeof *again, cmp_pid))
        {
          if (fds[i] >= 0)
            csr_pidfd_send_signal (fds[i], SIGKILL);
          else if (no_pidfd)
            kill (first[i], SIGKILL); /* kernel < 5.3: no pidfd, a tiny pid-reuse window */
        }
      if (fds[i] >= 0)
        close (fds[i]);
    }
  return listed;
}

/* Kill what is in the cgroup at FD until it is empty (bounded by DEADLINE).
 * Descendant cgroups are drained by remove_at's recursion. */
static int
drain (int fd, bool v2, long long deadline)
{
  bool kernel_kill = v2 && csr_cg_write (fd, "cgroup.kill", "1") == 0;
  long long step = 50000;
  for (;;)
    {
      bool empty;
      char buf[256];
      uint64_t populated;
      if (kernel_kill && csr_cg_read (fd, "cgroup.events", buf, sizeof buf) >= 0
          && csr_cg_key_u64 (buf, "populated", &populated))
        empty = populated == 0;
      else
        {
          ssize_t n = kill_listed (fd);
          if (n < 0)
            return (int)n;
          empty = n == 0;
        }
      if (empty)
        return 0;
      if (now_ns () >= deadline)
        return -EBUSY;
      sleep_ns (step);
      if (step < 2000000)
        step *= 2;
    }
}

static int remove_at (int fd, int parent_fd, const char *name, bool v2, long long deadline,
                      int depth);

/* Remove the cgroups the jail made below its own (all ours: they are inside
 * a cgroup csrun created). */
static void
remove_children (int fd, bool v2, long long deadline, int depth)
{
  int dfd = dup (fd);
  if (dfd < 0)
    return;
  cleanup_dir DIR *d = fdopendir (dfd);
  if (d == NULL)
    {
      close (dfd);
      return;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
        continue;
      int cfd = openat (fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (cfd < 0)
        continue;
      remove_at (cfd, fd, de->d_name, v2, deadline, depth + 1);
      close (cfd);
    }
}

static int
remove_at (int fd, int parent_fd, const char *name, bool v2, long long deadline, int depth)
{
  /* The kernel refuses to remove a cgroup with processes (or sub-cgroups):
   * an empty one, the usual case at the end of a run, goes at once. */
  bool drained = false, children_done = false;
  for (;;)
    {
      if (csr_cg_rmdirat (parent_fd, name) == 0 || errno == ENOENT)
        return 0;
      int r = -errno;
      if (r != -EBUSY && r != -ENOTEMPTY)
        return r;
      if (!drained)
        {
          drain (fd, v2, deadline);
          drained = true;
          continue;
        }
      /* Still busy: sub-cgroups the jail made, or processes still exiting. */
      if (!children_done && depth < MAX_DEPTH)
        {
          remove_children (fd, v2, deadline, depth);
          children_done = true;
          continue;
        }
      if (now_ns () >= deadline)
        return r;
      drain (fd, v2, deadline);
      sleep_ns (1000000);
    }
}

int
csr_cg_remove (int fd, int parent_fd, const char *name, bool v2)
{
  return remove_at (fd, parent_fd, name, v2, now_ns () + DRAIN_NS, 0);
}

int
csr_cg_dir_remove (struct csr_cg_dir *d, const char *name, bool v2)
{
  int r = 0;
  if (d->fd >= 0 && d->parent_fd >= 0)
    {
      r = csr_cg_remove (d->fd, d->parent_fd, name, v2);
      if (r < 0)
        csr_warn ("cgroup: cannot remove %s/%s: %s (left for the next start's clean-up)", d->parent,
                  name, strerror (-r));
    }
  if (d->fd >= 0)
    close (d->fd);
  if (d->parent_fd >= 0)
    close (d->parent_fd);
  d->fd = d->parent_fd = -1;
  return r;
}

/* ------------------------------------------------------------ host discovery */

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

/* ------------------------------------------------------------ public */

int
csr_cgroup_create_at (const struct csr_cgroup_roots *roots, const struct csr_cgroup_limits *limits,
                      struct csr_cgroup **out, struct csr_cgroup_enforced *enforced,
                      csr_error **err)
{
  struct csr_cgroup_enforced dummy;
  if (enforced == NULL)
    enforced = &dummy;
  memset (enforced, 0, sizeof *enforced);
  *out = NULL;
  if (limits == NULL)
    return csr_error_set (err, EINVAL, "cgroup: no limits given");
  if (limits->cpu_quota_us && limits->cpu_quota_us < 1000)
    return csr_error_set (err, EINVAL,
                          "cgroup: a cpu quota of %" PRIu64
                          " us per period is below the kernel's minimum of 1000 us",
                          limits->cpu_quota_us);
  if (roots == NULL)
    return 0;
  int r = 0;
  if (roots->v2_parent)
    r = csr_cg_v2_create (roots->v2_parent, limits, out, enforced, err);
  if (r == 0)
    r = csr_cg_v1_create (roots->v1, limits, out, enforced, err);
  if (r < 0)
    {
      memset (enforced, 0, sizeof *enforced);
      return -1;
    }
  if (*out == NULL)
    csr_debug ("cgroup: no writable cgroup hierarchy with a memory controller");
  return 0;
}

int
csr_cgroup_create (const struct csr_cgroup_limits *limits, struct csr_cgroup **out,
                   struct csr_cgroup_enforced *enforced, csr_error **err)
{
  return csr_cgroup_create_at (csr_cgroup_host_roots (), limits, out, enforced, err);
}

/* Remove the stale csrun-<pid>-<n> directories of one csrun directory. */
static void
scan_csrun_dir (const char *path, bool v2)
{
  cleanup_close int dfd = csr_cg_open_dir (path);
  if (dfd < 0)
    return; /* usually ENOENT: csrun never ran here */
  int dup_fd = dup (dfd);
  if (dup_fd < 0)
    return;
  cleanup_dir DIR *d = fdopendir (dup_fd);
  if (d == NULL)
    {
      close (dup_fd);
      return;
    }
  pid_t self = getpid ();
  uid_t euid = geteuid ();
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      pid_t pid;
      if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
        continue;
      if (!csr_cg_name_parse (de->d_name, &pid, NULL) || pid == self)
        continue;
      if (kill (pid, 0) == 0 || errno != ESRCH)
        continue; /* its csrun is alive (or not ours to judge) */
      int cfd = openat (dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (cfd < 0)
        continue; /* not a directory (or a symlink): leave it */
      struct stat st;
      if (euid != 0 && (fstat (cfd, &st) < 0 || st.st_uid != euid))
        {
          /* Another user's csrun (root's, on a host where this user can
           * read but not write the hierarchy): its own next run cleans it. */
          csr_debug ("cgroup: the stale cgroup %s/%s is not ours: left alone", path, de->d_name);
          close (cfd);
          continue;
        }
      int r = csr_cg_remove (cfd, dfd, de->d_name, v2);
      close (cfd);
      if (r == -EACCES || r == -EPERM)
        csr_debug ("cgroup: cannot remove the stale cgroup %s/%s: %s (not ours to clean)", path,
                   de->d_name, strerror (-r));
      else if (r < 0)
        csr_warn ("cgroup: cannot remove the stale cgroup %s/%s: %s", path, de->d_name,
                  strerror (-r));
      else
        csr_debug ("cgroup: removed the stale cgroup %s/%s", path, de->d_name);
    }
}

void
csr_cgroup_cleanup_stale_at (const struct csr_cgroup_roots *roots)
{
  if (roots == NULL)
    return;
  char path[PATH_MAX];
  if (roots->v2_parent
      && snprintf (path, sizeof path, "%s/" CSR_CG_V2_DIR, roots->v2_parent) < (int)sizeof path)
    scan_csrun_dir (path, true);
  for (int i = 0; i < CSR_CG_V1_N; i++)
    {
      if (roots->v1[i] == NULL)
        continue;
      bool seen = false;
      for (int j = 0; j < i; j++)
        seen = seen || (roots->v1[j] && strcmp (roots->v1[j], roots->v1[i]) == 0);
      if (!seen
          && snprintf (path, sizeof path, "%s/" CSR_CG_V1_DIR, roots->v1[i]) < (int)sizeof path)
        scan_csrun_dir (path, false);
    }
}

void
csr_cgroup_cleanup_stale (void)
{
  csr_cgroup_cleanup_stale_at (csr_cgroup_host_roots ());
}
