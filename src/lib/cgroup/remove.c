#include "config.h"

/* csrun — killing what is in a cgroup and removing it: the pid lists
 * (cgroup.procs, and the cgroups below), SIGKILL through a pidfd opened
 * between two reads that both list the pid (a reused pid outside the
 * cgroup is never hit), v2 cgroup.kill, and rmdir deepest first.  Only
 * cgroups csrun made are ever passed here (its csrun-<pid>-<n> ones, or a
 * container's, with what the container made below them). */

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

#include "../util/clock.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/syscalls.h"
#include "cgroup-internal.h"
#include "mountinfo.h"

#define CG_MAX_DEPTH 32    /* nesting below a cgroup csrun made that the walkers follow */
#define CG_TIMEOUT_MS 5000 /* kill */
#define CG_RMDIR_TIMEOUT_MS 1000
/* How long an ephemeral cgroup's destroy waits for its processes to go. */
#define DRAIN_NS (2 * 1000000000LL)

/* ---------------------------------------------------------------- container pid sets */

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
cmp_pid_ (const void *a, const void *b)
{
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return (x > y) - (x < y);
}

static void
pidset_sort (struct pidset *s)
{
  if (s->n == 0)
    return;
  qsort (s->v, s->n, sizeof *s->v, cmp_pid_);
  size_t o = 1;
  for (size_t i = 1; i < s->n; i++)
    if (s->v[i] != s->v[o - 1])
      s->v[o++] = s->v[i];
  s->n = o;
}

static bool
pidset_has (const struct pidset *s, pid_t pid)
{
  return s->n > 0 && bsearch (&pid, s->v, s->n, sizeof *s->v, cmp_pid_) != NULL;
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
int
csr_cg_collect_all (const char *const *dirs, size_t n, struct pidset *s, csr_error **err)
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
size_t
csr_cg_dirs_of (const struct csr_cgroup *cg, const char **dirs)
{
  size_t n = 0;
  for (size_t i = 0; i < cg->n_v1 && i < CSR_CG_MAX_DIRS; i++)
    if (cg->v1[i])
      dirs[n++] = cg->v1[i];
  if (cg->v2 && n < CSR_CG_MAX_DIRS)
    dirs[n++] = cg->v2;
  return n;
}

/* ---------------------------------------------------------------- the kill step */

/* SIGKILL each of FIRST[N] that is still listed after a pidfd was opened
 * for it: REREAD lists the cgroup(s) again (sorted); a pid in both lists
 * names a process of the cgroup, and the pidfd pins it, so a pid reused by
 * a process outside is never hit.  Without pidfds (kernel < 5.3) kill(2),
 * a tiny pid-reuse window.  The calling process is never signalled.
 * Returns how many of FIRST are not the caller (*REREAD_RC: what REREAD
 * returned), or -ENOMEM. */
typedef ssize_t (*reread_fn) (void *ctx, pid_t **sorted);

static ssize_t
kill_confirmed (const pid_t *first, size_t n, reread_fn reread, void *ctx, ssize_t *reread_rc)
{
  cleanup_free int *fds = malloc ((n ? n : 1) * sizeof *fds);
  if (fds == NULL)
    return -ENOMEM;
  bool no_pidfd = false;
  for (size_t i = 0; i < n; i++)
    {
      fds[i] = csr_pidfd_open (first[i]);
      if (fds[i] < 0 && errno == ENOSYS)
        no_pidfd = true;
    }
  cleanup_free pid_t *again = NULL;
  ssize_t m = reread (ctx, &again);
  pid_t self = getpid ();
  ssize_t listed = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (first[i] == self)
        continue;
      listed++;
      if (m > 0 && bsearch (&first[i], again, (size_t)m, sizeof *again, cmp_pid_))
        {
          if (fds[i] >= 0)
            csr_pidfd_send_signal (fds[i], SIGKILL);
          else if (no_pidfd)
            kill (first[i], SIGKILL);
        }
      if (fds[i] >= 0)
        close (fds[i]);
    }
  *reread_rc = m;
  return listed;
}

/* ---------------------------------------------------------------- container delete */

struct dirs_ctx
{
  const char *const *dirs;
  size_t n;
  struct pidset *set;
  csr_error **err;
};

static ssize_t
reread_dirs (void *ctx, pid_t **sorted)
{
  struct dirs_ctx *c = ctx;
  if (csr_cg_collect_all (c->dirs, c->n, c->set, c->err) < 0)
    return -EIO;
  *sorted = NULL; /* the set keeps them */
  if (c->set->n == 0)
    return 0;
  *sorted = malloc (c->set->n * sizeof **sorted);
  if (*sorted == NULL)
    return -ENOMEM;
  memcpy (*sorted, c->set->v, c->set->n * sizeof **sorted);
  return (ssize_t)c->set->n;
}

/* SIGKILL the processes of DIRS (and below), until none is left or the
 * deadline (kill_confirmed for each round). */
static int
kill_all (const char *const *dirs, size_t n, bool signal, csr_error **err)
{
  struct pidset a = { 0 }, b = { 0 };
  int ret = -1;
  long long deadline = csr_mono_ms () + CG_TIMEOUT_MS;
  long delay = 1;
  for (;;)
    {
      if (csr_cg_collect_all (dirs, n, &a, err) < 0)
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
      struct dirs_ctx c = { dirs, n, &b, err };
      ssize_t m = 0;
      if (signal && (kill_confirmed (a.v, a.n, reread_dirs, &c, &m) < 0 || m < 0))
        {
          if (err && *err == NULL)
            csr_error_set (err, EIO, "cgroup: kill the processes of %s", dirs[0]);
          goto out;
        }
      if (csr_mono_ms () > deadline)
        {
          csr_error_set (err, ETIMEDOUT, "cgroup: %zu processes left in %s after %d ms", a.n,
                         dirs[0], CG_TIMEOUT_MS);
          goto out;
        }
      csr_cg_sleep_ms (delay);
      delay = delay < 20 ? delay * 2 : 20;
    }
out:
  free (a.v);
  free (b.v);
  return ret;
}

static int remove_at (int fd, int parent_fd, const char *name, bool v2, long long deadline,
                      int depth);

/* rmdir DIR after the cgroups below it (a container may make its own), by
 * the walker the ephemeral cgroups use.  A missing DIR is fine. */
static int
remove_path (const char *dir, bool v2, csr_error **err)
{
  cleanup_free char *copy = strdup (dir);
  if (copy == NULL)
    return csr_error_errno (err, "cgroup: %s", dir);
  char *slash = strrchr (copy, '/');
  if (slash == NULL || slash[1] == '\0')
    return csr_error_set (err, EINVAL, "cgroup: '%s' is not a cgroup directory", dir);
  *slash = '\0';
  const char *name = slash + 1;
  cleanup_close int pfd = open (copy[0] ? copy : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0)
    return errno == ENOENT ? 0 : csr_error_errno (err, "cgroup: %s", dir);
  cleanup_close int fd = openat (pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : csr_error_errno (err, "cgroup: %s", dir);
  int r = remove_at (fd, pfd, name, v2, csr_mono_ns () + CG_RMDIR_TIMEOUT_MS * 1000000LL, 0);
  if (r < 0)
    return csr_error_set (err, -r, "cgroup: rmdir '%s': %s", dir, strerror (-r));
  return 0;
}

int
csr_cgroup_delete (const struct csr_cgroup *cg, csr_error **err)
{
  const char *dirs[CSR_CG_MAX_DIRS];
  size_t n = csr_cg_dirs_of (cg, dirs);
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
    if (remove_path (dirs[i], cg->v2 && strcmp (dirs[i], cg->v2) == 0, err) < 0)
      ret = -1;
  return ret;
}

/* ---------------------------------------------------------------- ephemeral remove */

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

static ssize_t
reread_fd (void *ctx, pid_t **sorted)
{
  ssize_t m = read_pids (*(int *)ctx, sorted);
  if (m > 0)
    qsort (*sorted, (size_t)m, sizeof **sorted, cmp_pid_);
  return m;
}

/* SIGKILL every process listed in DFD/cgroup.procs (kill_confirmed).
 * Returns how many processes were listed (0: empty), or -errno. */
static ssize_t
kill_listed (int dfd)
{
  cleanup_free pid_t *first = NULL;
  ssize_t n = read_pids (dfd, &first);
  if (n <= 0)
    return n;
  ssize_t m;
  return kill_confirmed (first, (size_t)n, reread_fd, &dfd, &m);
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
      if (csr_mono_ns () >= deadline)
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
      if (!children_done && depth < CG_MAX_DEPTH)
        {
          remove_children (fd, v2, deadline, depth);
          children_done = true;
          continue;
        }
      if (csr_mono_ns () >= deadline)
        return r;
      drain (fd, v2, deadline);
      sleep_ns (1000000);
    }
}

int
csr_cg_remove (int fd, int parent_fd, const char *name, bool v2)
{
  return remove_at (fd, parent_fd, name, v2, csr_mono_ns () + DRAIN_NS, 0);
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
