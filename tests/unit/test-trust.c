#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/trust.h"

#include "helpers.h"

/* A private directory (0700) for one test, with its real path. */
static char *
make_tmpdir (void)
{
  char *dir = test_tmpdir ("trust");
  char *real = realpath (dir, NULL);
  cr_assert_not_null (real);
  free (dir);
  return real;
}

static char *
sub (const char *dir, const char *name)
{
  char *p = NULL;
  cr_assert_geq (asprintf (&p, "%s/%s", dir, name), 0);
  return p;
}

static void
cleanup_dir (char *dir)
{
  cr_assert_eq (csr_rm_rf (dir, NULL), 0);
  free (dir);
}

/* ------------------------------------------------------------- the rule */

Test (rule, owner_and_mode)
{
  /* The directory itself: ours, no group/other write, sticky or not. */
  cr_assert (csr_trust_dir_ok (1000, 040700, 1000, false, false, 0));
  cr_assert (csr_trust_dir_ok (1000, 040755, 1000, false, false, 0));
  cr_assert_not (csr_trust_dir_ok (0, 040700, 1000, false, false, 0));
  cr_assert_not (csr_trust_dir_ok (1001, 040700, 1000, false, false, 0));
  cr_assert_not (csr_trust_dir_ok (1000, 040770, 1000, false, false, 0));
  cr_assert_not (csr_trust_dir_ok (1000, 040702, 1000, false, false, 0));
  cr_assert_not (csr_trust_dir_ok (1000, 041777, 1000, false, false, 0));
  /* Above it: root's or ours; writable by others only when sticky. */
  cr_assert (csr_trust_dir_ok (0, 040755, 1000, true, false, 0));
  cr_assert (csr_trust_dir_ok (0, 041777, 1000, true, false, 0));
  cr_assert (csr_trust_dir_ok (1000, 040711, 1000, true, false, 0));
  cr_assert_not (csr_trust_dir_ok (0, 040777, 1000, true, false, 0));
  cr_assert_not (csr_trust_dir_ok (0, 040775, 1000, true, false, 0));
  cr_assert_not (csr_trust_dir_ok (1001, 040755, 1000, true, false, 0));
  cr_assert_not (csr_trust_dir_ok (65534, 040755, 0, true, false, 65534));
  /* The overflow uid (host root seen from a user namespace): above only. */
  cr_assert (csr_trust_dir_ok (65534, 040755, 0, true, true, 65534));
  cr_assert_not (csr_trust_dir_ok (65534, 040755, 0, false, true, 65534));
}

/* ------------------------------------------------------------- directories */

Test (dir, creates_missing_components_with_the_mode)
{
  char *base = make_tmpdir ();
  char *path = sub (base, "a/b/c");
  char *canon = NULL;
  csr_error *err = NULL;
  mode_t old = umask (022);
  int fd = csr_trust_open_dir ("cache directory", path, 0700, &canon, &err);
  umask (old);
  cr_assert_geq (fd, 0, "%s", err ? csr_error_text (err) : "");
  cr_assert_str_eq (canon, path);
  struct stat st;
  cr_assert_eq (fstat (fd, &st), 0);
  cr_assert (S_ISDIR (st.st_mode));
  cr_assert_eq (st.st_mode & 07777, 0700);
  char *a = sub (base, "a");
  cr_assert_eq (stat (a, &st), 0);
  cr_assert_eq (st.st_mode & 07777, 0700, "a created parent: 0%o", st.st_mode & 07777);
  /* The descriptor can be read and written through (fsync, mkdirat). */
  cr_assert_eq (fsync (fd), 0);
  cr_assert_eq (mkdirat (fd, "x", 0700), 0);
  close (fd);
  /* Without CREATE_MODE nothing is made. */
  char *missing = sub (base, "nope");
  cr_assert_eq (csr_trust_open_dir ("d", missing, 0, NULL, NULL), -1);
  cr_assert_eq (access (missing, F_OK), -1);
  free (missing);
  free (a);
  free (canon);
  free (path);
  cleanup_dir (base);
}

Test (dir, existing_0755_is_accepted_writable_by_others_is_refused)
{
  char *base = make_tmpdir ();
  char *d = sub (base, "d");
  cr_assert_eq (mkdir (d, 0755), 0);
  cr_assert_eq (chmod (d, 0755), 0);
  int fd = csr_trust_open_dir ("d", d, 0700, NULL, NULL);
  cr_assert_geq (fd, 0);
  close (fd);
  static const mode_t bad[] = { 0775, 0757, 0777, 01777, 0720 };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      csr_error *err = NULL;
      cr_assert_eq (chmod (d, bad[i]), 0);
      cr_assert_eq (csr_trust_open_dir ("cache directory", d, 0700, NULL, &err), CSR_TRUST_REFUSED,
                    "mode 0%o", bad[i]);
      char want[PATH_MAX + 100];
      snprintf (want, sizeof want,
                "cache directory '%s': refused: writable by group or others (mode %04o)", d,
                bad[i]);
      cr_assert_str_eq (csr_error_text (err), want);
      csr_error_free (err);
    }
  free (d);
  cleanup_dir (base);
}

Test (dir, an_ancestor_writable_by_others_must_be_sticky)
{
  char *base = make_tmpdir ();
  char *open_dir = sub (base, "open"), *cache = sub (base, "open/cache");
  cr_assert_eq (mkdir (open_dir, 0777), 0);
  cr_assert_eq (chmod (open_dir, 0777), 0);
  csr_error *err = NULL;
  cr_assert_eq (csr_trust_open_dir ("c", cache, 0700, NULL, &err), CSR_TRUST_REFUSED);
  cr_assert_not_null (strstr (csr_error_text (err), open_dir), "%s", csr_error_text (err));
  cr_assert_eq (access (cache, F_OK), -1, "created below an untrusted directory");
  csr_error_free (err);
  err = NULL;
  cr_assert_eq (chmod (open_dir, 01777), 0);
  int fd = csr_trust_open_dir ("c", cache, 0700, NULL, &err);
  cr_assert_geq (fd, 0, "%s", err ? csr_error_text (err) : "");
  close (fd);
  free (cache);
  free (open_dir);
  cleanup_dir (base);
}

Test (dir, a_directory_owned_by_someone_else_is_refused)
{
  if (geteuid () != 0)
    {
      /* Rootless, root's / is the one at hand. */
      csr_error *err = NULL;
      cr_assert_eq (csr_trust_open_dir ("cache directory", "/", 0700, NULL, &err),
                    CSR_TRUST_REFUSED);
      cr_assert_not_null (strstr (csr_error_text (err), "owned by root (uid 0), not by you"), "%s",
                          csr_error_text (err));
      csr_error_free (err);
      return;
    }
  char *base = make_tmpdir ();
  cr_assert_eq (chmod (base, 0755), 0);
  char *theirs = sub (base, "theirs"), *below = sub (base, "theirs/mine");
  cr_assert_eq (mkdir (theirs, 0755), 0);
  cr_assert_eq (mkdir (below, 0700), 0);
  cr_assert_eq (chown (theirs, 65534, 65534), 0);
  csr_error *err = NULL;
  cr_assert_eq (csr_trust_open_dir ("cache directory", theirs, 0700, NULL, &err),
                CSR_TRUST_REFUSED);
  cr_assert_not_null (strstr (csr_error_text (err), "(uid 65534), not by you (uid 0)"), "%s",
                      csr_error_text (err));
  csr_error_free (err);
  err = NULL;
  /* Ours, but in their directory: they could swap it. */
  cr_assert_eq (csr_trust_open_dir ("cache directory", below, 0700, NULL, &err), CSR_TRUST_REFUSED);
  cr_assert_not_null (strstr (csr_error_text (err), theirs), "%s", csr_error_text (err));
  cr_assert_not_null (strstr (csr_error_text (err), "or root"), "%s", csr_error_text (err));
  csr_error_free (err);
  free (below);
  free (theirs);
  cleanup_dir (base);
}

Test (dir, dot_dotdot_relative_and_trusted_symlinks)
{
  char *base = make_tmpdir ();
  char *real = sub (base, "real"), *link = sub (base, "link"), *rel = sub (base, "rel");
  cr_assert_eq (mkdir (real, 0700), 0);
  cr_assert_eq (symlink (real, link), 0);
  cr_assert_eq (symlink ("./real/../real", rel), 0);
  char *paths[4];
  cr_assert_geq (asprintf (&paths[0], "%s/./real/", base), 0);
  cr_assert_geq (asprintf (&paths[1], "%s/real/../real", base), 0);
  paths[2] = strdup (link);
  paths[3] = strdup (rel);
  for (size_t i = 0; i < 4; i++)
    {
      char *canon = NULL;
      csr_error *err = NULL;
      int fd = csr_trust_open_dir ("d", paths[i], 0, &canon, &err);
      cr_assert_geq (fd, 0, "%s: %s", paths[i], err ? csr_error_text (err) : "");
      cr_assert_str_eq (canon, real, "%s", paths[i]);
      close (fd);
      free (canon);
      free (paths[i]);
    }
  /* Relative to the working directory. */
  char cwd[PATH_MAX];
  cr_assert_not_null (getcwd (cwd, sizeof cwd));
  cr_assert_eq (chdir (base), 0);
  char *canon = NULL;
  int fd = csr_trust_open_dir ("d", "real", 0, &canon, NULL);
  cr_assert_eq (chdir (cwd), 0);
  cr_assert_geq (fd, 0);
  cr_assert_str_eq (canon, real);
  close (fd);
  free (canon);
  /* A loop ends. */
  char *loop = sub (base, "loop");
  cr_assert_eq (symlink ("loop", loop), 0);
  csr_error *err = NULL;
  cr_assert_eq (csr_trust_open_dir ("d", loop, 0, NULL, &err), -1);
  cr_assert_eq (err->status, ELOOP);
  csr_error_free (err);
  /* Not a directory. */
  char *file = sub (base, "file");
  cr_assert_eq (csr_write_file_atomic (file, "x", 1, 0600, NULL), 0);
  err = NULL;
  cr_assert_eq (csr_trust_open_dir ("d", file, 0700, NULL, &err), -1);
  cr_assert_eq (err->status, ENOTDIR);
  csr_error_free (err);
  free (file);
  free (loop);
  free (rel);
  free (link);
  free (real);
  cleanup_dir (base);
}

Test (dir, a_symlink_owned_by_someone_else_is_refused)
{
  if (geteuid () != 0)
    cr_skip_test ("n/a: making another user's symlink needs root");
  char *base = make_tmpdir ();
  char *real = sub (base, "real"), *link = sub (base, "link");
  cr_assert_eq (mkdir (real, 0700), 0);
  cr_assert_eq (symlink (real, link), 0);
  cr_assert_eq (lchown (link, 65534, 65534), 0);
  csr_error *err = NULL;
  cr_assert_eq (csr_trust_open_dir ("d", link, 0, NULL, &err), CSR_TRUST_REFUSED);
  cr_assert_not_null (strstr (csr_error_text (err), "a symbolic link owned by"), "%s",
                      csr_error_text (err));
  csr_error_free (err);
  free (link);
  free (real);
  cleanup_dir (base);
}

Test (dir, subdirectories_are_ours_and_never_symlinks)
{
  char *base = make_tmpdir ();
  int fd = csr_trust_open_dir ("d", base, 0, NULL, NULL);
  cr_assert_geq (fd, 0);
  int s = csr_trust_open_subdir (fd, base, "seccomp", 0700, NULL);
  cr_assert_geq (s, 0);
  struct stat st;
  cr_assert_eq (fstat (s, &st), 0);
  cr_assert_eq (st.st_mode & 07777, 0700);
  close (s);
  cr_assert_eq (symlinkat ("seccomp", fd, "gate"), 0);
  csr_error *err = NULL;
  cr_assert_lt (csr_trust_open_subdir (fd, base, "gate", 0700, &err), 0);
  csr_error_free (err);
  err = NULL;
  cr_assert_eq (fchmodat (fd, "seccomp", 0770, 0), 0);
  cr_assert_eq (csr_trust_open_subdir (fd, base, "seccomp", 0700, &err), CSR_TRUST_REFUSED);
  csr_error_free (err);
  close (fd);
  cleanup_dir (base);
}

/* ------------------------------------------------------------- files */

Test (file, read_only_what_is_ours_and_plain)
{
  char *base = make_tmpdir ();
  int fd = csr_trust_open_dir ("d", base, 0, NULL, NULL);
  cr_assert_geq (fd, 0);
  cr_assert_eq (csr_trust_write_at (fd, "entry", "hello", 5, 0600, NULL), 0);
  char *data = NULL;
  size_t len = 0;
  cr_assert_eq (csr_trust_read_at (fd, "entry", 100, &data, &len, NULL), 0);
  cr_assert_eq (len, 5);
  cr_assert_str_eq (data, "hello");
  free (data);
  struct stat st;
  cr_assert_eq (fstatat (fd, "entry", &st, 0), 0);
  cr_assert_eq (st.st_mode & 07777, 0600);
  /* Absent: ENOENT. */
  csr_error *err = NULL;
  cr_assert_eq (csr_trust_read_at (fd, "absent", 100, &data, &len, &err), -1);
  cr_assert_eq (err->status, ENOENT);
  csr_error_free (err);
  /* Too large, a symlink, a FIFO (no hang), group-writable: misses. */
  cr_assert_eq (csr_trust_read_at (fd, "entry", 4, &data, &len, NULL), -1);
  cr_assert_eq (symlinkat ("entry", fd, "link"), 0);
  cr_assert_eq (csr_trust_read_at (fd, "link", 100, &data, &len, NULL), -1);
  cr_assert_eq (mkfifoat (fd, "fifo", 0600), 0);
  cr_assert_eq (csr_trust_read_at (fd, "fifo", 100, &data, &len, NULL), -1);
  cr_assert_eq (fchmodat (fd, "entry", 0620, 0), 0);
  cr_assert_eq (csr_trust_read_at (fd, "entry", 100, &data, &len, NULL), -1);
  cr_assert_eq (fchmodat (fd, "entry", 0600, 0), 0);
  if (geteuid () == 0)
    {
      cr_assert_eq (fchownat (fd, "entry", 65534, 65534, 0), 0);
      err = NULL;
      cr_assert_eq (csr_trust_read_at (fd, "entry", 100, &data, &len, &err), -1);
      cr_assert_not_null (strstr (csr_error_text (err), "not by you"), "%s", csr_error_text (err));
      csr_error_free (err);
    }
  /* Writing replaces, whatever was there (even a symlink: not followed). */
  cr_assert_eq (csr_trust_write_at (fd, "link", "new", 3, 0600, NULL), 0);
  cr_assert_eq (csr_trust_read_at (fd, "link", 100, &data, &len, NULL), 0);
  cr_assert_str_eq (data, "new");
  free (data);
  cr_assert_eq (fstatat (fd, "entry", &st, AT_SYMLINK_NOFOLLOW), 0);
  cr_assert_eq (st.st_size, 5, "the link's target was written");
  close (fd);
  /* No temporary file left. */
  char cmd[PATH_MAX + 64];
  snprintf (cmd, sizeof cmd, "test -z \"$(ls -A '%s' | grep '^\\.tmp')\"", base);
  cr_assert_eq (system (cmd), 0);
  cleanup_dir (base);
}

Test (file, check_entry)
{
  struct stat st;
  memset (&st, 0, sizeof st);
  st.st_uid = geteuid ();
  st.st_mode = S_IFREG | 0600;
  cr_assert_eq (csr_trust_check_entry (&st, true, "f", NULL), 0);
  cr_assert_eq (csr_trust_check_entry (&st, false, "f", NULL), -1);
  st.st_mode = S_IFDIR | 0755;
  cr_assert_eq (csr_trust_check_entry (&st, false, "d", NULL), 0);
  st.st_mode = S_IFDIR | 0775;
  cr_assert_eq (csr_trust_check_entry (&st, false, "d", NULL), -1);
  st.st_mode = S_IFDIR | 0755;
  st.st_uid = geteuid () + 1;
  csr_error *err = NULL;
  cr_assert_eq (csr_trust_check_entry (&st, false, "d", &err), -1);
  cr_assert_not_null (strstr (csr_error_text (err), "refused: owned by"), "%s",
                      csr_error_text (err));
  csr_error_free (err);
}
