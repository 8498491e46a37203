#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/subcgroup.h"

static const char mountinfo[]
    = "25 30 0:22 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
      "26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
      "27 25 0:24 / /sys/fs/cgroup/systemd rw,nosuid - cgroup cgroup rw,xattr,name=systemd\n"
      "30 25 0:27 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
      "31 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
      "32 25 0:29 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids\n";

static char *v1[]
    = { "/sys/fs/cgroup/memory/c", "/sys/fs/cgroup/cpu,cpuacct/c", "/sys/fs/cgroup/pids/c" };
static const char *v2 = "/sys/fs/cgroup/unified/c";

static char **
dirs_ok (const char *const *args, size_t n_args, size_t *n)
{
  char **d = NULL;
  csr_error *err = NULL;
  int r = csr_cgroup_exec_dirs (v2, v1, 3, args, n_args, mountinfo, &d, n, &err);
  cr_assert_eq (r, 0, "%s", err ? csr_error_text (err) : "");
  cr_assert_eq (*n, 4);
  return d;
}

static void
dirs_err (const char *const *args, size_t n_args, const char *want)
{
  char **d = NULL;
  size_t n = 0;
  csr_error *err = NULL;
  cr_assert_lt (csr_cgroup_exec_dirs (v2, v1, 3, args, n_args, mountinfo, &d, &n, &err), 0);
  cr_expect (strstr (csr_error_text (err), want) != NULL, "\"%s\", expected \"%s\"",
             csr_error_text (err), want);
  csr_error_free (err);
}

Test (sub_cgroup, resolves_lexically_and_stays_below)
{
  char *p = NULL;
  cr_assert_eq (csr_cgroup_sub_path ("/a/b", "c/./d/../e//", &p, NULL), 0);
  cr_expect_str_eq (p, "/a/b/c/e");
  free (p);
  cr_assert_eq (csr_cgroup_sub_path ("/a/b/", "/", &p, NULL), 0);
  cr_expect_str_eq (p, "/a/b");
  free (p);
  csr_error *err = NULL;
  cr_assert_lt (csr_cgroup_sub_path ("/a/b", "c/../..", &p, &err), 0);
  cr_expect (strstr (csr_error_text (err), "c/../.. is not a sub cgroup path") != NULL);
  csr_error_free (err);
}

Test (exec_cgroup, none_means_the_container_s_own)
{
  size_t n;
  char **d = dirs_ok (NULL, 0, &n);
  cr_expect_str_eq (d[0], v1[0]);
  cr_expect_str_eq (d[3], v2);
  csr_cgroup_exec_dirs_free (d, n);
}

Test (exec_cgroup, one_path_for_every_hierarchy)
{
  const char *args[] = { "sub/x" };
  size_t n;
  char **d = dirs_ok (args, 1, &n);
  cr_expect_str_eq (d[0], "/sys/fs/cgroup/memory/c/sub/x");
  cr_expect_str_eq (d[1], "/sys/fs/cgroup/cpu,cpuacct/c/sub/x");
  cr_expect_str_eq (d[3], "/sys/fs/cgroup/unified/c/sub/x");
  csr_cgroup_exec_dirs_free (d, n);
}

Test (exec_cgroup, per_controller_paths)
{
  const char *args[] = { "memory:m", "cpu,cpuacct:c2" };
  size_t n;
  char **d = dirs_ok (args, 2, &n);
  cr_expect_str_eq (d[0], "/sys/fs/cgroup/memory/c/m");
  cr_expect_str_eq (d[1], "/sys/fs/cgroup/cpu,cpuacct/c/c2");
  cr_expect_str_eq (d[2], "/sys/fs/cgroup/pids/c");
  cr_expect_str_eq (d[3], v2);
  csr_cgroup_exec_dirs_free (d, n);
}

Test (exec_cgroup, runc_s_errors)
{
  const char *a1[] = { ".." };
  dirs_err (a1, 1, ".. is not a sub cgroup path");
  const char *a2[] = { "whaaat:/" };
  dirs_err (a2, 1, "unknown controller whaaat");
  const char *a3[] = { "a:b:c" };
  dirs_err (a3, 1, "invalid --cgroup argument: a:b:c");
  const char *a4[] = { "memory:m", "sub" };
  dirs_err (a4, 2, "missing <controller>: prefix");
  const char *a5[] = { "systemd:/" }; /* name=systemd is no controller */
  dirs_err (a5, 1, "unknown controller systemd");
}
