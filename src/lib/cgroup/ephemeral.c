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

/* ------------------------------------------------------------ public */

/* The snippet limits as cgroup resources, written by the one writer
 * (resources.c): memory with memory+swap equal to it (no swap: v2
 * memory.swap.max 0, v1 memsw = memory) and the whole cgroup killed on
 * OOM; pids; cpu quota per period (100 ms when not given).  A file that is
 * missing (controller not enabled, older kernel) leaves its limit
 * unenforced; any other error is one. */
int
csr_cg_write_limits (struct csr_cgroup *cg, const struct csr_cgroup_limits *l,
                     struct csr_cgroup_enforced *enf, csr_error **err)
{
  if (l->memory > INT64_MAX || l->pids > INT64_MAX || l->cpu_quota_us > INT64_MAX)
    return csr_error_set (err, EINVAL, "cgroup: limit out of range");
  struct csr_cgroup_resources r = { 0 };
  if (l->memory)
    {
      r.memory_limit = r.memory_swap = (int64_t)l->memory;
      r.oom_group = true;
    }
  r.pids_limit = (int64_t)l->pids;
  if (l->cpu_quota_us)
    {
      r.cpu_quota = (int64_t)l->cpu_quota_us;
      r.cpu_period = l->cpu_period_us ? l->cpu_period_us : 100000;
    }
  struct csr_cgroup_applied a = { 0 };
  if (csr_cg_resources_apply (cg, &r, false, &a, err) < 0)
    return -1;
  enf->memory = a.memory;
  enf->pids = a.pids;
  enf->cpu = a.cpu;
  cg->swap_limited = a.swap;
  return 0;
}

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
