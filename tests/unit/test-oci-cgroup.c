/* Unit tests for the cgroup of an OCI container (src/lib/oci/cgroup.c).
 *
 * path:  csr_cgroup_container_path: default, absolute, relative, systemd
 *        "slice:prefix:name" (flag and syntax), malformed systemd, "..".
 *
 * fake:  fake hierarchies: plain directories in a temp dir passed as
 *        ROOTS_V2 / ROOTS_V1.  A plain mkdir makes none of the kernel's
 *        files, and cgroup.c treats a missing file as "controller not here"
 *        (the limit is simply not applied, nothing fails).  So:
 *        - directories csrun makes are checked for existence and for being
 *          removed (and only they) on errors and by destroy;
 *        - values are checked in a leaf the test makes beforehand with the
 *          kernel's files pre-created (create reuses an existing leaf that
 *          lists no process: the test's files stand in for the kernel's);
 *        - errors are provoked with a directory where a limit file should be
 *          (open fails with EISDIR) or a regular file where a level should
 *          be (ENOTDIR).
 *        Never call destroy on a fake whose cgroup.procs lists real pids: it
 *        would SIGKILL them.
 *
 * unpriv: as uid 65534 in a child (root only): unwritable hierarchies are
 *        skipped, none writable gives 0 — fakes and this host's real mounts.
 *
 * real:  this host's real cgroups (root only; v1 on this hybrid host, v2
 *        checks for a v2 host): limits, enter, pids, freeze, destroy killing
 *        the child and removing the leaf only; OOM kill; rollback on a
 *        kernel-refused limit; an existing populated leaf refused.  Each test
 *        works under /csrun-test-<test pid>, which it removes itself; .fini
 *        cleans up after a failed assertion. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup-internal.h"
#include "oci/resources.h"
#include "util/fs.h"

#include "helpers.h"

#define MiB (1024 * 1024LL)

static char tmp[PATH_MAX];

static const char *
etext (csr_error *err)
{
  return err ? csr_error_text (err) : "(no error)";
}

static void
setup (void)
{
  test_tmpdir_in (tmp, sizeof tmp, "ocicg");
}

static void
teardown (void)
{
  csr_rm_rf (tmp, NULL);
}

/* TMP/REL as a path. */
static const char *
at (const char *rel)
{
  static char bufs[8][PATH_MAX];
  static int next;
  char *b = bufs[next++ % 8];
  fmt (b, PATH_MAX, "%s/%s", tmp, rel);
  return b;
}

static void
mk (const char *rel)
{
  cr_assert_eq (csr_mkdir_p (at (rel), 0755, NULL), 0, "mkdir %s", rel);
}

static void
put (const char *rel, const char *data)
{
  FILE *f = fopen (at (rel), "w");
  cr_assert_not_null (f, "open %s: %s", rel, strerror (errno));
  cr_assert (fputs (data, f) >= 0);
  cr_assert_eq (fclose (f), 0);
}

/* The content of PATH without trailing blanks (static buffer). */
static const char *
slurp (const char *path)
{
  static char buf[8192];
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0, "open %s: %s", path, strerror (errno));
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  cr_assert_geq (n, 0);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
    n--;
  buf[n] = '\0';
  return buf;
}

static bool
is_dir (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

static bool
exists (const char *path)
{
  struct stat st;
  return lstat (path, &st) == 0;
}

/* ---------------------------------------------------------------- path */

static void
path_ok (const char *in, const char *id, bool systemd, const char *want)
{
  char *out = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_container_path (in, id, systemd, &out, &err), 0, "'%s': %s",
                in ? in : "(null)", etext (err));
  cr_assert_str_eq (out, want, "'%s'", in ? in : "(null)");
  free (out);
}

static void
path_bad (const char *in, const char *id, bool systemd)
{
  char *out = (char *)"untouched";
  csr_error *err = NULL;
  cr_assert_lt (csr_cgroup_container_path (in, id, systemd, &out, &err), 0, "'%s' must be refused",
                in ? in : "(null)");
  cr_assert_null (out);
  cr_assert_not_null (err);
  cr_assert_eq (err->status, EINVAL, "%s", etext (err));
  csr_error_free (err);
}

Test (path, default_is_csrun_id)
{
  path_ok (NULL, "abc", false, "/csrun-containers/abc");
  path_ok ("", "abc", false, "/csrun-containers/abc");
  path_ok (NULL, "abc", true, "/csrun-containers/abc");
}

Test (path, absolute_as_is)
{
  path_ok ("/libpod_parent/libpod-abc", "x", false, "/libpod_parent/libpod-abc");
  path_ok ("//a/./b//", "x", false, "/a/b");
}

Test (path, relative_under_csrun)
{
  path_ok ("pod/abc", "x", false, "/csrun-containers/pod/abc");
  path_ok ("./abc/", "x", false, "/csrun-containers/abc");
}

Test (path, systemd)
{
  /* By syntax, without the flag. */
  path_ok ("machine.slice:libpod:abc", "x", false, "/machine.slice/libpod-abc.scope");
  /* By the flag; nested slices expand. */
  path_ok ("machine.slice:libpod:abc", "x", true, "/machine.slice/libpod-abc.scope");
  path_ok ("machine-libpod_pod_1.slice:libpod:abc", "x", true,
           "/machine.slice/machine-libpod_pod_1.slice/libpod-abc.scope");
  path_ok ("a-b-c.slice:p:n", "x", true, "/a.slice/a-b.slice/a-b-c.slice/p-n.scope");
  /* Defaults: no slice is system.slice, "-.slice" the root, no prefix. */
  path_ok (":csrun:abc", "x", true, "/system.slice/csrun-abc.scope");
  path_ok ("-.slice:p:abc", "x", true, "/p-abc.scope");
  path_ok ("user.slice::abc", "x", true, "/user.slice/abc.scope");
  /* A slice as the unit. */
  path_ok ("machine.slice:p:inner.slice", "x", true, "/machine.slice/inner.slice");
}

Test (path, systemd_malformed)
{
  path_bad ("/abs/path", "x", true);
  path_bad ("machine.slice:abc", "x", true);
  path_bad ("a.slice:b:c:d", "x", true);
  path_bad ("machine:libpod:abc", "x", false); /* not a slice */
  path_bad ("a--b.slice:p:n", "x", true);
  path_bad ("-a.slice:p:n", "x", true);
  path_bad ("a-.slice:p:n", "x", true);
  path_bad (".slice:p:n", "x", true);
  path_bad ("a/b.slice:p:n", "x", true);
  path_bad ("a.slice:p:", "x", true);
  path_bad ("a.slice:p:n/m", "x", true);
  path_bad ("a.slice:p/q:n", "x", true);
}

Test (path, dotdot_and_root)
{
  path_bad ("/a/../b", "x", false);
  path_bad ("/..", "x", false);
  path_bad ("../x", "x", false);
  path_bad ("a/..", "x", false);
  path_bad ("a.slice:p:..", "x", true);
  path_bad (NULL, "..", false);
  path_bad (NULL, ".", false);
  path_bad (NULL, "a/b", false);
  path_bad (NULL, "", false);
  path_bad (NULL, NULL, false);
  path_bad ("/", "x", false);
  path_bad ("//./", "x", false);
  /* ".." inside a name is not a component. */
  path_ok ("/a..b/..c", "x", false, "/a..b/..c");
}

/* ---------------------------------------------------------------- fake */

TestSuite (fake, .init = setup, .fini = teardown);

static const struct csr_cgroup_resources res_full = {
  .memory_limit = 64 * MiB,
  .memory_swap = 128 * MiB,
  .pids_limit = 20,
  .cpu_quota = 50000,
  .cpu_period = 0,
  .cpu_shares = 1024,
};

static void
make_v2_root (const char *controllers, const char *subtree)
{
  mk ("v2");
  put ("v2/cgroup.controllers", controllers);
  put ("v2/cgroup.subtree_control", subtree);
}

Test (fake, v2_makes_dirs_and_enables_controllers)
{
  make_v2_root ("cpuset cpu io memory hugetlb pids rdma\n", "");
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/a/b", &res_full, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (cg.v2, at ("v2/a/b"));
  cr_assert_eq (cg.n_v1, 0);
  cr_assert (is_dir (at ("v2/a/b")));
  cr_assert_str_eq (slurp (at ("v2/cgroup.subtree_control")),
                    "+memory +pids +cpu +cpuset +io +hugetlb");
  /* A new plain directory has no limit files: nothing is claimed. */
  cr_assert_not (a.memory || a.swap || a.pids || a.cpu || a.shares || a.freezer);
  cr_assert_eq (csr_cgroup_delete (&cg, &err), 0, "%s", etext (err));
  cr_assert_not (exists (at ("v2/a/b")), "the leaf is removed");
  cr_assert (is_dir (at ("v2/a")), "its parent is not");
  cr_assert_eq (csr_cgroup_delete (&cg, &err), 0, "a missing directory is fine: %s", etext (err));
  csr_cg_container_release (&cg);
}

/* The handle csr_cgroup_container_create returns owns only the fds it
 * opened: freeing it closes nothing else (it once closed fd 0, where `csrun
 * run` then received the container's terminal and copied it into itself). */
Test (fake, container_handle_closes_only_its_fds)
{
  make_v2_root ("memory pids\n", "");
  int p[2];
  cr_assert_eq (pipe (p), 0);
  cr_assert_eq (dup2 (p[0], 0), 0);
  struct csr_cgroup *cg = NULL;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_container_create ("/a/b", &res_full, at ("v2"), NULL, &cg, &a, &err), 1,
                "%s", etext (err));
  cr_assert_eq (csr_cgroup_delete (cg, &err), 0, "%s", etext (err));
  csr_cgroup_free (cg);
  cr_assert_neq (fcntl (0, F_GETFD), -1, "fd 0 is still open");
  cr_assert_neq (fcntl (p[1], F_GETFD), -1);
}

Test (fake, v2_enables_only_missing_available_controllers)
{
  make_v2_root ("memory pids io\n", "memory\n");
  mk ("v2/a");
  put ("v2/a/cgroup.controllers", "memory pids\n");
  put ("v2/a/cgroup.subtree_control", "memory pids\n");
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/a/b", NULL, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (slurp (at ("v2/cgroup.subtree_control")), "+pids +io",
                    "no cpu here, memory on");
  cr_assert_str_eq (slurp (at ("v2/a/cgroup.subtree_control")), "memory pids", "untouched");
  cr_assert_eq (csr_cgroup_delete (&cg, &err), 0, "%s", etext (err));
  csr_cg_container_release (&cg);
}

static void
make_v2_leaf (void)
{
  mk ("v2/a/b");
  static const char *const files[] = { "memory.max", "memory.swap.max", "pids.max",    "cpu.max",
                                       "cpu.weight", "cgroup.freeze",   "cgroup.procs" };
  char rel[64];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
    {
      fmt (rel, sizeof rel, "v2/a/b/%s", files[i]);
      put (rel, "");
    }
}

Test (fake, v2_limits)
{
  make_v2_root ("memory pids cpu\n", "memory pids cpu\n");
  make_v2_leaf ();
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/a/b", &res_full, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.max")), "67108864");
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.swap.max")), "67108864", "swap = (mem+swap) - mem");
  cr_assert_str_eq (slurp (at ("v2/a/b/pids.max")), "20");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.max")), "50000",
                    "a quota alone: the kernel keeps the period");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.weight")), "39", "shares 1024 -> weight 39");
  cr_assert (a.memory && a.swap && a.pids && a.cpu && a.shares && a.freezer);
  csr_cg_container_release (&cg);

  struct csr_cgroup_resources r2
      = { .memory_limit = 1000, .memory_swap = -1, .cpu_period = 50000, .cpu_shares = 2 };
  cr_assert_eq (csr_cg_container_make ("/a/b", &r2, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.swap.max")), "max");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.max")), "max 50000");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.weight")), "1");
  cr_assert (a.memory && a.swap && !a.pids && !a.cpu && a.shares);
  csr_cg_container_release (&cg);

  struct csr_cgroup_resources r3 = { .cpu_shares = 262144 };
  cr_assert_eq (csr_cg_container_make ("/a/b", &r3, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.weight")), "10000");
  csr_cg_container_release (&cg);
}

Test (fake, invalid_swap_refused_before_anything)
{
  make_v2_root ("memory\n", "");
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  struct csr_cgroup_resources bad[] = {
    { .memory_swap = 64 * MiB },                           /* swap without memory */
    { .memory_limit = 64 * MiB, .memory_swap = 32 * MiB }, /* below memory */
    { .memory_limit = 64 * MiB, .memory_swap = -2 },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      csr_error *err = NULL;
      cr_assert_eq (csr_cg_container_make ("/a", &bad[i], at ("v2"), NULL, &cg, &a, &err), -1);
      cr_assert_eq (err->status, EINVAL, "%s", etext (err));
      csr_error_free (err);
      cr_assert_not (exists (at ("v2/a")));
    }
}

/* A populated pre-existing leaf is reused with a warning (as runc). */
Test (fake, populated_leaf_reused)
{
  make_v2_root ("memory\n", "memory\n");
  make_v2_leaf ();
  put ("v2/a/b/cgroup.procs", "1\n");
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/a/b", &res_full, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.max")), "67108864");
  cr_assert_str_eq (cg.v2, at ("v2/a/b"));
  csr_cg_container_release (&cg); /* never destroy: pid 1 is listed */
}

/* A frozen leaf (itself, or an ancestor through cgroup.events) is refused,
 * as runc refuses it, and what create made is removed. */
Test (fake, frozen_leaf_refused)
{
  static const char *const how[][2] = {
    { "v2/a/b/cgroup.freeze", "1\n" },
    { "v2/a/b/cgroup.events", "populated 0\nfrozen 1\n" },
  };
  make_v2_root ("memory\n", "memory\n");
  for (size_t i = 0; i < sizeof how / sizeof how[0]; i++)
    {
      make_v2_leaf ();
      put ("v2/a/b/cgroup.freeze", "0\n");
      put ("v2/a/b/cgroup.events", "populated 0\nfrozen 0\n");
      put (how[i][0], how[i][1]);
      struct csr_cgroup cg;
      struct csr_cgroup_applied a;
      csr_error *err = NULL;
      cr_assert_eq (csr_cg_container_make ("/a/b", NULL, at ("v2"), NULL, &cg, &a, &err), -1,
                    "%s accepted", how[i][0]);
      cr_assert_eq (err->status, EBUSY, "%s", etext (err));
      cr_assert_not_null (strstr (err->msg, "frozen"), "%s", err->msg);
      csr_error_free (err);
      cr_assert (is_dir (at ("v2/a/b")), "a pre-existing leaf is never removed");
      cr_assert_null (cg.v2);
    }
  /* Thawed: reused. */
  put ("v2/a/b/cgroup.freeze", "0\n");
  put ("v2/a/b/cgroup.events", "populated 0\nfrozen 0\n");
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/a/b", NULL, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  csr_cg_container_release (&cg);
}

Test (fake, v1_frozen_refused_and_new_dirs_removed)
{
  mk ("memory");
  mk ("freezer");
  mk ("freezer/p");
  mk ("freezer/p/ctr");
  char *mem = strdup (at ("memory")), *frz = strdup (at ("freezer")); /* at () reuses buffers */
  cr_assert (mem && frz);
  const char *v1[] = { mem, frz, NULL };
  static const char *const states[] = { "FROZEN\n", "FREEZING\n" };
  for (size_t i = 0; i < 2; i++)
    {
      put ("freezer/p/ctr/freezer.state", states[i]);
      struct csr_cgroup cg;
      struct csr_cgroup_applied a;
      csr_error *err = NULL;
      cr_assert_eq (csr_cg_container_make ("/p/ctr", NULL, NULL, v1, &cg, &a, &err), -1, "%s",
                    states[i]);
      cr_assert_not_null (strstr (err->msg, "frozen"), "%s", err->msg);
      csr_error_free (err);
      cr_assert_not (exists (at ("memory/p")), "the memory levels create made are removed");
      cr_assert (is_dir (at ("freezer/p/ctr")));
    }
  put ("freezer/p/ctr/freezer.state", "THAWED\n");
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/p/ctr", NULL, NULL, v1, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_eq (cg.n_v1, 2);
  csr_cg_container_release (&cg);
  free (mem);
  free (frz);
}

/* A hybrid host: the limits in v1, the container also placed in the
 * controller-less unified hierarchy (runc, crun), where no controller is
 * enabled. */
Test (fake, v1_when_v2_has_no_memory)
{
  make_v2_root ("hugetlb\n", "");
  mk ("memory");
  const char *v1[] = { at ("memory"), NULL };
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/x", NULL, at ("v2"), v1, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (cg.v2, at ("v2/x"));
  cr_assert_eq (cg.n_v1, 1);
  cr_assert_str_eq (cg.v1[0], at ("memory/x"));
  cr_assert (is_dir (at ("v2/x")), "the unified placement");
  cr_assert_str_eq (slurp (at ("v2/cgroup.subtree_control")), "", "no controller enabled");
  cr_assert_eq (csr_cgroup_delete (&cg, &err), 0, "%s", etext (err));
  csr_cg_container_release (&cg);
}

Test (fake, v2_without_memory_but_no_v1)
{
  make_v2_root ("pids\n", "");
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/x", NULL, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (cg.v2, at ("v2/x"));
  cr_assert_eq (csr_cgroup_delete (&cg, &err), 0, "%s", etext (err));
  csr_cg_container_release (&cg);
}

Test (fake, v1_dirs_limits_and_freezer)
{
  mk ("memory/p/ctr");
  put ("memory/p/ctr/memory.limit_in_bytes", "9223372036854771712\n");
  put ("memory/p/ctr/memory.memsw.limit_in_bytes", "9223372036854771712\n");
  mk ("cpu/p/ctr");
  put ("cpu/p/ctr/cpu.cfs_period_us", "100000\n");
  put ("cpu/p/ctr/cpu.cfs_quota_us", "-1\n");
  put ("cpu/p/ctr/cpu.shares", "1024\n");
  mk ("freezer/p/ctr");
  put ("freezer/p/ctr/freezer.state", "THAWED\n");
  mk ("pids"); /* new directories: no pids.max */
  mk ("cpuset");
  put ("cpuset/cpuset.cpus", "0-1\n");
  put ("cpuset/cpuset.mems", "0\n");
  const char *v1[]
      = { at ("memory"), at ("cpu"), at ("freezer"), at ("pids"), at ("cpuset"), NULL };
  struct csr_cgroup_resources r = res_full;
  r.memory_swap = 96 * MiB;
  r.cpu_shares = 512;
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/p/ctr", &r, NULL, v1, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_null (cg.v2);
  cr_assert_eq (cg.n_v1, 5);
  cr_assert_str_eq (cg.v1[3], at ("pids/p/ctr"));
  cr_assert (is_dir (at ("pids/p/ctr")) && is_dir (at ("cpuset/p/ctr")));
  cr_assert_str_eq (slurp (at ("memory/p/ctr/memory.limit_in_bytes")), "67108864");
  cr_assert_str_eq (slurp (at ("memory/p/ctr/memory.memsw.limit_in_bytes")), "100663296",
                    "v1 memsw is OCI's memory+swap");
  cr_assert_str_eq (slurp (at ("cpu/p/ctr/cpu.cfs_period_us")), "100000");
  cr_assert_str_eq (slurp (at ("cpu/p/ctr/cpu.cfs_quota_us")), "50000");
  cr_assert_str_eq (slurp (at ("cpu/p/ctr/cpu.shares")), "512");
  cr_assert (a.memory && a.swap && a.cpu && a.shares && a.freezer);
  cr_assert_not (a.pids, "no pids.max anywhere");

  cr_assert_eq (csr_cgroup_freeze (&cg, true, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("freezer/p/ctr/freezer.state")), "FROZEN");
  cr_assert_eq (csr_cgroup_freeze (&cg, false, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("freezer/p/ctr/freezer.state")), "THAWED");

  /* Enter writes the pid in every directory; missing cgroup.procs is an
   * error (a real cgroup always has one). */
  cr_assert_lt (csr_cg_container_enter (&cg, getpid (), &err), 0);
  cr_assert_eq (err->status, ENOENT, "%s", etext (err));
  csr_error_free (err);
  err = NULL;
  csr_cg_container_release (&cg);
  cr_assert_eq (cg.n_v1, 0);
}

Test (fake, v1_memsw_missing)
{
  mk ("memory/ctr");
  put ("memory/ctr/memory.limit_in_bytes", "");
  const char *v1[] = { at ("memory"), NULL };
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/ctr", &res_full, NULL, v1, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert (a.memory);
  cr_assert_not (a.swap, "swap accounting off: no memsw file");
  csr_cg_container_release (&cg);
}

Test (fake, enter_and_pids)
{
  mk ("h1/ctr/sub");
  put ("h1/ctr/cgroup.procs", "5\n3\n5\n");
  put ("h1/ctr/sub/cgroup.procs", "7\n");
  mk ("h2/ctr");
  put ("h2/ctr/cgroup.procs", "");
  struct csr_cgroup cg = { 0 };
  cg.v1[cg.n_v1++] = strdup (at ("h1/ctr"));
  cg.v1[cg.n_v1++] = strdup (at ("h2/ctr"));
  pid_t *pids;
  size_t n;
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_pids (&cg, &pids, &n, &err), 0, "%s", etext (err));
  cr_assert_eq (n, 3, "sorted, unique, with the cgroups below");
  cr_assert (pids[0] == 3 && pids[1] == 5 && pids[2] == 7);
  free (pids);
  /* Not destroy: it would SIGKILL pids 3, 5 and 7 of this host. */
  cr_assert_eq (csr_cg_container_enter (&cg, 4242, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("h1/ctr/cgroup.procs")), "4242");
  cr_assert_str_eq (slurp (at ("h2/ctr/cgroup.procs")), "4242");
  csr_cg_container_release (&cg);

  /* Gone: no pids. */
  cg.v1[cg.n_v1++] = strdup (at ("gone"));
  cr_assert_eq (csr_cgroup_pids (&cg, &pids, &n, &err), 0, "%s", etext (err));
  cr_assert_eq (n, 0);
  free (pids);
  csr_cg_container_release (&cg);
}

Test (fake, freeze_v2_and_no_freezer)
{
  mk ("v2/ctr");
  put ("v2/ctr/cgroup.freeze", "0\n");
  put ("v2/ctr/cgroup.events", "populated 1\nfrozen 1\n");
  struct csr_cgroup cg = { 0 };
  cg.v2 = strdup (at ("v2/ctr"));
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_freeze (&cg, true, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("v2/ctr/cgroup.freeze")), "1");
  put ("v2/ctr/cgroup.events", "populated 1\nfrozen 0\n");
  cr_assert_eq (csr_cgroup_freeze (&cg, false, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("v2/ctr/cgroup.freeze")), "0");
  csr_cg_container_release (&cg);

  mk ("h/ctr");
  cg.v1[cg.n_v1++] = strdup (at ("h/ctr"));
  cr_assert_lt (csr_cgroup_freeze (&cg, true, &err), 0);
  cr_assert_eq (err->status, ENOTSUP, "%s", etext (err));
  csr_error_free (err);
  csr_cg_container_release (&cg);
}

Test (fake, error_removes_only_what_it_made)
{
  mk ("h1/x"); /* pre-existing parent: y and z are made */
  mk ("h2");   /* all of x/y/z made */
  mk ("h3/x/y/z");
  mk ("h3/x/y/z/pids.max"); /* a directory: writing the limit fails */
  const char *v1[] = { at ("h1"), at ("h2"), at ("h3"), NULL };
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/x/y/z", &res_full, NULL, v1, &cg, &a, &err), -1);
  cr_assert_eq (err->status, EISDIR, "%s", etext (err));
  cr_assert (strstr (err->msg, "pids.max"), "%s", err->msg);
  csr_error_free (err);
  err = NULL;
  cr_assert (is_dir (at ("h1/x")), "pre-existing: kept");
  cr_assert_not (exists (at ("h1/x/y")), "made: removed");
  cr_assert_not (exists (at ("h2/x")), "made: removed");
  cr_assert (is_dir (at ("h3/x/y/z")), "pre-existing leaf: kept");
  cr_assert_eq (cg.n_v1, 0);
  cr_assert_null (cg.v1[0]);
  cr_assert_not (a.memory || a.pids);

  /* A mkdir failing for another reason than permission: a file in the way. */
  csr_rm_rf (at ("h3"), NULL);
  mk ("h3");
  put ("h3/x", "not a directory");
  cr_assert_eq (csr_cg_container_make ("/x/y/z", NULL, NULL, v1, &cg, &a, &err), -1);
  cr_assert_eq (err->status, ENOTDIR, "%s", etext (err));
  csr_error_free (err);
  cr_assert (is_dir (at ("h1/x")));
  cr_assert_not (exists (at ("h1/x/y")));
  cr_assert_not (exists (at ("h2/x")));
}

Test (fake, destroy_removes_leaves_and_below_only)
{
  mk ("h1/pre");
  mk ("h2");
  const char *v1[] = { at ("h1"), at ("h2"), at ("h2"), NULL }; /* h2 twice: once */
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/pre/ctr", NULL, NULL, v1, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_eq (cg.n_v1, 2);
  mk ("h1/pre/ctr/nested/deeper"); /* the container's own cgroups */
  cr_assert_eq (csr_cgroup_delete (&cg, &err), 0, "%s", etext (err));
  cr_assert_not (exists (at ("h1/pre/ctr")));
  cr_assert_not (exists (at ("h2/pre/ctr")));
  cr_assert (is_dir (at ("h1/pre")) && is_dir (at ("h2/pre")), "parents stay");
  csr_cg_container_release (&cg);
}

Test (fake, bad_paths)
{
  mk ("h");
  const char *v1[] = { at ("h"), NULL };
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  const char *bad[] = { "relative", "/", "/a/../b", NULL };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      csr_error *err = NULL;
      cr_assert_eq (csr_cg_container_make (bad[i], NULL, NULL, v1, &cg, &a, &err), -1);
      cr_assert_eq (err->status, EINVAL, "%s", etext (err));
      csr_error_free (err);
    }
}

/* ---------------------------------------------------------------- unpriv */

TestSuite (unpriv, .init = setup, .fini = teardown);

static void
need_root (void)
{
  if (geteuid () != 0)
    cr_skip_test ("n/a: needs root (to test as uid 65534 in a child, and to write this host's "
                  "cgroups)");
}

/* In a child as uid/gid 65534: FN's exit status is its verdict. */
static void
as_nobody (int (*fn) (void))
{
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      if (setgroups (0, NULL) < 0 || setgid (65534) < 0 || setuid (65534) < 0)
        _exit (100);
      _exit (fn ());
    }
  int status;
  cr_assert_eq (waitpid (pid, &status, 0), pid);
  cr_assert (WIFEXITED (status), "child status %#x", status);
  cr_assert_eq (WEXITSTATUS (status), 0, "check %d failed in the child", WEXITSTATUS (status));
}

static int
nobody_fakes (void)
{
  const char *v1[] = { at ("ro"), at ("rw"), NULL };
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  if (csr_cg_container_make ("/x/y", &res_full, NULL, v1, &cg, &a, &err) != 1)
    return 1;
  if (cg.n_v1 != 1 || strcmp (cg.v1[0], at ("rw/x/y")) != 0)
    return 2;
  if (exists (at ("ro/x")))
    return 3;
  if (csr_cgroup_delete (&cg, &err) < 0 || exists (at ("rw/x/y")) || !is_dir (at ("rw/x")))
    return 4;
  if (rmdir (at ("rw/x")) < 0) /* the parent: the test's to remove */
    return 8;
  csr_cg_container_release (&cg);
  const char *ro[] = { at ("ro"), NULL };
  if (csr_cg_container_make ("/x/y", &res_full, NULL, ro, &cg, &a, &err) != 0 || err)
    return 5;
  if (cg.n_v1 != 0 || cg.v2 || a.memory)
    return 6;
  /* rw/pre is root's: y cannot be made there. */
  const char *rw[] = { at ("rw"), NULL };
  if (csr_cg_container_make ("/pre/y", NULL, NULL, rw, &cg, &a, &err) != 0 || err)
    return 7;
  return 0;
}

Test (unpriv, unwritable_hierarchies_skipped)
{
  need_root ();
  cr_assert_eq (chmod (tmp, 0755), 0);
  mk ("ro");
  mk ("rw");
  mk ("rw/pre");
  cr_assert_eq (chown (at ("rw"), 65534, 65534), 0);
  as_nobody (nobody_fakes);
  cr_assert_not (exists (at ("rw/x")), "destroy removed the leaf, the child its parent");
}

static int
nobody_host (void)
{
  char path[64];
  snprintf (path, sizeof path, "/csrun-test-%ld/ctr", (long)getppid ());
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  int rc = csr_cg_container_make (path, &res_full, NULL, NULL, &cg, &a, &err);
  if (rc == 1)
    {
      csr_cgroup_delete (&cg, NULL);
      csr_cg_container_release (&cg);
    }
  return rc == 0 && err == NULL && cg.v2 == NULL && cg.n_v1 == 0 ? 0 : 1;
}

Test (unpriv, host_rootless_is_zero)
{
  need_root ();
  as_nobody (nobody_host);
}

/* ---------------------------------------------------------------- real */

static struct csr_cgroup g_cg;
static pid_t g_child = -1;

static void
real_cleanup (void)
{
  if (g_child > 0)
    {
      kill (g_child, SIGKILL);
      waitpid (g_child, NULL, 0);
      g_child = -1;
    }
  csr_cgroup_delete (&g_cg, NULL);
  csr_cg_container_release (&g_cg);
  char pat[PATH_MAX];
  for (int i = 0; i < 2; i++)
    {
      fmt (pat, sizeof pat, i ? "/sys/fs/cgroup/*/csrun-test-%ld" : "/sys/fs/cgroup/csrun-test-%ld",
           (long)getpid ());
      glob_t g;
      if (glob (pat, 0, NULL, &g) == 0)
        {
          for (size_t j = 0; j < g.gl_pathc; j++)
            {
              /* Only directories the test made: the parent and its leaves. */
              char sub[PATH_MAX];
              static const char *const leaves[] = { "ctr", "oom", "bad", "busy" };
              for (size_t k = 0; k < 4; k++)
                {
                  fmt (sub, sizeof sub, "%s/%s", g.gl_pathv[j], leaves[k]);
                  rmdir (sub);
                }
              rmdir (g.gl_pathv[j]);
            }
          globfree (&g);
        }
    }
}

TestSuite (real, .fini = real_cleanup);

/* How many /sys/fs/cgroup[/ *]/csrun-test-<pid> directories exist. */
static size_t
count_ours (void)
{
  size_t n = 0;
  char pat[PATH_MAX];
  for (int i = 0; i < 2; i++)
    {
      fmt (pat, sizeof pat, i ? "/sys/fs/cgroup/*/csrun-test-%ld" : "/sys/fs/cgroup/csrun-test-%ld",
           (long)getpid ());
      glob_t g;
      if (glob (pat, 0, NULL, &g) == 0)
        {
          n += g.gl_pathc;
          globfree (&g);
        }
    }
  return n;
}

static void
real_create (const char *leaf, const struct csr_cgroup_resources *r, struct csr_cgroup_applied *a)
{
  need_root ();
  char path[64];
  fmt (path, sizeof path, "/csrun-test-%ld/%s", (long)getpid (), leaf);
  csr_error *err = NULL;
  int rc = csr_cg_container_make (path, r, NULL, NULL, &g_cg, a, &err);
  cr_assert_geq (rc, 0, "%s", etext (err));
  if (rc == 0)
    cr_skip_test ("n/a: needs root with a writable cgroup hierarchy (none here)");
  cr_log_info ("%s: %s%s (+%zu v1)", path, g_cg.v2 ? "v2 " : "v1 ", g_cg.v2 ? g_cg.v2 : g_cg.v1[0],
               g_cg.n_v1);
}

/* The first directory of G_CG holding FILE. */
static const char *
file_of (const char *file)
{
  static char buf[PATH_MAX];
  const char *dirs[CSR_CG_MAX_DIRS + 1];
  size_t n = 0;
  if (g_cg.v2)
    dirs[n++] = g_cg.v2;
  for (size_t i = 0; i < g_cg.n_v1; i++)
    dirs[n++] = g_cg.v1[i];
  for (size_t i = 0; i < n; i++)
    {
      fmt (buf, sizeof buf, "%s/%s", dirs[i], file);
      if (exists (buf))
        return buf;
    }
  cr_assert_fail ("no %s in the cgroup", file);
  return NULL;
}

/* Remove the parents /csrun-test-<pid> the test made. */
static void
remove_parents (void)
{
  const char *dirs[CSR_CG_MAX_DIRS + 1];
  size_t n = 0;
  if (g_cg.v2)
    dirs[n++] = g_cg.v2;
  for (size_t i = 0; i < g_cg.n_v1; i++)
    dirs[n++] = g_cg.v1[i];
  for (size_t i = 0; i < n; i++)
    {
      char parent[PATH_MAX];
      fmt (parent, sizeof parent, "%s", dirs[i]);
      *strrchr (parent, '/') = '\0';
      cr_assert_eq (rmdir (parent), 0, "rmdir %s: %s", parent, strerror (errno));
    }
  csr_cg_container_release (&g_cg);
  cr_assert_eq (count_ours (), 0, "nothing left behind");
}

static pid_t
start_child (int (*fn) (void), int *go_fd)
{
  int go[2];
  cr_assert_eq (pipe2 (go, O_CLOEXEC), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      close (go[1]);
      char c;
      if (read (go[0], &c, 1) != 1)
        _exit (3);
      _exit (fn ());
    }
  close (go[0]);
  *go_fd = go[1];
  g_child = pid;
  return pid;
}

static int
sleep_forever (void)
{
  for (;;)
    pause ();
  return 0;
}

static int
eat_200mib (void)
{
  size_t size = 200 * MiB;
  char *p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return 4;
  for (size_t i = 0; i < size; i += 4096)
    ((volatile char *)p)[i] = 1;
  return 0; /* survived: the limit did not work */
}

/* The container cgroup is v2 only (not a hybrid host's v1 + unified). */
#define V2ONLY (g_cg.v2 && g_cg.n_v1 == 0)

Test (real, lifecycle, .timeout = 60)
{
  struct csr_cgroup_resources r
      = { .memory_limit = 64 * MiB, .pids_limit = 20, .cpu_quota = 50000, .cpu_period = 100000 };
  struct csr_cgroup_applied a;
  real_create ("ctr", &r, &a);
  cr_assert (a.memory && a.pids && a.cpu && a.freezer, "memory %d pids %d cpu %d freezer %d",
             a.memory, a.pids, a.cpu, a.freezer);
  cr_assert_not (a.swap || a.shares, "not asked for");
  if (V2ONLY)
    {
      cr_assert_str_eq (slurp (file_of ("memory.max")), "67108864");
      cr_assert_str_eq (slurp (file_of ("pids.max")), "20");
      cr_assert_str_eq (slurp (file_of ("cpu.max")), "50000 100000");
    }
  else
    {
      cr_assert_eq (count_ours (), g_cg.n_v1 + (g_cg.v2 ? 1 : 0),
                    "one directory per v1 hierarchy (and the hybrid unified one), no named ones");
      cr_assert_str_eq (slurp (file_of ("memory.limit_in_bytes")), "67108864");
      cr_assert_str_eq (slurp (file_of ("pids.max")), "20");
      cr_assert_str_eq (slurp (file_of ("cpu.cfs_period_us")), "100000");
      cr_assert_str_eq (slurp (file_of ("cpu.cfs_quota_us")), "50000");
      char pat[PATH_MAX];
      fmt (pat, sizeof pat, "/sys/fs/cgroup/systemd/csrun-test-%ld", (long)getpid ());
      cr_assert_not (exists (pat), "name=systemd is skipped");
    }

  int go;
  pid_t child = start_child (sleep_forever, &go);
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_enter (&g_cg, child, &err), 0, "%s", etext (err));
  cr_assert_eq (write (go, "G", 1), 1);
  close (go);

  char proc[64], want[128];
  fmt (proc, sizeof proc, "/proc/%ld/cgroup", (long)child);
  if (V2ONLY)
    fmt (want, sizeof want, "0::/csrun-test-%ld/ctr\n", (long)getpid ());
  else
    fmt (want, sizeof want, ":memory:/csrun-test-%ld/ctr\n", (long)getpid ());
  const char *cgfile = slurp (proc);
  char cgtext[8192];
  fmt (cgtext, sizeof cgtext, "%s\n", cgfile);
  cr_assert (strstr (cgtext, want), "%s lacks %s:\n%s", proc, want, cgtext);
  if (g_cg.v2 && !V2ONLY)
    {
      /* A hybrid host: the unified placement too (as runc and crun). */
      fmt (want, sizeof want, "0::/csrun-test-%ld/ctr\n", (long)getpid ());
      cr_assert (strstr (cgtext, want), "%s lacks %s:\n%s", proc, want, cgtext);
    }

  pid_t *pids;
  size_t n;
  cr_assert_eq (csr_cgroup_pids (&g_cg, &pids, &n, &err), 0, "%s", etext (err));
  cr_assert_eq (n, 1);
  cr_assert_eq (pids[0], child);
  free (pids);

  cr_assert_eq (csr_cgroup_freeze (&g_cg, true, &err), 0, "%s", etext (err));
  if (V2ONLY)
    cr_assert (strstr (slurp (file_of ("cgroup.events")), "frozen 1"));
  else
    cr_assert_str_eq (slurp (file_of ("freezer.state")), "FROZEN");
  cr_assert_eq (csr_cgroup_freeze (&g_cg, false, &err), 0, "%s", etext (err));
  if (V2ONLY)
    cr_assert (strstr (slurp (file_of ("cgroup.events")), "frozen 0"));
  else
    cr_assert_str_eq (slurp (file_of ("freezer.state")), "THAWED");

  /* Destroy a frozen container: it thaws, kills, removes the leaf. */
  cr_assert_eq (csr_cgroup_freeze (&g_cg, true, &err), 0, "%s", etext (err));
  cr_assert_eq (csr_cgroup_delete (&g_cg, &err), 0, "%s", etext (err));
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  g_child = -1;
  cr_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL, "status %#x", status);
  if (g_cg.v2)
    cr_assert_not (exists (g_cg.v2));
  for (size_t i = 0; i < g_cg.n_v1; i++)
    cr_assert_not (exists (g_cg.v1[i]), "%s is left", g_cg.v1[i]);
  cr_assert_eq (count_ours (), g_cg.n_v1 + (g_cg.v2 ? 1 : 0), "the parents stay");
  remove_parents ();
}

Test (real, memory_limit_oom_kills, .timeout = 60)
{
  struct csr_cgroup_resources r = { .memory_limit = 64 * MiB, .memory_swap = 64 * MiB };
  struct csr_cgroup_applied a;
  real_create ("oom", &r, &a);
  cr_assert (a.memory);
  int go;
  pid_t child = start_child (eat_200mib, &go);
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_enter (&g_cg, child, &err), 0, "%s", etext (err));
  cr_assert_eq (write (go, "G", 1), 1);
  close (go);
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  g_child = -1;
  cr_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL,
             "the 200 MiB child must be OOM-killed (status %#x)", status);
  const char *ev = slurp (file_of (V2ONLY ? "memory.events" : "memory.oom_control"));
  const char *k = strstr (ev, "oom_kill ");
  cr_assert_not_null (k, "%s", ev);
  cr_assert_geq (atol (k + 9), 1, "%s", ev);
  cr_assert_eq (csr_cgroup_delete (&g_cg, &err), 0, "%s", etext (err));
  remove_parents ();
}

Test (real, refused_limit_leaves_nothing, .timeout = 60)
{
  need_root ();
  char path[64];
  fmt (path, sizeof path, "/csrun-test-%ld/bad", (long)getpid ());
  /* The kernel refuses a quota below 1 ms. */
  struct csr_cgroup_resources r = { .memory_limit = 64 * MiB, .cpu_quota = 500 };
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  int rc = csr_cg_container_make (path, &r, NULL, NULL, &g_cg, &a, &err);
  if (rc == 0)
    cr_skip_test ("n/a: needs root with a writable cgroup hierarchy (none here)");
  cr_assert_eq (rc, -1);
  cr_assert_eq (err->status, EINVAL, "%s", etext (err));
  cr_log_info ("%s", etext (err));
  csr_error_free (err);
  cr_assert_eq (count_ours (), 0, "the parent csrun made is removed too");
  cr_assert_null (g_cg.v2);
  cr_assert_eq (g_cg.n_v1, 0);
}

Test (real, populated_leaf_reused_with_a_warning, .timeout = 60)
{
  struct csr_cgroup_applied a;
  real_create ("busy", NULL, &a);
  int go;
  pid_t child = start_child (sleep_forever, &go);
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_enter (&g_cg, child, &err), 0, "%s", etext (err));
  char path[64];
  fmt (path, sizeof path, "/csrun-test-%ld/busy", (long)getpid ());
  /* runc: "container's cgroup is not empty" is a warning. */
  struct csr_cgroup cg2;
  cr_assert_eq (csr_cg_container_make (path, NULL, NULL, NULL, &cg2, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (cg2.v1[0] ? cg2.v1[0] : cg2.v2, g_cg.v1[0] ? g_cg.v1[0] : g_cg.v2);
  csr_cg_container_release (&cg2);
  pid_t *pids;
  size_t n;
  cr_assert_eq (csr_cgroup_pids (&g_cg, &pids, &n, &err), 0, "%s", etext (err));
  cr_assert_eq (n, 1, "the first cgroup is untouched");
  free (pids);
  cr_assert_eq (csr_cgroup_delete (&g_cg, &err), 0, "%s", etext (err));
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  g_child = -1;
  cr_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL, "status %#x", status);
  close (go);
  remove_parents ();
}

/* ---------------------------------------------------------------- res: linux.resources */

TestSuite (res, .init = setup, .fini = teardown);

static void
parse_res (const char *json, struct csr_cgroup_resources *r)
{
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_resources_parse (json, strlen (json), r, &err), 0, "%s: %s", json,
                etext (err));
}

static void
parse_res_bad (const char *json, const char *want)
{
  struct csr_cgroup_resources r;
  csr_error *err = NULL;
  cr_assert_lt (oci_cgroup_resources_parse (json, strlen (json), &r, &err), 0, "%s accepted", json);
  cr_assert_not_null (strstr (err->msg, want), "%s: '%s' lacks '%s'", json, err->msg, want);
  csr_error_free (err);
}

Test (res, parse_every_field)
{
  struct csr_cgroup_resources r;
  parse_res ("{\"memory\":{\"limit\":67108864,\"swap\":-1,\"reservation\":33554432,"
             "\"kernel\":-1,\"kernelTCP\":1048576,\"swappiness\":0,\"disableOOMKiller\":true},"
             "\"cpu\":{\"shares\":512,\"quota\":-1,\"period\":50000,\"realtimeRuntime\":950,"
             "\"realtimePeriod\":1000,\"cpus\":\"0-1\",\"mems\":\"0\",\"idle\":1},"
             "\"pids\":{\"limit\":-1},"
             "\"blockIO\":{\"weight\":500,\"leafWeight\":300,\"weightDevice\":[{\"major\":8,"
             "\"minor\":0,\"weight\":200}],\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0,"
             "\"rate\":1048576}],\"throttleWriteIOPSDevice\":[{\"major\":8,\"minor\":16,"
             "\"rate\":100}]},"
             "\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":2097152}],"
             "\"network\":{\"classID\":1048577,\"priorities\":[{\"name\":\"lo\",\"priority\":2}]},"
             "\"unified\":{\"memory.high\":\"max\"},\"devices\":[]}",
             &r);
  cr_assert_eq (r.memory_limit, 64 * MiB);
  cr_assert_eq (r.memory_swap, -1);
  cr_assert (r.has_memory_reservation && r.memory_reservation == 32 * MiB);
  cr_assert (r.has_memory_kernel && r.memory_kernel == -1);
  cr_assert (r.has_memory_kernel_tcp && r.memory_kernel_tcp == 1 * MiB);
  cr_assert (r.has_memory_swappiness && r.memory_swappiness == 0);
  cr_assert (r.has_disable_oom_killer && r.disable_oom_killer);
  cr_assert_eq (r.cpu_shares, 512);
  cr_assert_eq (r.cpu_quota, -1);
  cr_assert_eq (r.cpu_period, 50000);
  cr_assert (r.has_cpu_rt_runtime && r.cpu_rt_runtime == 950);
  cr_assert (r.has_cpu_rt_period && r.cpu_rt_period == 1000);
  cr_assert_str_eq (r.cpu_cpus, "0-1");
  cr_assert_str_eq (r.cpu_mems, "0");
  cr_assert (r.has_cpu_idle && r.cpu_idle == 1);
  cr_assert_eq (r.pids_limit, -1);
  cr_assert (r.has_blkio_weight && r.blkio_weight == 500);
  cr_assert (r.has_blkio_leaf_weight && r.blkio_leaf_weight == 300);
  cr_assert_eq (r.n_blkio_weight_devices, 1);
  cr_assert (r.blkio_weight_devices[0].has_weight && r.blkio_weight_devices[0].weight == 200);
  cr_assert_eq (r.n_blkio_throttle[OCI_THROTTLE_READ_BPS], 1);
  cr_assert_eq (r.blkio_throttle[OCI_THROTTLE_READ_BPS][0].rate, 1048576);
  cr_assert_eq (r.n_blkio_throttle[OCI_THROTTLE_WRITE_IOPS], 1);
  cr_assert_eq (r.blkio_throttle[OCI_THROTTLE_WRITE_IOPS][0].minor, 16);
  cr_assert_eq (r.n_hugetlb, 1);
  cr_assert_str_eq (r.hugetlb[0].page_size, "2MB");
  cr_assert (r.has_net_class_id && r.net_class_id == 1048577);
  cr_assert_eq (r.n_net_prios, 1);
  cr_assert_str_eq (r.net_prios[0].name, "lo");
  cr_assert_eq (r.n_unified, 1);
  cr_assert_str_eq (r.unified_keys[0], "memory.high");
  cr_assert (oci_cgroup_resources_any (&r));
  oci_cgroup_resources_release (&r);
  cr_assert_null (r.cpu_cpus);

  parse_res ("{\"cpu\":{\"cpus\":\"\"},\"blockIO\":{\"weight\":0}}", &r);
  cr_assert_null (r.cpu_cpus, "\"\" is not set");
  cr_assert_not (r.has_blkio_weight, "0 is not set");
  cr_assert_not (oci_cgroup_resources_any (&r));
  oci_cgroup_resources_release (&r);
}

Test (res, parse_errors_name_the_field)
{
  parse_res_bad ("[]", "linux.resources: expected an object");
  parse_res_bad ("{\"memory\":{\"swappiness\":101}}", "linux.resources.memory.swappiness");
  parse_res_bad ("{\"memory\":{\"limit\":\"1G\"}}", "linux.resources.memory.limit: expected an");
  parse_res_bad ("{\"blockIO\":{\"weight\":5}}", "linux.resources.blockIO.weight");
  parse_res_bad ("{\"blockIO\":{\"weightDevice\":[{\"major\":8,\"weight\":100}]}}",
                 "linux.resources.blockIO.weightDevice[0].minor: required");
  parse_res_bad ("{\"blockIO\":{\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0}]}}",
                 "throttleReadBpsDevice[0].rate: required");
  parse_res_bad ("{\"hugepageLimits\":[{\"pageSize\":\"2XB\",\"limit\":1}]}",
                 "invalid hugepage size '2XB'");
  parse_res_bad ("{\"hugepageLimits\":[{\"limit\":1}]}", "hugepageLimits[0].pageSize: required");
  parse_res_bad ("{\"network\":{\"priorities\":[{\"name\":\"a b\",\"priority\":1}]}}",
                 "invalid interface name");
  parse_res_bad ("{\"unified\":{\"../memory.max\":\"1\"}}", "invalid key");
  parse_res_bad ("{\"unified\":{\"NOT-A-VALID-KEY\":\"1\"}}",
                 "the specified key has not the form CONTROLLER.VALUE `NOT-A-VALID-KEY`");
  parse_res_bad ("{\"unified\":{\"cgroup.procs\":\"1\"}}", "not a resource file");
  parse_res_bad ("{\"unified\":{\"memory.max\":1}}", "expected a string");
  parse_res_bad ("{\"rdma\":{\"mlx5_1\":{\"hcaHandles\":3}}}", "rdma: not supported");
  parse_res_bad ("{\"memory\":", "invalid JSON");
}

/* A v2 leaf with the files of every controller. */
static void
make_v2_full_leaf (void)
{
  make_v2_root ("cpuset cpu io memory hugetlb pids\n", "cpuset cpu io memory hugetlb pids\n");
  mk ("v2/a/b");
  static const char *const files[]
      = { "memory.max", "memory.swap.max", "memory.low",   "pids.max",        "cpu.max",
          "cpu.weight", "cpu.idle",        "cpuset.cpus",  "cpuset.mems",     "io.weight",
          "io.max",     "memory.high",     "cgroup.procs", "hugetlb.2MB.max", "cgroup.freeze" };
  char rel[64];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
    {
      fmt (rel, sizeof rel, "v2/a/b/%s", files[i]);
      put (rel, "");
    }
  put ("v2/a/b/cpu.max", "max 100000\n");
}

static int
create_v2 (const char *json, struct csr_cgroup *cg, csr_error **err)
{
  struct csr_cgroup_resources r;
  parse_res (json, &r);
  struct csr_cgroup_applied a;
  int rc = csr_cg_container_make ("/a/b", &r, at ("v2"), NULL, cg, &a, err);
  oci_cgroup_resources_release (&r);
  return rc;
}

Test (res, v2_files)
{
  make_v2_full_leaf ();
  struct csr_cgroup cg;
  csr_error *err = NULL;
  cr_assert_eq (create_v2 ("{\"memory\":{\"limit\":1000,\"reservation\":500},"
                           "\"cpu\":{\"cpus\":\"0-1\",\"mems\":\"0\",\"idle\":1},"
                           "\"blockIO\":{\"weight\":10,\"weightDevice\":[{\"major\":8,\"minor\":0,"
                           "\"weight\":1000}],\"throttleWriteBpsDevice\":[{\"major\":8,"
                           "\"minor\":0,\"rate\":4096}]},"
                           "\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}],"
                           "\"pids\":{\"limit\":-1},\"unified\":{\"memory.high\":\"2000\"}}",
                           &cg, &err),
                1, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.low")), "500");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpuset.cpus")), "0-1");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpuset.mems")), "0");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.idle")), "1");
  cr_assert_str_eq (slurp (at ("v2/a/b/io.weight")), "8:0 10000", "1000 -> 10000 (last write)");
  cr_assert_str_eq (slurp (at ("v2/a/b/io.max")), "8:0 wbps=4096");
  cr_assert_str_eq (slurp (at ("v2/a/b/hugetlb.2MB.max")), "4194304");
  cr_assert_str_eq (slurp (at ("v2/a/b/pids.max")), "max");
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.high")), "2000");
  csr_cg_container_release (&cg);
}

Test (res, v2_unsupported_is_an_error)
{
  static const char *const bad[][2] = {
    { "{\"cpu\":{\"realtimeRuntime\":100}}", "realtime" },
    { "{\"network\":{\"classID\":1}}", "net_cls" },
    { "{\"blockIO\":{\"leafWeight\":100}}", "leaf" },
    { "{\"unified\":{\"memory.min\":\"1\"}}", "memory.min: no such file" },
    { "{\"hugepageLimits\":[{\"pageSize\":\"1GB\",\"limit\":0}]}", "invalid hugepage size '1GB'" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      make_v2_full_leaf ();
      struct csr_cgroup cg;
      csr_error *err = NULL;
      cr_assert_eq (create_v2 (bad[i][0], &cg, &err), -1, "%s accepted", bad[i][0]);
      cr_assert_not_null (strstr (err->msg, bad[i][1]), "%s: %s", bad[i][0], err->msg);
      csr_error_free (err);
      cr_assert (is_dir (at ("v2/a/b")), "the pre-existing leaf stays");
    }
  /* crun's words: a controller the cgroup does not have; a missing file. */
  make_v2_full_leaf ();
  put ("v2/a/b/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
  {
    struct csr_cgroup cg;
    csr_error *err = NULL;
    cr_assert_eq (create_v2 ("{\"unified\":{\"foo.bar\":\"x\"}}", &cg, &err), -1);
    cr_assert_not_null (strstr (err->msg, "the requested cgroup controller `foo` is not available"),
                        "%s", err->msg);
    csr_error_free (err);
    err = NULL;
    cr_assert_eq (create_v2 ("{\"unified\":{\"memory.DOESNTEXIST\":\"x\"}}", &cg, &err), -1);
    cr_assert_eq (err->status, ENOENT, "%s", etext (err));
    csr_error_free (err);
    err = NULL;
    cr_assert_eq (create_v2 ("{\"unified\":{\"memory.high\":\"5000\"}}", &cg, &err), 1, "%s",
                  etext (err));
    cr_assert_str_eq (slurp (at ("v2/a/b/memory.high")), "5000");
    csr_cg_container_release (&cg);
  }
  /* No cpuset controller (no file): an error, not silently skipped. */
  make_v2_root ("memory\n", "memory\n");
  mk ("v2/c");
  struct csr_cgroup_resources r;
  parse_res ("{\"cpu\":{\"cpus\":\"0\"}}", &r);
  struct csr_cgroup cg;
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cg_container_make ("/c/d", &r, at ("v2"), NULL, &cg, &a, &err), -1);
  cr_assert_eq (err->status, ENOTSUP, "%s", etext (err));
  cr_assert_not_null (strstr (err->msg, "no cpuset controller"), "%s", err->msg);
  csr_error_free (err);
  cr_assert_not (exists (at ("v2/c/d")), "what create made is removed");
  oci_cgroup_resources_release (&r);
}

/* update writes only what it is given: a period alone keeps the quota, a
 * swap alone takes the current memory.max. */
Test (res, v2_update_keeps_the_rest)
{
  make_v2_full_leaf ();
  put ("v2/a/b/cpu.max", "30000 100000\n");
  put ("v2/a/b/memory.max", "1000\n");
  put ("v2/a/b/pids.max", "7\n");
  struct csr_cgroup cg = { .v2 = strdup (at ("v2/a/b")) };
  struct csr_cgroup_resources r = { .cpu_period = 50000, .memory_swap = 3000 };
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_update (&cg, &r, &a, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.max")), "30000 50000");
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.swap.max")), "2000");
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.max")), "1000", "untouched");
  cr_assert_str_eq (slurp (at ("v2/a/b/pids.max")), "7", "untouched");
  struct csr_cgroup_resources r2 = { .cpu_quota = -1, .memory_limit = -1 };
  cr_assert_eq (csr_cgroup_update (&cg, &r2, &a, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.max")), "max");
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.max")), "max");
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.swap.max")), "max", "memory -1: swap too (runc)");
  csr_cg_container_release (&cg);
}

/* v1 hierarchies as plain directories with the kernel's files. */
static void
make_v1_full (void)
{
  static const char *const files[][2] = {
    { "memory", "memory.limit_in_bytes" },
    { "memory", "memory.memsw.limit_in_bytes" },
    { "memory", "memory.soft_limit_in_bytes" },
    { "memory", "memory.swappiness" },
    { "memory", "memory.oom_control" },
    { "cpu", "cpu.cfs_period_us" },
    { "cpu", "cpu.cfs_quota_us" },
    { "cpu", "cpu.shares" },
    { "cpu", "cpu.rt_period_us" },
    { "cpu", "cpu.rt_runtime_us" },
    { "blkio", "blkio.weight" },
    { "blkio", "blkio.weight_device" },
    { "blkio", "blkio.leaf_weight" },
    { "blkio", "blkio.throttle.read_iops_device" },
    { "net_cls", "net_cls.classid" },
    { "net_prio", "net_prio.ifpriomap" },
    { "hugetlb", "hugetlb.2MB.limit_in_bytes" },
    { "cpuset", "cpuset.cpus" },
    { "cpuset", "cpuset.mems" },
  };
  char rel[128];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
    {
      fmt (rel, sizeof rel, "%s/ctr", files[i][0]);
      mk (rel);
      fmt (rel, sizeof rel, "%s/ctr/%s", files[i][0], files[i][1]);
      put (rel, "");
    }
  put ("cpu/ctr/cpu.cfs_period_us", "100000\n");
  put ("cpuset/cpuset.cpus", "0-3\n");
  put ("cpuset/cpuset.mems", "0\n");
}

static const char *v1_names[]
    = { "memory", "cpu", "blkio", "net_cls", "net_prio", "hugetlb", "cpuset" };

static int
create_v1 (const char *json, const char *path, size_t n_hier, struct csr_cgroup *cg,
           csr_error **err)
{
  static char roots[8][PATH_MAX];
  const char *v1[8];
  for (size_t i = 0; i < n_hier; i++)
    {
      fmt (roots[i], PATH_MAX, "%s/%s", tmp, v1_names[i]);
      v1[i] = roots[i];
    }
  v1[n_hier] = NULL;
  struct csr_cgroup_resources r;
  parse_res (json, &r);
  struct csr_cgroup_applied a;
  int rc = csr_cg_container_make (path, &r, NULL, v1, cg, &a, err);
  oci_cgroup_resources_release (&r);
  return rc;
}

Test (res, v1_files)
{
  make_v1_full ();
  struct csr_cgroup cg;
  csr_error *err = NULL;
  cr_assert_eq (
      create_v1 ("{\"memory\":{\"limit\":1000,\"reservation\":500,\"swappiness\":10,"
                 "\"disableOOMKiller\":true},"
                 "\"cpu\":{\"quota\":20000,\"realtimePeriod\":1000,\"realtimeRuntime\":500,"
                 "\"cpus\":\"1\",\"mems\":\"0\"},"
                 "\"blockIO\":{\"weight\":300,\"leafWeight\":200,\"weightDevice\":[{\"major\":8,"
                 "\"minor\":0,\"weight\":400}],\"throttleReadIOPSDevice\":[{\"major\":8,"
                 "\"minor\":0,\"rate\":50}]},"
                 "\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":2097152}],"
                 "\"network\":{\"classID\":1048577,\"priorities\":[{\"name\":\"lo\","
                 "\"priority\":3}]}}",
                 "/ctr", 7, &cg, &err),
      1, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("memory/ctr/memory.soft_limit_in_bytes")), "500");
  cr_assert_str_eq (slurp (at ("memory/ctr/memory.swappiness")), "10");
  cr_assert_str_eq (slurp (at ("memory/ctr/memory.oom_control")), "1");
  cr_assert_str_eq (slurp (at ("cpu/ctr/cpu.cfs_quota_us")), "20000");
  cr_assert_str_eq (slurp (at ("cpu/ctr/cpu.cfs_period_us")), "100000", "not written");
  cr_assert_str_eq (slurp (at ("cpu/ctr/cpu.rt_period_us")), "1000");
  cr_assert_str_eq (slurp (at ("cpu/ctr/cpu.rt_runtime_us")), "500");
  cr_assert_str_eq (slurp (at ("cpuset/ctr/cpuset.cpus")), "1");
  cr_assert_str_eq (slurp (at ("blkio/ctr/blkio.weight")), "300");
  cr_assert_str_eq (slurp (at ("blkio/ctr/blkio.leaf_weight")), "200");
  cr_assert_str_eq (slurp (at ("blkio/ctr/blkio.weight_device")), "8:0 400");
  cr_assert_str_eq (slurp (at ("blkio/ctr/blkio.throttle.read_iops_device")), "8:0 50");
  cr_assert_str_eq (slurp (at ("hugetlb/ctr/hugetlb.2MB.limit_in_bytes")), "2097152");
  cr_assert_str_eq (slurp (at ("net_cls/ctr/net_cls.classid")), "1048577");
  cr_assert_str_eq (slurp (at ("net_prio/ctr/net_prio.ifpriomap")), "lo 3");
  csr_cg_container_release (&cg);
}

Test (res, v1_missing_controllers_are_errors)
{
  static const char *const bad[][2] = {
    { "{\"network\":{\"classID\":1}}", "no net_cls controller" },
    { "{\"network\":{\"priorities\":[{\"name\":\"lo\",\"priority\":1}]}}",
      "no net_prio controller" },
    { "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":0}]}", "no hugetlb controller" },
    { "{\"blockIO\":{\"weight\":100}}", "no blkio (weight) controller" },
    { "{\"cpu\":{\"mems\":\"0\"}}", "no cpuset controller" },
    { "{\"unified\":{\"memory.min\":\"1\"}}", "invalid configuration" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      make_v1_full ();
      struct csr_cgroup cg;
      csr_error *err = NULL;
      /* Only memory and cpu hierarchies. */
      cr_assert_eq (create_v1 (bad[i][0], "/ctr", 2, &cg, &err), -1, "%s accepted", bad[i][0]);
      cr_assert_not_null (strstr (err->msg, bad[i][1]), "%s: %s", bad[i][0], err->msg);
      csr_error_free (err);
    }
}

/* An existing empty cpuset level above the container is filled from its
 * parent (runc, crun); one with a value is left as it is. */
Test (res, v1_cpuset_parents_filled)
{
  mk ("cpuset/p/q");
  put ("cpuset/cpuset.cpus", "0-3\n");
  put ("cpuset/cpuset.mems", "0\n");
  put ("cpuset/p/cpuset.cpus", "\n");
  put ("cpuset/p/cpuset.mems", "\n");
  put ("cpuset/p/q/cpuset.cpus", "2\n");
  put ("cpuset/p/q/cpuset.mems", "0\n");
  mk ("cpuset/p/q/ctr");
  put ("cpuset/p/q/ctr/cpuset.cpus", "");
  put ("cpuset/p/q/ctr/cpuset.mems", "");
  struct csr_cgroup cg;
  csr_error *err = NULL;
  const char *v1[] = { at ("cpuset"), NULL };
  struct csr_cgroup_applied a;
  cr_assert_eq (csr_cg_container_make ("/p/q/ctr", NULL, NULL, v1, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (slurp (at ("cpuset/p/cpuset.cpus")), "0-3");
  cr_assert_str_eq (slurp (at ("cpuset/p/cpuset.mems")), "0");
  cr_assert_str_eq (slurp (at ("cpuset/p/q/cpuset.cpus")), "2", "a value is kept");
  cr_assert_str_eq (slurp (at ("cpuset/p/q/ctr/cpuset.cpus")), "2");
  csr_cg_container_release (&cg);
}

Test (res, v1_update_writes_only_what_is_given)
{
  make_v1_full ();
  put ("cpu/ctr/cpu.cfs_period_us", "50000\n");
  put ("cpu/ctr/cpu.cfs_quota_us", "25000\n");
  put ("memory/ctr/memory.limit_in_bytes", "1000\n");
  struct csr_cgroup cg = { 0 };
  cg.v1[cg.n_v1++] = strdup (at ("memory/ctr"));
  cg.v1[cg.n_v1++] = strdup (at ("cpu/ctr"));
  struct csr_cgroup_resources r = { .cpu_quota = 30000 };
  struct csr_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (csr_cgroup_update (&cg, &r, &a, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("cpu/ctr/cpu.cfs_quota_us")), "30000");
  cr_assert_str_eq (slurp (at ("cpu/ctr/cpu.cfs_period_us")), "50000", "the period is kept");
  cr_assert_str_eq (slurp (at ("memory/ctr/memory.limit_in_bytes")), "1000", "untouched");
  struct csr_cgroup_resources r2 = { .memory_limit = -1, .pids_limit = -1 };
  cr_assert_eq (csr_cgroup_update (&cg, &r2, &a, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("memory/ctr/memory.limit_in_bytes")), "-1");
  cr_assert_str_eq (slurp (at ("memory/ctr/memory.memsw.limit_in_bytes")), "-1",
                    "memory -1: memory+swap too (runc)");
  csr_cg_container_release (&cg);
}
