#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "supervisor/notice.h"

Test (notice, boot_id_shape)
{
  char out[37];
  cr_assert (csr_notice_boot_id ("a109b8e1-fe8d-420b-8dde-efd1d491e9a4\n", 37, out));
  cr_assert_str_eq (out, "a109b8e1-fe8d-420b-8dde-efd1d491e9a4");
  cr_assert (csr_notice_boot_id ("a109b8e1-fe8d-420b-8dde-efd1d491e9a4", 36, out));
  cr_assert_not (csr_notice_boot_id ("a109b8e1-fe8d-420b-8dde-efd1d491e9a", 35, out));
  cr_assert_not (csr_notice_boot_id ("../../../etc/passwd-fe8d-420b-8dde-e", 36, out));
  cr_assert_not (csr_notice_boot_id ("A109B8E1-FE8D-420B-8DDE-EFD1D491E9A4", 36, out));
  cr_assert_not (csr_notice_boot_id ("a109b8e1xfe8d-420b-8dde-efd1d491e9a4", 36, out));
  cr_assert_not (csr_notice_boot_id (NULL, 0, out));
}

static int
first (const char *dir)
{
  csr_error *e = NULL;
  int r = csr_notice_first (dir, "limits-warned", &e);
  if (r < 0)
    cr_log_info ("csr_notice_first: %s", csr_error_text (e));
  csr_error_free (e);
  return r;
}

Test (notice, once_per_dir_and_boot)
{
  if (access ("/proc/sys/kernel/random/boot_id", R_OK) != 0)
    cr_skip_test ("no /proc/sys/kernel/random/boot_id here");
  char *dir = test_tmpdir ("notice");
  char *other = test_tmpdir ("notice2");
  /* An earlier boot's marker goes when a new one is made. */
  char old[4096];
  fmt (old, sizeof old, "%s/limits-warned.00000000-0000-0000-0000-000000000000", dir);
  int fd = open (old, O_WRONLY | O_CREAT | O_EXCL, 0600);
  cr_assert_geq (fd, 0);
  close (fd);
  cr_assert_eq (first (dir), 1);
  cr_assert_eq (access (old, F_OK), -1, "the old boot's marker is still there");
  cr_assert_eq (first (dir), 0);
  cr_assert_eq (first (dir), 0);
  cr_assert_eq (first (other), 1, "another cache directory has its own marker");
  test_tmpdir_remove (dir);
  test_tmpdir_remove (other);
  free (dir);
  free (other);
}

Test (notice, foreign_entry_is_not_trusted)
{
  if (access ("/proc/sys/kernel/random/boot_id", R_OK) != 0)
    cr_skip_test ("no /proc/sys/kernel/random/boot_id here");
  char *dir = test_tmpdir ("notice3");
  char *text = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  cr_assert_eq (csr_read_file ("/proc/sys/kernel/random/boot_id", 256, &text, &len, &e), 0);
  char boot[37];
  cr_assert (csr_notice_boot_id (text, len, boot));
  free (text);
  /* A symlink where the marker goes: never followed, never counted as said. */
  char link[4096];
  fmt (link, sizeof link, "%s/limits-warned.%s", dir, boot);
  cr_assert_eq (symlink ("/etc/passwd", link), 0);
  cr_assert_eq (first (dir), -1);
  /* A marker writable by others: not ours to trust either. */
  cr_assert_eq (unlink (link), 0);
  int fd = open (link, O_WRONLY | O_CREAT | O_EXCL, 0600);
  cr_assert_geq (fd, 0);
  cr_assert_eq (fchmod (fd, 0666), 0);
  close (fd);
  cr_assert_eq (first (dir), -1);
  cr_assert_eq (first (NULL), -1);
  cr_assert_eq (first ("relative/missing/dir"), -1);
  test_tmpdir_remove (dir);
  free (dir);
}
