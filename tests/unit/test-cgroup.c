/* Unit tests for the cgroup backends: the parsers are fed strings; the
 * backends run against fake v1 and v2 trees under a temporary directory (the
 * test hooks play the kernel: they fill a new cgroup directory with its files
 * and empty it at rmdir); as root, the real hierarchies of this host are used
 * for an OOM kill, a fork bomb, a cpu quota and stale clean-up. */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup-internal.h"
#include "cgroup/cgroup.h"
#include "util/fs.h"
#include "util/syscalls.h"

#include "helpers.h"

#define MiB (1024ULL * 1024)

/* ---------------------------------------------------------------- parsers */

Test (names, format_and_parse)
{
  char buf[CSR_CG_NAME_MAX];
  cr_assert_gt (csr_cg_name_format (buf, sizeof buf, 4242, 7), 0);
  cr_assert_str_eq (buf, "csrun-4242-7");
  pid_t pid = 0;
  unsigned long n = 0;
  cr_assert (csr_cg_name_parse (buf, &pid, &n));
  cr_assert_eq (pid, 4242);
  cr_assert_eq (n, 7);
  cr_assert (csr_cg_name_parse ("csrun-1-0", &pid, &n));
  cr_assert (csr_cg_name_parse ("csrun-2147483647-18446744073709551615", &pid, &n));
  cr_assert_eq (pid, 2147483647);
  const char *bad[] = { "csrun-",
                        "csrun-1",
                        "csrun-1-",
                        "csrun-0-1",
                        "csrun-01-1",
                        "csrun-1-01",
                        "csrun-1-2x",
                        "csrun-1-2-3",
                        "csrun--1-1",
                        "csrun-+1-1",
                        "xcsrun-1-1",
                        "Csrun-1-1",
                        "csrun-1 -1",
                        "csrun.slice",
                        "csrun",
                        "..",
                        "csrun-2147483648-1",
                        "csrun-1-18446744073709551616",
                        "csrun-1-1/",
                        "" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    cr_assert_not (csr_cg_name_parse (bad[i], NULL, NULL), "'%s' must not parse", bad[i]);
  cr_assert_lt (csr_cg_name_format (buf, 8, 4242, 7), 0, "a short buffer must fail");
}

Test (names, fresh_names_are_distinct_and_ours)
{
  cr_assert_str_eq (csr_cgroup_mechanism_name (CSR_CG_V1), "cgroup-v1");
  cr_assert_str_eq (csr_cgroup_mechanism_name (CSR_CG_V2), "cgroup-v2");
  cr_assert_str_eq (csr_cgroup_mechanism_name (CSR_CG_NONE), "none");
  struct csr_cgroup *a = csr_cg_new (NULL, NULL), *b = csr_cg_new (NULL, NULL);
  cr_assert_str_neq (a->name, b->name);
  pid_t pid;
  cr_assert (csr_cg_name_parse (a->name, &pid, NULL));
  cr_assert_eq (pid, getpid ());
  csr_cg_free (a);
  csr_cg_free (b);
}

Test (parse, words_and_keys)
{
  cr_assert (csr_cg_word_in ("cpuset cpu io memory hugetlb pids rdma misc\n", "memory"));
  cr_assert (csr_cg_word_in ("cpuset cpu io memory\n", "cpu"));
  cr_assert_not (csr_cg_word_in ("cpuset io memory\n", "cpu"), "cpuset is not cpu");
  cr_assert_not (csr_cg_word_in ("hugetlb\n", "memory"));
  cr_assert_not (csr_cg_word_in ("", "memory"));
  uint64_t v = 0;
  const char *events = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 3\noom_group_kill 1\n";
  cr_assert (csr_cg_key_u64 (events, "oom_kill", &v));
  cr_assert_eq (v, 3);
  cr_assert (csr_cg_key_u64 (events, "oom", &v));
  cr_assert_eq (v, 1);
  cr_assert (csr_cg_key_u64 ("oom_kill_disable 0\nunder_oom 0\noom_kill 5", "oom_kill", &v));
  cr_assert_eq (v, 5);
  cr_assert (csr_cg_key_u64 ("usage_usec 123456\nuser_usec 1\n", "usage_usec", &v));
  cr_assert_eq (v, 123456);
  cr_assert_not (csr_cg_key_u64 ("oom_kill_disable 0\n", "oom_kill", &v));
  cr_assert_not (csr_cg_key_u64 ("oom_kill x\n", "oom_kill", &v));
  cr_assert_not (csr_cg_key_u64 ("populated 1x\n", "populated", &v));
}

Test (parse, proc_self_cgroup)
{
  const char *path;
  size_t len;
  /* This host: hybrid, with the supervisor in a v1 memory cgroup. */
  const char *hybrid = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/47d1\n1:cpu:/\n0::/\n";
  cr_assert (csr_cg_parse_proc_cgroup (hybrid, &path, &len));
  cr_assert_eq (len, 1);
  cr_assert_eq (path[0], '/');
  const char *user
      = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-foot-1.scope\n";
  cr_assert (csr_cg_parse_proc_cgroup (user, &path, &len));
  cr_assert_eq (len, strlen (user) - 4);
  cr_assert (strncmp (path, "/user.slice/", 12) == 0);
  cr_assert_not (csr_cg_parse_proc_cgroup ("4:memory:/x\n1:cpu:/\n", &path, &len));
  cr_assert_not (csr_cg_parse_proc_cgroup ("0::\n", &path, &len));
  cr_assert_not (csr_cg_parse_proc_cgroup ("", &path, &len));
  /* Without a trailing newline. */
  cr_assert (csr_cg_parse_proc_cgroup ("0::/a/b", &path, &len));
  cr_assert_eq (len, 4);
}

Test (parse, mountinfo_hybrid)
{
  const char *mi
      = "23 1 0:21 / / rw,relatime - ext4 /dev/root rw\n"
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
        "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
        "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
        "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
        "42 35 0:32 / /mnt/again rw,relatime - cgroup cgroup rw,memory\n";
  struct csr_cg_mounts m;
  cr_assert_eq (csr_cg_parse_mountinfo (mi, &m, NULL), 0);
  cr_assert_str_eq (m.v2, "/sys/fs/cgroup/unified");
  cr_assert_str_eq (m.v2_root, "/");
  cr_assert_str_eq (m.v1[CSR_CG_V1_MEMORY], "/sys/fs/cgroup/memory", "the first mount wins");
  cr_assert_str_eq (m.v1[CSR_CG_V1_PIDS], "/sys/fs/cgroup/pids");
  cr_assert_str_eq (m.v1[CSR_CG_V1_CPU], "/sys/fs/cgroup/cpu");
  cr_assert_str_eq (m.v1[CSR_CG_V1_CPUACCT], "/sys/fs/cgroup/cpuacct");
  csr_cg_mounts_clear (&m);
  cr_assert_null (m.v2);
}

Test (parse, mountinfo_comounted_escaped_and_optional_fields)
{
  const char *mi
      = "25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup "
        "rw,cpu,cpuacct\n"
        "26 24 0:23 / /sys/fs/cgroup/cpuset rw shared:10 master:3 - cgroup cgroup rw,cpuset\n"
        "27 24 0:24 /lxc/c1 /cg\\040mem rw - cgroup none rw,memory\n"
        "28 24 0:25 /user.slice /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
        "garbage line without separator\n"
        "29 24 0:26 / /x rw - cgroup\n";
  struct csr_cg_mounts m;
  cr_assert_eq (csr_cg_parse_mountinfo (mi, &m, NULL), 0);
  cr_assert_str_eq (m.v1[CSR_CG_V1_CPU], "/sys/fs/cgroup/cpu,cpuacct");
  cr_assert_str_eq (m.v1[CSR_CG_V1_CPUACCT], "/sys/fs/cgroup/cpu,cpuacct");
  cr_assert_str_eq (m.v1[CSR_CG_V1_MEMORY], "/cg mem", "\\040 is a space");
  cr_assert_null (m.v1[CSR_CG_V1_PIDS]);
  cr_assert_str_eq (m.v2, "/sys/fs/cgroup");
  cr_assert_str_eq (m.v2_root, "/user.slice");
  csr_cg_mounts_clear (&m);
  cr_assert_eq (csr_cg_parse_mountinfo ("", &m, NULL), 0);
  cr_assert_null (m.v2);
  cr_assert_null (m.v1[0]);
}

Test (parse, v2_parent)
{
  struct csr_cg_mounts m = { .v2 = (char *)"/sys/fs/cgroup", .v2_root = (char *)"/" };
  char *p = csr_cg_v2_parent (&m, NULL, 0, true);
  cr_assert_str_eq (p, "/sys/fs/cgroup", "root: the mount itself");
  free (p);
  const char *own = "/user.slice/user-1000.slice/user@1000.service/app.slice/app-x.scope";
  p = csr_cg_v2_parent (&m, own, strlen (own), false);
  cr_assert_str_eq (p, "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice");
  free (p);
  cr_assert_null (csr_cg_v2_parent (&m, "/", 1, false), "the root has no parent to use");
  cr_assert_null (csr_cg_v2_parent (&m, NULL, 0, false));
  p = csr_cg_v2_parent (&m, "/a.scope", 8, false);
  cr_assert_str_eq (p, "/sys/fs/cgroup");
  free (p);
  /* A mount of a subtree: the own path must be inside it. */
  m.v2_root = (char *)"/user.slice";
  own = "/user.slice/u/app.slice/x.scope";
  p = csr_cg_v2_parent (&m, own, strlen (own), false);
  cr_assert_str_eq (p, "/sys/fs/cgroup/u/app.slice");
  free (p);
  cr_assert_null (csr_cg_v2_parent (&m, "/system.slice/x", 15, false));
  cr_assert_null (csr_cg_v2_parent (&m, "/user.slicex/x", 14, false));
  struct csr_cg_mounts none = { 0 };
  cr_assert_null (csr_cg_v2_parent (&none, "/a/b", 4, true));
}

/* ---------------------------------------------------------------- fake trees */

static char tmp[PATH_MAX / 4];
static char v2root[PATH_MAX / 2], v1mem[PATH_MAX / 2], v1pids[PATH_MAX / 2], v1cpu[PATH_MAX / 2];
/* What the fake kernel offers. */
static const char *fake_v2_leaf_controllers = "memory pids cpu";
static bool fake_no_memsw, fake_no_cfs;
/* What cgroup.kill held when the fake kernel removed the last v2 leaf. */
static char last_kill[16];

static void
put (const char *dir, const char *file, const char *content)
{
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/%s", dir, file);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  cr_assert_geq (fd, 0, "create %s: %s", path, strerror (errno));
  cr_assert_eq (write (fd, content, strlen (content)), (ssize_t)strlen (content));
  close (fd);
}

/* DIR/FILE's content in one of a few static buffers ("" if unreadable). */
static const char *
get (const char *dir, const char *file)
{
  static char bufs[8][4096];
  static unsigned next;
  char *buf = bufs[next++ % 8];
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/%s", dir, file);
  buf[0] = '\0';
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return buf;
  ssize_t n = read (fd, buf, 4095);
  close (fd);
  buf[n > 0 ? n : 0] = '\0';
  return buf;
}

static bool
exists (const char *dir, const char *name)
{
  char path[PATH_MAX];
  struct stat st;
  fmt (path, sizeof path, "%s/%s", dir, name);
  return lstat (path, &st) == 0;
}

static void
fd_path (int dfd, char *buf, size_t size)
{
  char link[64];
  fmt (link, sizeof link, "/proc/self/fd/%d", dfd);
  ssize_t n = readlink (link, buf, size - 1);
  cr_assert_gt (n, 0);
  buf[n] = '\0';
}

static bool
under (const char *path, const char *root)
{
  size_t l = strlen (root);
  return strncmp (path, root, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

/* The fake kernel: a new cgroup directory gets the files of its hierarchy. */
static int
fake_mkdirat (int dfd, const char *name, mode_t mode)
{
  if (mkdirat (dfd, name, mode) < 0)
    return -1;
  char dir[PATH_MAX], path[PATH_MAX];
  if (name[0] == '/')
    fmt (path, sizeof path, "%s", name);
  else
    {
      fd_path (dfd, dir, sizeof dir);
      fmt (path, sizeof path, "%s/%s", dir, name);
    }
  put (path, "cgroup.procs", "");
  if (under (path, v2root))
    {
      put (path, "cgroup.controllers", fake_v2_leaf_controllers);
      put (path, "cgroup.subtree_control", "");
      put (path, "cgroup.events", "populated 0\nfrozen 0\n");
      put (path, "cgroup.kill", "");
      put (path, "cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\n");
      if (csr_cg_word_in (fake_v2_leaf_controllers, "memory"))
        {
          put (path, "memory.max", "max\n");
          put (path, "memory.swap.max", "max\n");
          put (path, "memory.oom.group", "0\n");
          put (path, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
          put (path, "memory.peak", "0\n");
        }
      if (csr_cg_word_in (fake_v2_leaf_controllers, "pids"))
        put (path, "pids.max", "max\n");
      if (csr_cg_word_in (fake_v2_leaf_controllers, "cpu"))
        put (path, "cpu.max", "max 100000\n");
    }
  else if (under (path, v1mem))
    {
      put (path, "memory.limit_in_bytes", "9223372036854771712\n");
      if (!fake_no_memsw)
        put (path, "memory.memsw.limit_in_bytes", "9223372036854771712\n");
      put (path, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
      put (path, "memory.max_usage_in_bytes", "0\n");
    }
  else if (under (path, v1pids))
    put (path, "pids.max", "max\n");
  else if (under (path, v1cpu))
    {
      if (!fake_no_cfs)
        {
          put (path, "cpu.cfs_period_us", "100000\n");
          put (path, "cpu.cfs_quota_us", "-1\n");
        }
      put (path, "cpuacct.usage", "0\n");
    }
  return 0;
}

/* Is PID a live process (not gone, not a zombie)? */
static bool
alive (long pid)
{
  char path[64], buf[512];
  fmt (path, sizeof path, "/proc/%ld/stat", pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  const char *p = strrchr (buf, ')');
  return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* The fake kernel's rmdir: only a directory (never through a symlink), busy
 * while a live process is listed in it or it has sub-cgroups; its control
 * files go with it.  cgroup.kill takes effect here. */
static int
fake_rmdirat (int dfd, const char *name)
{
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return -1;
  if (!S_ISDIR (st.st_mode))
    {
      errno = ENOTDIR;
      return -1;
    }
  int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  char buf[4096];
  bool kill_all = false;
  if (csr_cg_read (fd, "cgroup.kill", buf, sizeof buf) >= 0)
    {
      fmt (last_kill, sizeof last_kill, "%s", buf);
      kill_all = strcmp (buf, "1") == 0;
    }
  bool busy = false;
  if (csr_cg_read (fd, "cgroup.procs", buf, sizeof buf) > 0)
    for (char *p = buf, *end; *p; p = end)
      {
        long pid = strtol (p, &end, 10);
        if (end == p)
          break;
        if (kill_all)
          kill ((pid_t)pid, SIGKILL); /* only the test's own sleepers are listed */
        busy = busy || alive (pid);
      }
  DIR *d = fdopendir (fd);
  struct dirent *de;
  while (!busy && (de = readdir (d)) != NULL)
    if (de->d_type == DT_DIR && strcmp (de->d_name, ".") && strcmp (de->d_name, ".."))
      busy = true;
  if (busy)
    {
      closedir (d);
      errno = EBUSY;
      return -1;
    }
  rewinddir (d);
  while ((de = readdir (d)) != NULL)
    if (de->d_type == DT_REG)
      unlinkat (fd, de->d_name, 0);
  closedir (d);
  return unlinkat (dfd, name, AT_REMOVEDIR);
}

static const struct csr_cgroup_test_hooks fake_hooks = { fake_mkdirat, fake_rmdirat };

static void
fake_setup (void)
{
  fmt (tmp, sizeof tmp, "%s/csrun-test-cgroup.XXXXXX",
       getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
  cr_assert_not_null (mkdtemp (tmp));
  char real[PATH_MAX];
  cr_assert_not_null (realpath (tmp, real)); /* /proc/self/fd links are canonical */
  fmt (tmp, sizeof tmp, "%s", real);
  fmt (v2root, sizeof v2root, "%s/v2", tmp);
  fmt (v1mem, sizeof v1mem, "%s/memory", tmp);
  fmt (v1pids, sizeof v1pids, "%s/pids", tmp);
  fmt (v1cpu, sizeof v1cpu, "%s/cpu,cpuacct", tmp);
  const char *dirs[] = { v2root, v1mem, v1pids, v1cpu };
  for (size_t i = 0; i < 4; i++)
    cr_assert_eq (mkdir (dirs[i], 0755), 0);
  put (v2root, "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
  put (v2root, "cgroup.subtree_control", "");
  put (v2root, "cgroup.procs", "");
  fake_v2_leaf_controllers = "memory pids cpu";
  fake_no_memsw = fake_no_cfs = false;
  last_kill[0] = '\0';
  csr_cgroup_set_test_hooks (&fake_hooks);
}

static void
fake_teardown (void)
{
  csr_cgroup_set_test_hooks (NULL);
  csr_error *err = NULL;
  if (tmp[0] && csr_rm_rf (tmp, &err) < 0)
    cr_log_warn ("cleanup: %s", csr_error_text (err));
  csr_error_free (err);
}

TestSuite (fake, .init = fake_setup, .fini = fake_teardown);

static struct csr_cgroup_roots
v1_roots (void)
{
  struct csr_cgroup_roots r = { NULL, { v1mem, v1pids, v1cpu, v1cpu } };
  return r;
}

static const struct csr_cgroup_limits limits
    = { .memory = 64 * MiB, .pids = 16, .cpu_quota_us = 50000, .cpu_period_us = 100000 };

/* A child that sleeps until killed: a real pid to move around. */
static pid_t
sleeper (void)
{
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL); /* never outlive a failed test */
      for (;;)
        pause ();
    }
  return pid;
}

static void
reap (pid_t pid)
{
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
}

Test (fake, v1_limits_enter_stats_destroy)
{
  struct csr_cgroup_roots roots = v1_roots ();
  struct csr_cgroup *cg = NULL;
  struct csr_cgroup_enforced enf;
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_create_at (&roots, &limits, &cg, &enf, &err), 0, "%s",
                err ? csr_error_text (err) : "");
  cr_assert_not_null (cg);
  cr_assert_eq (csr_cgroup_mechanism (cg), CSR_CG_V1);
  cr_assert (enf.memory && enf.pids && enf.cpu);
  cr_assert (csr_cgroup_swap_limited (cg));
  char dir[PATH_MAX];
  fmt (dir, sizeof dir, "%s/csrun/%s", v1mem, cg->name);
  cr_assert_str_eq (get (dir, "memory.limit_in_bytes"), "67108864");
  cr_assert_str_eq (get (dir, "memory.memsw.limit_in_bytes"), "67108864");
  cr_assert_str_eq (get (dir, "memory.oom_control"),
                    "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", "the OOM killer stays on");
  fmt (dir, sizeof dir, "%s/csrun/%s", v1pids, cg->name);
  cr_assert_str_eq (get (dir, "pids.max"), "16");
  fmt (dir, sizeof dir, "%s/csrun/%s", v1cpu, cg->name);
  cr_assert_str_eq (get (dir, "cpu.cfs_quota_us"), "50000");
  cr_assert_str_eq (get (dir, "cpu.cfs_period_us"), "100000");
  cr_assert_eq (cg->n_dirs, 3, "cpu and cpuacct are co-mounted: one directory");

  pid_t child = sleeper ();
  cr_assert_eq (csr_cgroup_enter (cg, child, &err), 0);
  char want[24];
  fmt (want, sizeof want, "%d", (int)child);
  const char *all[] = { v1mem, v1pids, v1cpu };
  for (size_t i = 0; i < 3; i++)
    {
      fmt (dir, sizeof dir, "%s/csrun/%s", all[i], cg->name);
      cr_assert_str_eq (get (dir, "cgroup.procs"), want);
      put (dir, "cgroup.procs", ""); /* the fake kernel: it "left" */
    }
  reap (child);

  fmt (dir, sizeof dir, "%s/csrun/%s", v1mem, cg->name);
  put (dir, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  put (dir, "memory.max_usage_in_bytes", "1234567\n");
  fmt (dir, sizeof dir, "%s/csrun/%s", v1cpu, cg->name);
  put (dir, "cpuacct.usage", "5000000123\n");
  struct csr_cgroup_stats st;
  cr_assert_eq (csr_cgroup_stats (cg, &st, &err), 0);
  cr_assert (st.oom_killed);
  cr_assert_eq (st.memory_peak, 1234567);
  cr_assert_eq (st.cpu_usec, 5000000);

  char name[CSR_CG_NAME_MAX];
  fmt (name, sizeof name, "%s", cg->name);
  csr_cgroup_destroy (cg);
  for (size_t i = 0; i < 3; i++)
    {
      fmt (dir, sizeof dir, "%s/csrun", all[i]);
      cr_assert_not (exists (dir, name), "%s/%s must be gone", dir, name);
      cr_assert (exists (dir, "."), "csrun/ itself stays (shared by concurrent runs)");
    }
}

Test (fake, v1_missing_controllers_are_reported)
{
  fake_no_memsw = true; /* no swap accounting */
  fake_no_cfs = true;   /* no CONFIG_CFS_BANDWIDTH */
  struct csr_cgroup_roots roots = { NULL, { v1mem, NULL, v1cpu, v1cpu } };
  struct csr_cgroup *cg = NULL;
  struct csr_cgroup_enforced enf = { true, true, true };
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_create_at (&roots, &limits, &cg, &enf, &err), 0);
  cr_assert_not_null (cg);
  cr_assert (enf.memory);
  cr_assert_not (enf.pids, "no pids hierarchy: not enforced");
  cr_assert_not (enf.cpu, "no cfs files: not enforced");
  cr_assert_not (csr_cgroup_swap_limited (cg));
  csr_cgroup_destroy (cg);

  /* Limits not asked for are not claimed. */
  struct csr_cgroup_limits none = { 0 };
  roots = v1_roots ();
  fake_no_cfs = false;
  cr_assert_eq (csr_cgroup_create_at (&roots, &none, &cg, &enf, &err), 0);
  cr_assert_not_null (cg);
  cr_assert_not (enf.memory || enf.pids || enf.cpu);
  csr_cgroup_destroy (cg);
}

Test (fake, v1_without_memory_hierarchy_gives_none)
{
  struct csr_cgroup_roots roots = { NULL, { NULL, v1pids, v1cpu, v1cpu } };
  struct csr_cgroup *cg = (struct csr_cgroup *)1;
  struct csr_cgroup_enforced enf = { true, true, true };
  cr_assert_eq (csr_cgroup_create_at (&roots, &limits, &cg, &enf, NULL), 0);
  cr_assert_null (cg);
  cr_assert_not (enf.memory || enf.pids || enf.cpu);
  cr_assert_not (exists (v1pids, "csrun"), "nothing is created in the other hierarchies");
}

Test (fake, v1_unwritable_gives_none)
{
  /* As root, check it as nobody (root writes a mode 0555 directory anyway). */
  bool as_root = geteuid () == 0;
  chmod (tmp, 0755);
  chmod (v1mem, 0555);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      if (as_root
          && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
              || setresuid (65534, 65534, 65534) < 0))
        _exit (10);
      struct csr_cgroup_roots roots = v1_roots ();
      struct csr_cgroup *cg = (struct csr_cgroup *)1;
      struct csr_cgroup_enforced enf = { true, true, true };
      if (csr_cgroup_create_at (&roots, &limits, &cg, &enf, NULL) != 0)
        _exit (11);
      if (cg != NULL)
        _exit (12);
      if (enf.memory || enf.pids || enf.cpu)
        _exit (13);
      _exit (0);
    }
  int status;
  cr_assert_eq (waitpid (pid, &status, 0), pid);
  chmod (v1mem, 0755);
  cr_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0, "status %#x", status);
  cr_assert_not (exists (v1mem, "csrun"));
  cr_assert_not (exists (v1pids, "csrun"), "nothing is created in the other hierarchies");
}

Test (fake, v1_name_taken_picks_the_next)
{
  /* A leftover with the name we would take next, in the pids hierarchy only. */
  struct csr_cgroup *probe = csr_cg_new (NULL, NULL);
  pid_t pid;
  unsigned long n;
  cr_assert (csr_cg_name_parse (probe->name, &pid, &n));
  csr_cg_free (probe);
  char leftover[PATH_MAX];
  fmt (leftover, sizeof leftover, "%s/csrun", v1pids);
  cr_assert_eq (mkdir (leftover, 0755), 0);
  fmt (leftover, sizeof leftover, "%s/csrun/csrun-%d-%lu", v1pids, (int)pid, n + 1);
  cr_assert_eq (mkdir (leftover, 0755), 0);
  struct csr_cgroup_roots roots = v1_roots ();
  struct csr_cgroup *cg = NULL;
  struct csr_cgroup_enforced enf;
  cr_assert_eq (csr_cgroup_create_at (&roots, &limits, &cg, &enf, NULL), 0);
  cr_assert_not_null (cg);
  cr_assert (enf.pids);
  char name[CSR_CG_NAME_MAX];
  csr_cg_name_format (name, sizeof name, pid, n + 1);
  cr_assert_str_neq (cg->name, name);
  char dir[PATH_MAX];
  fmt (dir, sizeof dir, "%s/csrun", v1mem);
  cr_assert_not (exists (dir, name), "the half-made first try was removed");
  csr_cgroup_destroy (cg);
  cr_assert (exists (leftover, "."), "a directory that is not ours is left alone");
}

Test (fake, v2_limits_enter_stats_destroy)
{
  struct csr_cgroup_roots roots = { v2root, { NULL } };
  struct csr_cgroup *cg = NULL;
  struct csr_cgroup_enforced enf;
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_create_at (&roots, &limits, &cg, &enf, &err), 0, "%s",
                err ? csr_error_text (err) : "");
  cr_assert_not_null (cg);
  cr_assert_eq (csr_cgroup_mechanism (cg), CSR_CG_V2);
  cr_assert (enf.memory && enf.pids && enf.cpu);
  cr_assert (csr_cgroup_swap_limited (cg));
  const char *sc = get (v2root, "cgroup.subtree_control");
  cr_assert (strstr (sc, "+memory") && strstr (sc, "+pids") && strstr (sc, "+cpu"), "%s", sc);
  cr_assert_null (strstr (sc, "cpuset"), "only what csrun needs is enabled");
  char slice[PATH_MAX], dir[PATH_MAX];
  fmt (slice, sizeof slice, "%s/csrun.slice", v2root);
  sc = get (slice, "cgroup.subtree_control");
  cr_assert (strstr (sc, "+memory") && strstr (sc, "+pids") && strstr (sc, "+cpu"), "%s", sc);
  fmt (dir, sizeof dir, "%s/%s", slice, cg->name);
  cr_assert_str_eq (get (dir, "memory.max"), "67108864");
  cr_assert_str_eq (get (dir, "memory.swap.max"), "0");
  cr_assert_str_eq (get (dir, "memory.oom.group"), "1");
  cr_assert_str_eq (get (dir, "pids.max"), "16");
  cr_assert_str_eq (get (dir, "cpu.max"), "50000 100000");

  pid_t child = sleeper ();
  cr_assert_eq (csr_cgroup_enter (cg, child, &err), 0);
  char want[24];
  fmt (want, sizeof want, "%d", (int)child);
  cr_assert_str_eq (get (dir, "cgroup.procs"), want);

  put (dir, "memory.events", "low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\noom_group_kill 1\n");
  put (dir, "memory.peak", "67100000\n");
  put (dir, "cpu.stat", "usage_usec 4321\nuser_usec 4000\nsystem_usec 321\n");
  struct csr_cgroup_stats st;
  cr_assert_eq (csr_cgroup_stats (cg, &st, &err), 0);
  cr_assert (st.oom_killed);
  cr_assert_eq (st.memory_peak, 67100000);
  cr_assert_eq (st.cpu_usec, 4321);

  char name[CSR_CG_NAME_MAX];
  fmt (name, sizeof name, "%s", cg->name);
  csr_cgroup_destroy (cg); /* the child is still listed: cgroup.kill */
  cr_assert_str_eq (last_kill, "1", "destroy writes cgroup.kill");
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  cr_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  cr_assert_not (exists (slice, name));
  cr_assert (exists (slice, "."), "csrun.slice stays");

  /* A second cgroup reuses csrun.slice as it is. */
  cr_assert_eq (csr_cgroup_create_at (&roots, &limits, &cg, &enf, &err), 0);
  cr_assert_eq (csr_cgroup_mechanism (cg), CSR_CG_V2);
  csr_cgroup_destroy (cg);
}

Test (fake, v2_without_memory_falls_back_to_v1)
{
  /* This host: the unified hierarchy has no memory controller. */
  put (v2root, "cgroup.controllers", "hugetlb\n");
  struct csr_cgroup_roots roots = v1_roots ();
  roots.v2_parent = v2root;
  struct csr_cgroup *cg = NULL;
  struct csr_cgroup_enforced enf;
  cr_assert_eq (csr_cgroup_create_at (&roots, &limits, &cg, &enf, NULL), 0);
  cr_assert_not_null (cg);
  cr_assert_eq (csr_cgroup_mechanism (cg), CSR_CG_V1);
  cr_assert_not (exists (v2root, "csrun.slice"), "nothing is created in v2");
  cr_assert_str_eq (get (v2root, "cgroup.subtree_control"), "", "v2 is left untouched");
  csr_cgroup_destroy (cg);

  /* And with no v1 either: no cgroup, no error. */
  struct csr_cgroup_roots only_v2 = { v2root, { NULL } };
  cr_assert_eq (csr_cgroup_create_at (&only_v2, &limits, &cg, &enf, NULL), 0);
  cr_assert_null (cg);
}

Test (fake, v2_missing_controller_is_reported)
{
  fake_v2_leaf_controllers = "memory pids"; /* cpu offered above, not reaching the leaf */
  struct csr_cgroup_roots roots = { v2root, { NULL } };
  struct csr_cgroup *cg = NULL;
  struct csr_cgroup_enforced enf;
  cr_assert_eq (csr_cgroup_create_at (&roots, &limits, &cg, &enf, NULL), 0);
  cr_assert_not_null (cg);
  cr_assert (enf.memory && enf.pids);
  cr_assert_not (enf.cpu);
  csr_cgroup_destroy (cg);

  /* A leaf without memory (refused by the parent): v2 is given up, nothing left. */
  fake_v2_leaf_controllers = "pids cpu";
  cr_assert_eq (csr_cgroup_create_at (&roots, &limits, &cg, &enf, NULL), 0);
  cr_assert_null (cg);
  char slice[PATH_MAX];
  fmt (slice, sizeof slice, "%s/csrun.slice", v2root);
  DIR *d = opendir (slice);
  cr_assert_not_null (d);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    cr_assert_not (csr_cg_name_parse (de->d_name, NULL, NULL), "%s left behind", de->d_name);
  closedir (d);
}

Test (fake, bad_cpu_quota_is_an_error)
{
  struct csr_cgroup_roots roots = v1_roots ();
  struct csr_cgroup_limits l = { .memory = MiB, .cpu_quota_us = 100, .cpu_period_us = 100000 };
  struct csr_cgroup *cg = NULL;
  csr_error *err = NULL;
  cr_assert_lt (csr_cgroup_create_at (&roots, &l, &cg, NULL, &err), 0);
  cr_assert_null (cg);
  cr_assert (strstr (err->msg, "minimum"), "%s", err->msg);
  csr_error_free (err);
}

Test (fake, null_is_safe)
{
  csr_cgroup_destroy (NULL);
  struct csr_cgroup_stats st = { true, 1, 1 };
  cr_assert_eq (csr_cgroup_stats (NULL, &st, NULL), 0);
  cr_assert_not (st.oom_killed);
  cr_assert_eq (st.memory_peak, 0);
  cr_assert_eq (csr_cgroup_enter (NULL, 1, NULL), 0);
  cr_assert_eq (csr_cgroup_mechanism (NULL), CSR_CG_NONE);
  cr_assert_not (csr_cgroup_swap_limited (NULL));
  csr_cgroup_cleanup_stale_at (NULL);
}

/* The pid of a process that has just died (and was reaped). */
static pid_t
dead_pid (void)
{
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    _exit (0);
  waitpid (pid, NULL, 0);
  return pid;
}

static void
mkdir_in (const char *dir, const char *name)
{
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/%s", dir, name);
  cr_assert_eq (fake_mkdirat (AT_FDCWD, path, 0755), 0, "mkdir %s: %s", path, strerror (errno));
}

Test (fake, stale_cleanup_removes_only_dead_csrun_cgroups)
{
  pid_t dead = dead_pid ();
  pid_t alive = sleeper ();
  char csrun_dirs[2][PATH_MAX];
  fmt (csrun_dirs[0], sizeof csrun_dirs[0], "%s/csrun", v1mem);
  fmt (csrun_dirs[1], sizeof csrun_dirs[1], "%s/csrun.slice", v2root);
  char outside[PATH_MAX];
  fmt (outside, sizeof outside, "%s/outside", tmp);
  mkdir_in (tmp, "outside");
  char d1[CSR_CG_NAME_MAX], d2[CSR_CG_NAME_MAX], a1[CSR_CG_NAME_MAX], me[CSR_CG_NAME_MAX],
      file[CSR_CG_NAME_MAX], link[CSR_CG_NAME_MAX], bad[64];
  csr_cg_name_format (d1, sizeof d1, dead, 1);
  csr_cg_name_format (d2, sizeof d2, dead, 2);
  csr_cg_name_format (a1, sizeof a1, alive, 1);
  csr_cg_name_format (me, sizeof me, getpid (), 99);
  csr_cg_name_format (file, sizeof file, dead, 3);
  csr_cg_name_format (link, sizeof link, dead, 4);
  fmt (bad, sizeof bad, "csrun-%d-x", (int)dead);
  for (int i = 0; i < 2; i++)
    {
      mkdir (csrun_dirs[i], 0755);
      mkdir_in (csrun_dirs[i], d1);
      mkdir_in (csrun_dirs[i], d2);
      mkdir_in (csrun_dirs[i], a1);
      mkdir_in (csrun_dirs[i], me);
      mkdir_in (csrun_dirs[i], bad);
      mkdir_in (csrun_dirs[i], "decoy");
      put (csrun_dirs[i], file, "a decoy file\n");
      char target[PATH_MAX];
      fmt (target, sizeof target, "%s/%s", csrun_dirs[i], link);
      cr_assert_eq (symlink (outside, target), 0);
    }
  /* A nested cgroup the jail made below its own: removed with it. */
  char nested[PATH_MAX];
  fmt (nested, sizeof nested, "%s/%s", csrun_dirs[0], d2);
  mkdir_in (nested, "sub");
  /* csrun-<dead>-* directly in the hierarchy, not under csrun/: not ours. */
  mkdir_in (v1mem, d1);
  mkdir_in (v2root, d1);

  struct csr_cgroup_roots roots = v1_roots ();
  roots.v2_parent = v2root;
  csr_cgroup_cleanup_stale_at (&roots);

  for (int i = 0; i < 2; i++)
    {
      const char *c = csrun_dirs[i];
      cr_assert_not (exists (c, d1), "%s/%s: its csrun is dead", c, d1);
      cr_assert_not (exists (c, d2), "%s/%s: its csrun is dead", c, d2);
      cr_assert (exists (c, a1), "%s/%s: its csrun is alive", c, a1);
      cr_assert (exists (c, me), "our own cgroups are not stale");
      cr_assert (exists (c, bad));
      cr_assert (exists (c, "decoy"));
      cr_assert (exists (c, file), "a file is never removed");
      cr_assert (exists (c, link), "a symlink is never followed nor removed");
    }
  cr_assert (exists (outside, "."), "the symlink's target is untouched");
  cr_assert (exists (v1mem, d1));
  cr_assert (exists (v2root, d1));
  cr_assert (exists (v1pids, "."), "no csrun/ in pids: nothing to do");
  reap (alive);
}

Test (fake, stale_cleanup_leaves_other_users_cgroups_silently)
{
  /* A stale csrun-<dead>-1 this user can't remove (root's csrun was killed,
   * and this user's runs look at the same hierarchy): left alone, and no
   * warning (every run printed one per hierarchy). */
  pid_t dead = dead_pid ();
  char dir[PATH_MAX], name[CSR_CG_NAME_MAX], logf[PATH_MAX];
  fmt (dir, sizeof dir, "%s/csrun", v1mem);
  cr_assert_eq (mkdir (dir, 0755), 0);
  csr_cg_name_format (name, sizeof name, dead, 1);
  mkdir_in (dir, name);
  cr_assert_eq (chmod (dir, 0555), 0); /* not removable but by root */
  fmt (logf, sizeof logf, "%s/stderr", tmp);
  int logfd = open (logf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  cr_assert_geq (logfd, 0);
  bool root = geteuid () == 0;
  if (root)
    cr_assert_eq (chmod (tmp, 0755), 0); /* nobody walks down to the hierarchy */
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      /* As root, be another user (the cgroup is root's); else the cgroup is
       * ours but its parent is not writable. */
      if (root
          && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
              || setresuid (65534, 65534, 65534) < 0))
        _exit (3);
      if (dup2 (logfd, 2) < 0)
        _exit (4);
      struct csr_cgroup_roots roots = v1_roots ();
      csr_cgroup_cleanup_stale_at (&roots);
      _exit (0);
    }
  int status = 0;
  cr_assert_eq (waitpid (pid, &status, 0), pid);
  close (logfd);
  cr_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0, "status %d", status);
  cr_assert (exists (dir, name), "the other user's cgroup is left alone");
  cr_assert_str_eq (get (tmp, "stderr"), "", "no warning about it");
  cr_assert_eq (chmod (dir, 0755), 0);
  /* Its owner (here: us) still cleans it. */
  struct csr_cgroup_roots roots = v1_roots ();
  csr_cgroup_cleanup_stale_at (&roots);
  cr_assert_not (exists (dir, name), "%s/%s: its owner removes it", dir, name);
}

Test (fake, stale_cleanup_is_cheap_when_there_is_nothing)
{
  struct csr_cgroup_roots roots = v1_roots ();
  roots.v2_parent = v2root;
  struct timespec a, b;
  clock_gettime (CLOCK_MONOTONIC, &a);
  for (int i = 0; i < 1000; i++)
    csr_cgroup_cleanup_stale_at (&roots);
  clock_gettime (CLOCK_MONOTONIC, &b);
  double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1000 / 1000;
  cr_log_info ("cleanup_stale with nothing to do: %.1f us per call", us);
  cr_assert_lt (us, 1000.0, "cleanup_stale must cost well under a millisecond (%.1f us)", us);
}

Test (fake, destroy_kills_what_is_listed)
{
  struct csr_cgroup_roots roots = v1_roots ();
  struct csr_cgroup *cg = NULL;
  cr_assert_eq (csr_cgroup_create_at (&roots, &limits, &cg, NULL, NULL), 0);
  pid_t child = sleeper ();
  cr_assert_eq (csr_cgroup_enter (cg, child, NULL), 0);
  char dir[PATH_MAX];
  fmt (dir, sizeof dir, "%s/csrun/%s", v1pids, cg->name);
  put (dir, "cgroup.procs", "");
  fmt (dir, sizeof dir, "%s/csrun/%s", v1cpu, cg->name);
  put (dir, "cgroup.procs", "");
  /* The fake memory cgroup.procs never empties: destroy gives up after its
   * bounded wait (2 s), but the listed process must have been killed. */
  csr_cgroup_destroy (cg);
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  cr_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
}

/* ---------------------------------------------------------------- this host, any user */

Test (host, create_gives_a_cgroup_or_a_clean_fallback)
{
  const struct csr_cgroup_roots *r = csr_cgroup_host_roots ();
  cr_assert_not_null (r, "read /proc/self/mountinfo");
  csr_cgroup_cleanup_stale ();
  struct csr_cgroup *cg = NULL;
  struct csr_cgroup_enforced enf;
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_create (&limits, &cg, &enf, &err), 0, "%s",
                err ? csr_error_text (err) : "");
  cr_log_info ("%s: %s (memory %d pids %d cpu %d)", geteuid () == 0 ? "root" : "rootless",
               csr_cgroup_mechanism_name (csr_cgroup_mechanism (cg)), enf.memory, enf.pids,
               enf.cpu);
  if (cg == NULL)
    {
      cr_assert_not (enf.memory || enf.pids || enf.cpu, "nothing is claimed without a cgroup");
      cr_assert (geteuid () != 0 || (r->v1[CSR_CG_V1_MEMORY] == NULL && r->v2_parent == NULL),
                 "root with a memory hierarchy must get a cgroup");
      return;
    }
  cr_assert (enf.memory);
  csr_cgroup_destroy (cg);
}

/* ---------------------------------------------------------------- real cgroups (root) */

static const struct csr_cgroup_roots *
real_roots (void)
{
  if (geteuid () != 0)
    cr_skip_test ("n/a: real cgroups need root here: not root (on this host's hybrid cgroups only "
                  "root can write "
                  "the v1 hierarchies; rootless csrun falls back to rlimits)");
  const struct csr_cgroup_roots *r = csr_cgroup_host_roots ();
  cr_assert_not_null (r, "read /proc/self/mountinfo");
  return r;
}

/* A child that waits for the go on a pipe, then runs FN. */
static pid_t
start_child (int (*fn) (int out), int *go_fd, int *out_fd)
{
  int go[2], out[2];
  cr_assert_eq (pipe2 (go, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (out, O_CLOEXEC), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      close (go[1]);
      close (out[0]);
      char c;
      if (read (go[0], &c, 1) != 1)
        _exit (3);
      _exit (fn (out[1]));
    }
  close (go[0]);
  close (out[1]);
  *go_fd = go[1];
  *out_fd = out[0];
  return pid;
}

static int
eat_200mib (int out)
{
  (void)out;
  size_t size = 200 * MiB;
  char *p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return 4;
  for (size_t i = 0; i < size; i += 4096)
    ((volatile char *)p)[i] = 1;
  return 0; /* survived: the limit did not work */
}

static void
assert_gone (const struct csr_cgroup_roots *r, const char *name)
{
  char dir[PATH_MAX];
  if (r->v2_parent)
    {
      fmt (dir, sizeof dir, "%s/csrun.slice", r->v2_parent);
      cr_assert_not (exists (dir, name), "%s/%s is left", dir, name);
    }
  for (int i = 0; i < CSR_CG_V1_N; i++)
    if (r->v1[i])
      {
        fmt (dir, sizeof dir, "%s/csrun", r->v1[i]);
        cr_assert_not (exists (dir, name), "%s/%s is left", dir, name);
      }
}

/* Nothing named csrun-<our pid>-* in any of csrun's directories. */
static void
assert_none_of_ours (const struct csr_cgroup_roots *r)
{
  const char *dirs[CSR_CG_V1_N + 1];
  char paths[CSR_CG_V1_N + 1][PATH_MAX];
  size_t n = 0;
  if (r->v2_parent)
    fmt (paths[n], sizeof paths[n], "%s/csrun.slice", r->v2_parent), dirs[n] = paths[n], n++;
  for (int i = 0; i < CSR_CG_V1_N; i++)
    if (r->v1[i])
      fmt (paths[n], sizeof paths[n], "%s/csrun", r->v1[i]), dirs[n] = paths[n], n++;
  for (size_t i = 0; i < n; i++)
    {
      DIR *d = opendir (dirs[i]);
      if (d == NULL)
        continue;
      struct dirent *de;
      pid_t pid;
      while ((de = readdir (d)) != NULL)
        cr_assert_not (csr_cg_name_parse (de->d_name, &pid, NULL) && pid == getpid (),
                       "%s/%s is left", dirs[i], de->d_name);
      closedir (d);
    }
}

static struct csr_cgroup *
real_create (const struct csr_cgroup_roots *r, const struct csr_cgroup_limits *l,
             struct csr_cgroup_enforced *enf)
{
  struct csr_cgroup *cg = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_create_at (r, l, &cg, enf, &err), 0, "%s",
                err ? csr_error_text (err) : "");
  if (cg == NULL)
    {
      /* Root in a container without cgroup delegation (a read-only cgroupfs)
       * gets the rlimit fallback too: that is not a failure of csrun. */
      const char *m = r->v2_parent ? r->v2_parent : r->v1[CSR_CG_V1_MEMORY];
      if (m == NULL || access (m, W_OK) < 0)
        cr_skip_test ("root, but no writable cgroup hierarchy with a memory controller here "
                      "(%s: %s)",
                      m ? m : "none mounted", m ? strerror (errno) : "-");
      cr_assert_fail ("root, %s is writable, but no cgroup was created", m);
    }
  cr_log_info ("real cgroup: %s %s", csr_cgroup_mechanism_name (csr_cgroup_mechanism (cg)),
               cg->name);
  return cg;
}

Test (real, memory_limit_oom_kills_and_is_reported, .timeout = 60)
{
  const struct csr_cgroup_roots *r = real_roots ();
  struct csr_cgroup_limits l = { .memory = 64 * MiB, .pids = 16 };
  struct csr_cgroup_enforced enf;
  struct csr_cgroup *cg = real_create (r, &l, &enf);
  cr_assert (enf.memory && enf.pids);
  int go, out;
  pid_t child = start_child (eat_200mib, &go, &out);
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_enter (cg, child, &err), 0, "%s", err ? csr_error_text (err) : "");
  cr_assert_eq (write (go, "G", 1), 1);
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  cr_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL,
             "the 200 MiB child must be OOM-killed (status %#x)", status);
  struct csr_cgroup_stats st;
  cr_assert_eq (csr_cgroup_stats (cg, &st, &err), 0);
  cr_assert (st.oom_killed, "stats must report the OOM kill");
  cr_log_info ("peak %llu bytes, cpu %llu us", (unsigned long long)st.memory_peak,
               (unsigned long long)st.cpu_usec);
  cr_assert_leq (st.memory_peak, 64 * MiB);
  cr_assert_gt (st.memory_peak, 32 * MiB);
  char name[CSR_CG_NAME_MAX];
  fmt (name, sizeof name, "%s", cg->name);
  csr_cgroup_destroy (cg);
  assert_gone (r, name);
  assert_none_of_ours (r);
  close (go);
  close (out);
}

static int
fork_bomb (int out)
{
  int n = 0, e = 0;
  for (int i = 0; i < 1000; i++)
    {
      pid_t p = fork ();
      if (p == 0)
        {
          prctl (PR_SET_PDEATHSIG, SIGKILL);
          for (;;)
            pause ();
        }
      if (p < 0)
        {
          e = errno;
          break;
        }
      n++;
    }
  char buf[64];
  int len = snprintf (buf, sizeof buf, "%d %d", n, e);
  if (write (out, buf, (size_t)len) != len)
    return 5;
  for (;;)
    pause (); /* leftovers for destroy */
}

Test (real, pids_limit_stops_a_fork_bomb_and_destroy_kills_leftovers, .timeout = 60)
{
  const struct csr_cgroup_roots *r = real_roots ();
  struct csr_cgroup_limits l = { .memory = 256 * MiB, .pids = 16 };
  struct csr_cgroup_enforced enf;
  struct csr_cgroup *cg = real_create (r, &l, &enf);
  cr_assert (enf.pids);
  int go, out;
  pid_t child = start_child (fork_bomb, &go, &out);
  cr_assert_eq (csr_cgroup_enter (cg, child, NULL), 0);
  cr_assert_eq (write (go, "G", 1), 1);
  char buf[64] = "";
  ssize_t len = read (out, buf, sizeof buf - 1);
  cr_assert_gt (len, 0);
  buf[len] = '\0';
  int forks = -1, e = 0;
  cr_assert_eq (sscanf (buf, "%d %d", &forks, &e), 2);
  cr_log_info ("fork bomb: %d forks, then %s", forks, strerror (e));
  cr_assert_eq (forks, 15, "16 pids: the child and 15 more (got %d)", forks);
  cr_assert_eq (e, EAGAIN);
  char name[CSR_CG_NAME_MAX];
  fmt (name, sizeof name, "%s", cg->name);
  csr_cgroup_destroy (cg); /* 16 live processes in it */
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  cr_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  assert_gone (r, name);
  assert_none_of_ours (r);
  close (go);
  close (out);
}

static int
spin_400ms (int out)
{
  (void)out;
  struct timespec a, b;
  clock_gettime (CLOCK_MONOTONIC, &a);
  do
    clock_gettime (CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 400000000L);
  return 0;
}

Test (real, cpu_quota_throttles_and_cpu_time_is_reported, .timeout = 60)
{
  const struct csr_cgroup_roots *r = real_roots ();
  struct csr_cgroup_limits l
      = { .memory = 256 * MiB, .cpu_quota_us = 20000, .cpu_period_us = 100000 };
  struct csr_cgroup_enforced enf;
  struct csr_cgroup *cg = real_create (r, &l, &enf);
  cr_assert (enf.cpu);
  int go, out;
  pid_t child = start_child (spin_400ms, &go, &out);
  cr_assert_eq (csr_cgroup_enter (cg, child, NULL), 0);
  cr_assert_eq (write (go, "G", 1), 1);
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  cr_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  struct csr_cgroup_stats st;
  cr_assert_eq (csr_cgroup_stats (cg, &st, NULL), 0);
  cr_log_info ("0.2 cpu for 400 ms of wall clock: %llu us of cpu", (unsigned long long)st.cpu_usec);
  cr_assert_gt (st.cpu_usec, 20000);
  cr_assert_lt (st.cpu_usec, 200000, "the quota must throttle (%llu us)",
                (unsigned long long)st.cpu_usec);
  cr_assert_not (st.oom_killed);
  csr_cgroup_destroy (cg);
  assert_none_of_ours (r);
  close (go);
  close (out);
}

Test (real, stale_cleanup_removes_a_dead_runs_cgroup, .timeout = 30)
{
  const struct csr_cgroup_roots *r = real_roots ();
  /* Make csrun's directories exist, then plant a stale one and a decoy. */
  struct csr_cgroup_limits l = { .memory = 64 * MiB };
  struct csr_cgroup *cg = real_create (r, &l, NULL);
  enum csr_cgroup_mechanism mech = csr_cgroup_mechanism (cg);
  csr_cgroup_destroy (cg);
  const char *mount = mech == CSR_CG_V2 ? r->v2_parent : r->v1[CSR_CG_V1_MEMORY];
  char dir[PATH_MAX], stale[CSR_CG_NAME_MAX], decoy[64];
  fmt (dir, sizeof dir, "%s/%s", mount, mech == CSR_CG_V2 ? "csrun.slice" : "csrun");
  csr_cg_name_format (stale, sizeof stale, dead_pid (), 1);
  fmt (decoy, sizeof decoy, "decoy-%d", (int)getpid ());
  char path[PATH_MAX];
  fmt (path, sizeof path, "%s/%s", dir, stale);
  cr_assert_eq (mkdir (path, 0755), 0, "mkdir %s: %s", path, strerror (errno));
  fmt (path, sizeof path, "%s/%s", dir, decoy);
  cr_assert_eq (mkdir (path, 0755), 0, "mkdir %s: %s", path, strerror (errno));
  csr_cgroup_cleanup_stale_at (r);
  bool stale_left = exists (dir, stale), decoy_left = exists (dir, decoy);
  rmdir (path);
  fmt (path, sizeof path, "%s/%s", dir, stale);
  rmdir (path);
  cr_assert_not (stale_left, "the dead run's cgroup must be removed");
  cr_assert (decoy_left, "a directory with another name must stay");
  assert_none_of_ours (r);
}

Test (real, create_destroy_cost, .timeout = 60)
{
  const struct csr_cgroup_roots *r = real_roots ();
  struct csr_cgroup_limits l
      = { .memory = 64 * MiB, .pids = 16, .cpu_quota_us = 100000, .cpu_period_us = 100000 };
  const int runs = 50;
  double total = 0;
  for (int i = 0; i < runs; i++)
    {
      int go, out;
      pid_t child = start_child (spin_400ms, &go, &out);
      struct timespec a, b;
      clock_gettime (CLOCK_MONOTONIC, &a);
      struct csr_cgroup *cg = real_create (r, &l, NULL);
      cr_assert_eq (csr_cgroup_enter (cg, child, NULL), 0);
      clock_gettime (CLOCK_MONOTONIC, &b);
      total += (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
      kill (child, SIGKILL);
      waitpid (child, NULL, 0);
      clock_gettime (CLOCK_MONOTONIC, &a);
      csr_cgroup_destroy (cg);
      clock_gettime (CLOCK_MONOTONIC, &b);
      total += (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
      close (go);
      close (out);
    }
  cr_log_info ("create + enter + destroy: %.0f us per run", total / runs / 1000);
  assert_none_of_ours (r);
}

/* clone3(CLONE_INTO_CGROUP) against the kernel: this host's cgroup2 mount
 * has no controllers, which the backends need, so the test makes a bare
 * cgroup of its own (csrun.slice/csrun-<pid>-<n>, the names csrun owns) and
 * checks that the child starts inside it. */
Test (real, clone_into_cgroup_v2_starts_the_child_inside, .timeout = 30)
{
  if (geteuid () != 0)
    cr_skip_test ("n/a: needs root: the cgroup2 mount here is not delegated");
  FILE *mi = fopen ("/proc/self/mountinfo", "re");
  cr_assert_not_null (mi);
  char line[4096], mount[PATH_MAX] = "";
  while (mount[0] == '\0' && fgets (line, sizeof line, mi))
    {
      char mp[PATH_MAX];
      const char *dash = strstr (line, " - cgroup2 ");
      if (dash && sscanf (line, "%*s %*s %*s %*s %4095s", mp) == 1)
        fmt (mount, sizeof mount, "%s", mp);
    }
  fclose (mi);
  if (mount[0] == '\0')
    cr_skip_test ("no cgroup2 mount on this host");
  char slice[PATH_MAX], name[CSR_CG_NAME_MAX], dir[PATH_MAX];
  fmt (slice, sizeof slice, "%s/csrun.slice", mount);
  bool made_slice = mkdir (slice, 0755) == 0;
  cr_assert (made_slice || errno == EEXIST, "mkdir %s: %s", slice, strerror (errno));
  csr_cg_name_format (name, sizeof name, getpid (), 999);
  fmt (dir, sizeof dir, "%s/%s", slice, name);
  cr_assert_eq (mkdir (dir, 0755), 0, "mkdir %s: %s", dir, strerror (errno));
  int cgfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cr_assert_geq (cgfd, 0);

  int pipefd[2];
  cr_assert_eq (pipe (pipefd), 0);
  int pidfd = -1;
  pid_t pid = csr_clone_into (0, cgfd, &pidfd);
  if (pid == 0)
    {
      char c;
      close (pipefd[1]);
      _exit (read (pipefd[0], &c, 1) == 0 ? 0 : 1);
    }
  int saved = errno;
  close (pipefd[0]);
  char path[64], text[4096] = "";
  if (pid > 0)
    {
      fmt (path, sizeof path, "/proc/%d/cgroup", (int)pid);
      FILE *f = fopen (path, "re");
      if (f)
        {
          size_t n = fread (text, 1, sizeof text - 1, f);
          text[n] = '\0';
          fclose (f);
        }
    }
  close (pipefd[1]);
  int status = 0;
  if (pid > 0)
    waitpid (pid, &status, 0);
  if (pidfd >= 0)
    close (pidfd);
  close (cgfd);
  rmdir (dir);
  if (made_slice)
    rmdir (slice);
  cr_assert_gt (pid, 0, "clone3(CLONE_INTO_CGROUP): %s", strerror (saved));
  char want[PATH_MAX];
  fmt (want, sizeof want, "0::/csrun.slice/%s\n", name);
  cr_assert_not_null (strstr (text, want), "the child's cgroups:\n%s\nwant %s", text, want);
  cr_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
}
