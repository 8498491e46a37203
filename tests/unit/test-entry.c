/* Unit tests for csr_tar_entry_check(): the policy for one archive entry. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "rootfs/rootfs.h"

static void
expect_ok (const char *path, mode_t mode, const char *link, bool hardlink)
{
  csr_error *err = NULL;
  int r = csr_tar_entry_check (path, mode, link, hardlink, &err);
  cr_assert_eq (r, 0, "entry '%s' (mode 0%o) was refused: %s", path, (unsigned)mode,
                err ? csr_error_text (err) : "(no error set)");
  cr_assert_null (err);
}

/* Refused, with an error that names the entry and contains NEEDLE. */
static void
expect_refused (const char *path, mode_t mode, const char *link, bool hardlink, const char *needle)
{
  csr_error *err = NULL;
  int r = csr_tar_entry_check (path, mode, link, hardlink, &err);
  cr_assert_lt (r, 0, "entry '%s' (mode 0%o) was accepted", path, (unsigned)mode);
  cr_assert_not_null (err, "no error set for '%s'", path);
  const char *text = csr_error_text (err);
  char quoted[512];
  snprintf (quoted, sizeof quoted, "'%s'", path);
  cr_assert_not_null (strstr (text, quoted), "error does not name the entry %s: %s", quoted, text);
  cr_assert_not_null (strstr (text, needle), "error lacks \"%s\": %s", needle, text);
  csr_error_free (err);
}

Test (entry, normal_file)
{
  expect_ok ("usr/bin/python3.11", S_IFREG | 0755, NULL, false);
  expect_ok ("etc/passwd", S_IFREG | 0644, NULL, false);
  expect_ok ("usr/lib/", S_IFDIR | 0755, NULL, false);
}

Test (entry, dot_slash_prefix)
{
  expect_ok ("./usr/lib/python3.11/os.py", S_IFREG | 0644, NULL, false);
  expect_ok ("./usr//lib/./x", S_IFREG | 0644, NULL, false);
  expect_ok ("./", S_IFDIR | 0755, NULL, false);
  expect_ok (".", S_IFDIR | 0755, NULL, false);
}

Test (entry, dots_inside_names_are_fine)
{
  expect_ok ("a/..b", S_IFREG | 0644, NULL, false);
  expect_ok ("a/b..", S_IFREG | 0644, NULL, false);
  expect_ok ("...", S_IFREG | 0644, NULL, false);
}

Test (entry, absolute_path)
{
  expect_refused ("/etc/passwd", S_IFREG | 0644, NULL, false, "absolute");
  expect_refused ("/", S_IFDIR | 0755, NULL, false, "absolute");
}

Test (entry, dotdot_inside)
{
  expect_refused ("a/../b", S_IFREG | 0644, NULL, false, "'..'");
}

Test (entry, dotdot_alone)
{
  expect_refused ("..", S_IFDIR | 0755, NULL, false, "'..'");
  expect_refused ("../x", S_IFREG | 0644, NULL, false, "'..'");
  expect_refused ("./../x", S_IFREG | 0644, NULL, false, "'..'");
}

Test (entry, dotdot_trailing)
{
  expect_refused ("a/b/..", S_IFDIR | 0755, NULL, false, "'..'");
  expect_refused ("a/..//", S_IFDIR | 0755, NULL, false, "'..'");
}

Test (entry, char_device)
{
  expect_refused ("dev/null", S_IFCHR | 0666, NULL, false, "character device");
}

Test (entry, block_device)
{
  expect_refused ("dev/sda", S_IFBLK | 0660, NULL, false, "block device");
}

Test (entry, fifo)
{
  expect_refused ("run/fifo", S_IFIFO | 0644, NULL, false, "FIFO");
}

Test (entry, socket)
{
  expect_refused ("run/sock", S_IFSOCK | 0755, NULL, false, "socket");
}

Test (entry, setuid_file)
{
  expect_refused ("usr/bin/su", S_IFREG | 04755, NULL, false, "setuid");
}

Test (entry, setgid_dir)
{
  expect_refused ("var/mail/", S_IFDIR | 02775, NULL, false, "setgid");
}

Test (entry, setgid_file)
{
  expect_refused ("usr/bin/wall", S_IFREG | 02755, NULL, false, "setgid");
}

Test (entry, sticky_dir_allowed)
{
  expect_ok ("tmp/", S_IFDIR | 01777, NULL, false);
}

Test (entry, symlink_absolute_target_allowed)
{
  expect_ok ("usr/bin/python3", S_IFLNK | 0777, "/usr/bin/python3.11", false);
  expect_ok ("lib", S_IFLNK | 0777, "usr/lib", false);
  /* Resolved inside the jail: ".." in a target is harmless. */
  expect_ok ("usr/lib/x", S_IFLNK | 0777, "../../etc/passwd", false);
}

Test (entry, symlink_without_target)
{
  expect_refused ("a", S_IFLNK | 0777, NULL, false, "symlink");
  expect_refused ("a", S_IFLNK | 0777, "", false, "symlink");
}

Test (entry, hardlink_relative_allowed)
{
  expect_ok ("usr/bin/python3", S_IFREG | 0755, "usr/bin/python3.11", true);
  expect_ok ("usr/bin/python3", S_IFREG | 0755, "./usr/bin/python3.11", true);
  /* Some writers give a hardlink entry no file type at all. */
  expect_ok ("b", 0644, "a", true);
}

Test (entry, hardlink_absolute_source)
{
  expect_refused ("x", S_IFREG | 0644, "/etc/shadow", true, "absolute");
}

Test (entry, hardlink_dotdot_source)
{
  expect_refused ("x", S_IFREG | 0644, "../../etc/shadow", true, "'..'");
  expect_refused ("x", S_IFREG | 0644, "a/../../b", true, "'..'");
}

Test (entry, hardlink_without_source)
{
  expect_refused ("x", S_IFREG | 0644, NULL, true, "hardlink");
  expect_refused ("x", S_IFREG | 0644, "", true, "hardlink");
  expect_refused ("x", S_IFREG | 0644, "./", true, "hardlink");
}

Test (entry, hardlink_with_special_type)
{
  expect_refused ("x", S_IFCHR | 0644, "a", true, "character device");
  expect_refused ("x", S_IFREG | 04755, "a", true, "setuid");
}

Test (entry, top_replaced)
{
  expect_refused ("./", S_IFLNK | 0777, "/", false, "symlink");
  expect_refused (".", S_IFREG | 0644, NULL, false, "file");
}

Test (entry, empty_name)
{
  csr_error *err = NULL;
  cr_assert_lt (csr_tar_entry_check ("", S_IFREG | 0644, NULL, false, &err), 0);
  cr_assert_not_null (err);
  csr_error_free (err);
  err = NULL;
  cr_assert_lt (csr_tar_entry_check (NULL, S_IFREG | 0644, NULL, false, &err), 0);
  cr_assert_not_null (err);
  csr_error_free (err);
}

Test (entry, control_characters_refused_and_escaped)
{
  csr_error *err = NULL;
  cr_assert_lt (csr_tar_entry_check ("a\nb", S_IFREG | 0644, NULL, false, &err), 0);
  const char *text = csr_error_text (err);
  cr_assert_null (strchr (text, '\n'), "the message must stay on one line: %s", text);
  cr_assert_not_null (strstr (text, "a\\012b"), "%s", text);
  csr_error_free (err);
}

Test (entry, unsupported_type)
{
  csr_error *err = NULL;
  cr_assert_lt (csr_tar_entry_check ("x", 0644, NULL, false, &err), 0);
  cr_assert_not_null (strstr (csr_error_text (err), "'x'"));
  csr_error_free (err);
}

Test (entry, null_err_is_allowed)
{
  cr_assert_lt (csr_tar_entry_check ("/x", S_IFREG | 0644, NULL, false, NULL), 0);
  cr_assert_eq (csr_tar_entry_check ("x", S_IFREG | 0644, NULL, false, NULL), 0);
}
