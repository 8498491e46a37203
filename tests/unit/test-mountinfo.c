#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "cgroup/mountinfo.h"

static const char sample[]
    = "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
      "35 24 0:30 / /sys/fs/cgroup/unified rw,nosuid shared:10 master:3 - cgroup2 cgroup2 "
      "rw,nsdelegate\n"
      "40 24 0:35 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
      "90 22 8:1 /srv/data\\040dir /mnt/my\\040data\\011tab rw,relatime - ext4 /dev/sda\\0401 rw\n"
      "garbage line without separator\n"
      "91 22 8:1 / /bad rw - \n";

Test (mountinfo, fields_and_optional)
{
  struct csr_mountinfo mi;
  cr_assert_eq (csr_mountinfo_parse (sample, &mi, NULL), 0);
  cr_assert_eq (mi.n, 4, "the malformed lines are skipped");
  cr_expect_eq (mi.e[0].id, 22);
  cr_expect_eq (mi.e[0].parent, 1);
  cr_expect_eq (mi.e[0].major, 0);
  cr_expect_eq (mi.e[0].minor, 21);
  cr_expect_str_eq (mi.e[0].mount_point, "/proc");
  cr_expect_str_eq (mi.e[0].optional, "shared:12");
  cr_expect_str_eq (mi.e[0].fstype, "proc");
  cr_expect_str_eq (mi.e[1].optional, "shared:10 master:3", "all optional fields kept");
  cr_expect_str_eq (mi.e[1].fstype, "cgroup2");
  cr_expect_str_eq (mi.e[1].super_opts, "rw,nsdelegate");
  cr_expect_str_eq (mi.e[2].optional, "", "no optional fields");
  cr_expect_str_eq (mi.e[2].mount_opts, "rw");
  cr_expect (csr_mountinfo_has_opt (mi.e[2].super_opts, "cpuacct"));
  cr_expect (csr_mountinfo_has_opt (mi.e[2].super_opts, "cpu"));
  cr_expect_not (csr_mountinfo_has_opt (mi.e[2].super_opts, "cpuset"));
  csr_mountinfo_release (&mi);
}

Test (mountinfo, escapes_and_bind_of_a_subdir)
{
  struct csr_mountinfo mi;
  cr_assert_eq (csr_mountinfo_parse (sample, &mi, NULL), 0);
  cr_assert_eq (mi.n, 4);
  const struct csr_mountinfo_entry *e = &mi.e[3];
  cr_expect_str_eq (e->root, "/srv/data dir", "a bind of a subdirectory shows it as root");
  cr_expect_str_eq (e->mount_point, "/mnt/my data\ttab");
  cr_expect_str_eq (e->source, "/dev/sda 1");
  cr_expect_eq (e->major, 8);
  cr_expect_eq (e->minor, 1);
  csr_mountinfo_release (&mi);
}

Test (mountinfo, under)
{
  cr_expect (csr_mountinfo_under ("/sys/fs/cgroup/memory/a", "/sys/fs/cgroup/memory"));
  cr_expect (csr_mountinfo_under ("/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory"));
  cr_expect_not (csr_mountinfo_under ("/sys/fs/cgroup/memoryx", "/sys/fs/cgroup/memory"));
  cr_expect (csr_mountinfo_under ("/anything", "/"));
}

Test (mountinfo, self)
{
  struct csr_mountinfo mi;
  cr_assert_eq (csr_mountinfo_read (&mi, NULL), 0);
  bool root = false;
  for (size_t i = 0; i < mi.n; i++)
    root = root || strcmp (mi.e[i].mount_point, "/") == 0;
  cr_expect (root, "/proc/self/mountinfo shows /");
  csr_mountinfo_release (&mi);
}
