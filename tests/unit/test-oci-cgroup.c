/* Unit tests for the cgroup of an OCI container (src/lib/oci/cgroup.c).
 *
 * path:  oci_cgroup_path: default, absolute, relative, systemd
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

#include "oci/cgroup.h"
#include "util/fs.h"

#define MiB (1024 * 1024LL)

static char tmp[PATH_MAX];

static void fmt (char *buf, size_t size, const char *f, ...)
    __attribute__ ((format (printf, 3, 4)));
static void
fmt (char *buf, size_t size, const char *f, ...)
{
  va_list ap;
  va_start (ap, f);
  int n = vsnprintf (buf, size, f, ap);
  va_end (ap);
  cr_assert (n >= 0 && (size_t)n < size, "path too long");
}

static const char *
etext (csr_error *err)
{
  return err ? csr_error_text (err) : "(no error)";
}

static void
setup (void)
{
  strcpy (tmp, "/tmp/csrun-ocicg-XXXXXX");
  cr_assert_not_null (mkdtemp (tmp));
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
  cr_assert_eq (oci_cgroup_path (in, id, systemd, &out, &err), 0, "'%s': %s", in ? in : "(null)",
                etext (err));
  cr_assert_str_eq (out, want, "'%s'", in ? in : "(null)");
  free (out);
}

static void
path_bad (const char *in, const char *id, bool systemd)
{
  char *out = (char *)"untouched";
  csr_error *err = NULL;
  cr_assert_lt (oci_cgroup_path (in, id, systemd, &out, &err), 0, "'%s' must be refused",
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

static const struct oci_cgroup_resources res_full = {
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
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/a/b", &res_full, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (cg.v2, at ("v2/a/b"));
  cr_assert_eq (cg.n_v1, 0);
  cr_assert (is_dir (at ("v2/a/b")));
  cr_assert_str_eq (slurp (at ("v2/cgroup.subtree_control")), "+memory +pids +cpu");
  /* A new plain directory has no limit files: nothing is claimed. */
  cr_assert_not (a.memory || a.swap || a.pids || a.cpu || a.shares || a.freezer);
  cr_assert_eq (oci_cgroup_destroy (&cg, &err), 0, "%s", etext (err));
  cr_assert_not (exists (at ("v2/a/b")), "the leaf is removed");
  cr_assert (is_dir (at ("v2/a")), "its parent is not");
  cr_assert_eq (oci_cgroup_destroy (&cg, &err), 0, "a missing directory is fine: %s", etext (err));
  oci_cgroup_release (&cg);
}

Test (fake, v2_enables_only_missing_available_controllers)
{
  make_v2_root ("memory pids io\n", "memory\n");
  mk ("v2/a");
  put ("v2/a/cgroup.controllers", "memory pids\n");
  put ("v2/a/cgroup.subtree_control", "memory pids\n");
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/a/b", NULL, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (slurp (at ("v2/cgroup.subtree_control")), "+pids", "no cpu here, memory on");
  cr_assert_str_eq (slurp (at ("v2/a/cgroup.subtree_control")), "memory pids", "untouched");
  cr_assert_eq (oci_cgroup_destroy (&cg, &err), 0, "%s", etext (err));
  oci_cgroup_release (&cg);
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
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/a/b", &res_full, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.max")), "67108864");
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.swap.max")), "67108864", "swap = (mem+swap) - mem");
  cr_assert_str_eq (slurp (at ("v2/a/b/pids.max")), "20");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.max")), "50000 100000");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.weight")), "39", "shares 1024 -> weight 39");
  cr_assert (a.memory && a.swap && a.pids && a.cpu && a.shares && a.freezer);
  oci_cgroup_release (&cg);

  struct oci_cgroup_resources r2
      = { .memory_limit = 1000, .memory_swap = -1, .cpu_period = 50000, .cpu_shares = 2 };
  cr_assert_eq (oci_cgroup_create ("/a/b", &r2, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.swap.max")), "max");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.max")), "max 50000");
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.weight")), "1");
  cr_assert (a.memory && a.swap && !a.pids && !a.cpu && a.shares);
  oci_cgroup_release (&cg);

  struct oci_cgroup_resources r3 = { .cpu_shares = 262144 };
  cr_assert_eq (oci_cgroup_create ("/a/b", &r3, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (slurp (at ("v2/a/b/cpu.weight")), "10000");
  oci_cgroup_release (&cg);
}

Test (fake, invalid_swap_refused_before_anything)
{
  make_v2_root ("memory\n", "");
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  struct oci_cgroup_resources bad[] = {
    { .memory_swap = 64 * MiB },                           /* swap without memory */
    { .memory_limit = 64 * MiB, .memory_swap = 32 * MiB }, /* below memory */
    { .memory_limit = 64 * MiB, .memory_swap = -2 },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      csr_error *err = NULL;
      cr_assert_eq (oci_cgroup_create ("/a", &bad[i], at ("v2"), NULL, &cg, &a, &err), -1);
      cr_assert_eq (err->status, EINVAL, "%s", etext (err));
      csr_error_free (err);
      cr_assert_not (exists (at ("v2/a")));
    }
}

Test (fake, populated_leaf_refused)
{
  make_v2_root ("memory\n", "memory\n");
  make_v2_leaf ();
  put ("v2/a/b/cgroup.procs", "1\n");
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/a/b", &res_full, at ("v2"), NULL, &cg, &a, &err), -1);
  cr_assert_eq (err->status, EBUSY, "%s", etext (err));
  csr_error_free (err);
  cr_assert (is_dir (at ("v2/a/b")), "a pre-existing leaf is never removed");
  cr_assert_str_eq (slurp (at ("v2/a/b/memory.max")), "", "and not written");
  cr_assert_null (cg.v2);
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
      struct oci_cgroup cg;
      struct oci_cgroup_applied a;
      csr_error *err = NULL;
      cr_assert_eq (oci_cgroup_create ("/a/b", NULL, at ("v2"), NULL, &cg, &a, &err), -1,
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
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/a/b", NULL, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  oci_cgroup_release (&cg);
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
      struct oci_cgroup cg;
      struct oci_cgroup_applied a;
      csr_error *err = NULL;
      cr_assert_eq (oci_cgroup_create ("/p/ctr", NULL, NULL, v1, &cg, &a, &err), -1, "%s",
                    states[i]);
      cr_assert_not_null (strstr (err->msg, "frozen"), "%s", err->msg);
      csr_error_free (err);
      cr_assert_not (exists (at ("memory/p")), "the memory levels create made are removed");
      cr_assert (is_dir (at ("freezer/p/ctr")));
    }
  put ("freezer/p/ctr/freezer.state", "THAWED\n");
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/p/ctr", NULL, NULL, v1, &cg, &a, &err), 1, "%s", etext (err));
  cr_assert_eq (cg.n_v1, 2);
  oci_cgroup_release (&cg);
  free (mem);
  free (frz);
}

Test (fake, v1_when_v2_has_no_memory)
{
  make_v2_root ("hugetlb\n", "");
  mk ("memory");
  const char *v1[] = { at ("memory"), NULL };
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/x", NULL, at ("v2"), v1, &cg, &a, &err), 1, "%s", etext (err));
  cr_assert_null (cg.v2);
  cr_assert_eq (cg.n_v1, 1);
  cr_assert_str_eq (cg.v1[0], at ("memory/x"));
  cr_assert_not (exists (at ("v2/x")), "the controller-less v2 is left alone");
  cr_assert_eq (oci_cgroup_destroy (&cg, &err), 0, "%s", etext (err));
  oci_cgroup_release (&cg);
}

Test (fake, v2_without_memory_but_no_v1)
{
  make_v2_root ("pids\n", "");
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/x", NULL, at ("v2"), NULL, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_str_eq (cg.v2, at ("v2/x"));
  cr_assert_eq (oci_cgroup_destroy (&cg, &err), 0, "%s", etext (err));
  oci_cgroup_release (&cg);
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
  struct oci_cgroup_resources r = res_full;
  r.memory_swap = 96 * MiB;
  r.cpu_shares = 512;
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/p/ctr", &r, NULL, v1, &cg, &a, &err), 1, "%s", etext (err));
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

  cr_assert_eq (oci_cgroup_freeze (&cg, true, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("freezer/p/ctr/freezer.state")), "FROZEN");
  cr_assert_eq (oci_cgroup_freeze (&cg, false, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("freezer/p/ctr/freezer.state")), "THAWED");

  /* Enter writes the pid in every directory; missing cgroup.procs is an
   * error (a real cgroup always has one). */
  cr_assert_lt (oci_cgroup_enter (&cg, getpid (), &err), 0);
  cr_assert_eq (err->status, ENOENT, "%s", etext (err));
  csr_error_free (err);
  err = NULL;
  oci_cgroup_release (&cg);
  cr_assert_eq (cg.n_v1, 0);
}

Test (fake, v1_memsw_missing)
{
  mk ("memory/ctr");
  put ("memory/ctr/memory.limit_in_bytes", "");
  const char *v1[] = { at ("memory"), NULL };
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/ctr", &res_full, NULL, v1, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert (a.memory);
  cr_assert_not (a.swap, "swap accounting off: no memsw file");
  oci_cgroup_release (&cg);
}

Test (fake, enter_and_pids)
{
  mk ("h1/ctr/sub");
  put ("h1/ctr/cgroup.procs", "5\n3\n5\n");
  put ("h1/ctr/sub/cgroup.procs", "7\n");
  mk ("h2/ctr");
  put ("h2/ctr/cgroup.procs", "");
  struct oci_cgroup cg = { 0 };
  cg.v1[cg.n_v1++] = strdup (at ("h1/ctr"));
  cg.v1[cg.n_v1++] = strdup (at ("h2/ctr"));
  pid_t *pids;
  size_t n;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_pids (&cg, &pids, &n, &err), 0, "%s", etext (err));
  cr_assert_eq (n, 3, "sorted, unique, with the cgroups below");
  cr_assert (pids[0] == 3 && pids[1] == 5 && pids[2] == 7);
  free (pids);
  /* Not destroy: it would SIGKILL pids 3, 5 and 7 of this host. */
  cr_assert_eq (oci_cgroup_enter (&cg, 4242, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("h1/ctr/cgroup.procs")), "4242");
  cr_assert_str_eq (slurp (at ("h2/ctr/cgroup.procs")), "4242");
  oci_cgroup_release (&cg);

  /* Gone: no pids. */
  cg.v1[cg.n_v1++] = strdup (at ("gone"));
  cr_assert_eq (oci_cgroup_pids (&cg, &pids, &n, &err), 0, "%s", etext (err));
  cr_assert_eq (n, 0);
  free (pids);
  oci_cgroup_release (&cg);
}

Test (fake, freeze_v2_and_no_freezer)
{
  mk ("v2/ctr");
  put ("v2/ctr/cgroup.freeze", "0\n");
  put ("v2/ctr/cgroup.events", "populated 1\nfrozen 1\n");
  struct oci_cgroup cg = { 0 };
  cg.v2 = strdup (at ("v2/ctr"));
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_freeze (&cg, true, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("v2/ctr/cgroup.freeze")), "1");
  put ("v2/ctr/cgroup.events", "populated 1\nfrozen 0\n");
  cr_assert_eq (oci_cgroup_freeze (&cg, false, &err), 0, "%s", etext (err));
  cr_assert_str_eq (slurp (at ("v2/ctr/cgroup.freeze")), "0");
  oci_cgroup_release (&cg);

  mk ("h/ctr");
  cg.v1[cg.n_v1++] = strdup (at ("h/ctr"));
  cr_assert_lt (oci_cgroup_freeze (&cg, true, &err), 0);
  cr_assert_eq (err->status, ENOTSUP, "%s", etext (err));
  csr_error_free (err);
  oci_cgroup_release (&cg);
}

Test (fake, error_removes_only_what_it_made)
{
  mk ("h1/x"); /* pre-existing parent: y and z are made */
  mk ("h2");   /* all of x/y/z made */
  mk ("h3/x/y/z");
  mk ("h3/x/y/z/pids.max"); /* a directory: writing the limit fails */
  const char *v1[] = { at ("h1"), at ("h2"), at ("h3"), NULL };
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/x/y/z", &res_full, NULL, v1, &cg, &a, &err), -1);
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
  cr_assert_eq (oci_cgroup_create ("/x/y/z", NULL, NULL, v1, &cg, &a, &err), -1);
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
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_create ("/pre/ctr", NULL, NULL, v1, &cg, &a, &err), 1, "%s",
                etext (err));
  cr_assert_eq (cg.n_v1, 2);
  mk ("h1/pre/ctr/nested/deeper"); /* the container's own cgroups */
  cr_assert_eq (oci_cgroup_destroy (&cg, &err), 0, "%s", etext (err));
  cr_assert_not (exists (at ("h1/pre/ctr")));
  cr_assert_not (exists (at ("h2/pre/ctr")));
  cr_assert (is_dir (at ("h1/pre")) && is_dir (at ("h2/pre")), "parents stay");
  oci_cgroup_release (&cg);
}

Test (fake, bad_paths)
{
  mk ("h");
  const char *v1[] = { at ("h"), NULL };
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  const char *bad[] = { "relative", "/", "/a/../b", NULL };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      csr_error *err = NULL;
      cr_assert_eq (oci_cgroup_create (bad[i], NULL, NULL, v1, &cg, &a, &err), -1);
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
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  if (oci_cgroup_create ("/x/y", &res_full, NULL, v1, &cg, &a, &err) != 1)
    return 1;
  if (cg.n_v1 != 1 || strcmp (cg.v1[0], at ("rw/x/y")) != 0)
    return 2;
  if (exists (at ("ro/x")))
    return 3;
  if (oci_cgroup_destroy (&cg, &err) < 0 || exists (at ("rw/x/y")) || !is_dir (at ("rw/x")))
    return 4;
  if (rmdir (at ("rw/x")) < 0) /* the parent: the test's to remove */
    return 8;
  oci_cgroup_release (&cg);
  const char *ro[] = { at ("ro"), NULL };
  if (oci_cgroup_create ("/x/y", &res_full, NULL, ro, &cg, &a, &err) != 0 || err)
    return 5;
  if (cg.n_v1 != 0 || cg.v2 || a.memory)
    return 6;
  /* rw/pre is root's: y cannot be made there. */
  const char *rw[] = { at ("rw"), NULL };
  if (oci_cgroup_create ("/pre/y", NULL, NULL, rw, &cg, &a, &err) != 0 || err)
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
  struct oci_cgroup cg;
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  int rc = oci_cgroup_create (path, &res_full, NULL, NULL, &cg, &a, &err);
  if (rc == 1)
    {
      oci_cgroup_destroy (&cg, NULL);
      oci_cgroup_release (&cg);
    }
  return rc == 0 && err == NULL && cg.v2 == NULL && cg.n_v1 == 0 ? 0 : 1;
}

Test (unpriv, host_rootless_is_zero)
{
  need_root ();
  as_nobody (nobody_host);
}

/* ---------------------------------------------------------------- real */

static struct oci_cgroup g_cg;
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
  oci_cgroup_destroy (&g_cg, NULL);
  oci_cgroup_release (&g_cg);
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
real_create (const char *leaf, const struct oci_cgroup_resources *r, struct oci_cgroup_applied *a)
{
  need_root ();
  char path[64];
  fmt (path, sizeof path, "/csrun-test-%ld/%s", (long)getpid (), leaf);
  csr_error *err = NULL;
  int rc = oci_cgroup_create (path, r, NULL, NULL, &g_cg, a, &err);
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
  const char *dirs[OCI_CG_MAX_DIRS + 1];
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
  const char *dirs[OCI_CG_MAX_DIRS + 1];
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
  oci_cgroup_release (&g_cg);
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

Test (real, lifecycle, .timeout = 60)
{
  struct oci_cgroup_resources r
      = { .memory_limit = 64 * MiB, .pids_limit = 20, .cpu_quota = 50000, .cpu_period = 100000 };
  struct oci_cgroup_applied a;
  real_create ("ctr", &r, &a);
  cr_assert (a.memory && a.pids && a.cpu && a.freezer, "memory %d pids %d cpu %d freezer %d",
             a.memory, a.pids, a.cpu, a.freezer);
  cr_assert_not (a.swap || a.shares, "not asked for");
  if (g_cg.v2)
    {
      cr_assert_str_eq (slurp (file_of ("memory.max")), "67108864");
      cr_assert_str_eq (slurp (file_of ("pids.max")), "20");
      cr_assert_str_eq (slurp (file_of ("cpu.max")), "50000 100000");
    }
  else
    {
      cr_assert_eq (count_ours (), g_cg.n_v1, "one directory per v1 hierarchy, no named ones");
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
  cr_assert_eq (oci_cgroup_enter (&g_cg, child, &err), 0, "%s", etext (err));
  cr_assert_eq (write (go, "G", 1), 1);
  close (go);

  char proc[64], want[128];
  fmt (proc, sizeof proc, "/proc/%ld/cgroup", (long)child);
  if (g_cg.v2)
    fmt (want, sizeof want, "0::/csrun-test-%ld/ctr\n", (long)getpid ());
  else
    fmt (want, sizeof want, ":memory:/csrun-test-%ld/ctr\n", (long)getpid ());
  const char *cgfile = slurp (proc);
  char cgtext[8192];
  fmt (cgtext, sizeof cgtext, "%s\n", cgfile);
  cr_assert (strstr (cgtext, want), "%s lacks %s:\n%s", proc, want, cgtext);

  pid_t *pids;
  size_t n;
  cr_assert_eq (oci_cgroup_pids (&g_cg, &pids, &n, &err), 0, "%s", etext (err));
  cr_assert_eq (n, 1);
  cr_assert_eq (pids[0], child);
  free (pids);

  cr_assert_eq (oci_cgroup_freeze (&g_cg, true, &err), 0, "%s", etext (err));
  if (g_cg.v2)
    cr_assert (strstr (slurp (file_of ("cgroup.events")), "frozen 1"));
  else
    cr_assert_str_eq (slurp (file_of ("freezer.state")), "FROZEN");
  cr_assert_eq (oci_cgroup_freeze (&g_cg, false, &err), 0, "%s", etext (err));
  if (g_cg.v2)
    cr_assert (strstr (slurp (file_of ("cgroup.events")), "frozen 0"));
  else
    cr_assert_str_eq (slurp (file_of ("freezer.state")), "THAWED");

  /* Destroy a frozen container: it thaws, kills, removes the leaf. */
  cr_assert_eq (oci_cgroup_freeze (&g_cg, true, &err), 0, "%s", etext (err));
  cr_assert_eq (oci_cgroup_destroy (&g_cg, &err), 0, "%s", etext (err));
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  g_child = -1;
  cr_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL, "status %#x", status);
  if (g_cg.v2)
    cr_assert_not (exists (g_cg.v2));
  for (size_t i = 0; i < g_cg.n_v1; i++)
    cr_assert_not (exists (g_cg.v1[i]), "%s is left", g_cg.v1[i]);
  cr_assert_eq (count_ours (), g_cg.v2 ? 1 : g_cg.n_v1, "the parents stay");
  remove_parents ();
}

Test (real, memory_limit_oom_kills, .timeout = 60)
{
  struct oci_cgroup_resources r = { .memory_limit = 64 * MiB, .memory_swap = 64 * MiB };
  struct oci_cgroup_applied a;
  real_create ("oom", &r, &a);
  cr_assert (a.memory);
  int go;
  pid_t child = start_child (eat_200mib, &go);
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_enter (&g_cg, child, &err), 0, "%s", etext (err));
  cr_assert_eq (write (go, "G", 1), 1);
  close (go);
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  g_child = -1;
  cr_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL,
             "the 200 MiB child must be OOM-killed (status %#x)", status);
  const char *ev = slurp (file_of (g_cg.v2 ? "memory.events" : "memory.oom_control"));
  const char *k = strstr (ev, "oom_kill ");
  cr_assert_not_null (k, "%s", ev);
  cr_assert_geq (atol (k + 9), 1, "%s", ev);
  cr_assert_eq (oci_cgroup_destroy (&g_cg, &err), 0, "%s", etext (err));
  remove_parents ();
}

Test (real, refused_limit_leaves_nothing, .timeout = 60)
{
  need_root ();
  char path[64];
  fmt (path, sizeof path, "/csrun-test-%ld/bad", (long)getpid ());
  /* The kernel refuses a quota below 1 ms. */
  struct oci_cgroup_resources r = { .memory_limit = 64 * MiB, .cpu_quota = 500 };
  struct oci_cgroup_applied a;
  csr_error *err = NULL;
  int rc = oci_cgroup_create (path, &r, NULL, NULL, &g_cg, &a, &err);
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

Test (real, populated_leaf_refused, .timeout = 60)
{
  struct oci_cgroup_applied a;
  real_create ("busy", NULL, &a);
  int go;
  pid_t child = start_child (sleep_forever, &go);
  csr_error *err = NULL;
  cr_assert_eq (oci_cgroup_enter (&g_cg, child, &err), 0, "%s", etext (err));
  char path[64];
  fmt (path, sizeof path, "/csrun-test-%ld/busy", (long)getpid ());
  struct oci_cgroup cg2;
  cr_assert_eq (oci_cgroup_create (path, NULL, NULL, NULL, &cg2, &a, &err), -1);
  cr_assert_eq (err->status, EBUSY, "%s", etext (err));
  csr_error_free (err);
  err = NULL;
  pid_t *pids;
  size_t n;
  cr_assert_eq (oci_cgroup_pids (&g_cg, &pids, &n, &err), 0, "%s", etext (err));
  cr_assert_eq (n, 1, "the first cgroup is untouched");
  free (pids);
  cr_assert_eq (oci_cgroup_destroy (&g_cg, &err), 0, "%s", etext (err));
  int status;
  cr_assert_eq (waitpid (child, &status, 0), child);
  g_child = -1;
  cr_assert (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL, "status %#x", status);
  close (go);
  remove_parents ();
}
