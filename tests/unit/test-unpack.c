/* Unit tests for the rootfs unpacker and cache: archives are built here with
 * libarchive's writer, in a temporary directory per test. */
#include "config.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "rootfs/rootfs.h"
#include "util/digest.h"
#include "util/fs.h"

#include "helpers.h"

/* ---------------------------------------------------------------- helpers */

static char root[PATH_MAX / 2]; /* per-test scratch directory */
static char dest[PATH_MAX];     /* ROOT/dest: where archives are unpacked */
static char outside[PATH_MAX];  /* ROOT/outside: must stay empty */

static void
setup (void)
{
  test_tmpdir_in (root, sizeof root, "test-unpack");
  snprintf (dest, sizeof dest, "%s/dest", root);
  snprintf (outside, sizeof outside, "%s/outside", root);
  cr_assert_eq (mkdir (dest, 0755), 0);
  cr_assert_eq (mkdir (outside, 0755), 0);
}

static void
teardown (void)
{
  test_tmpdir_remove (root);
}

TestSuite (unpack, .init = setup, .fini = teardown);
TestSuite (resolve, .init = setup, .fini = teardown);
TestSuite (fs, .init = setup, .fini = teardown);

enum kind
{
  REG,
  DIR_,
  SYM,
  HARD,
  CHR,
  FIFO,
};

struct ent
{
  enum kind kind;
  const char *path;
  mode_t perm;
  const char *data; /* REG: contents; SYM/HARD: target */
};

#define MTIME 1234567890

/* Write ENTS as a pax archive (zstd-compressed when ZSTD) to PATH.  Returns
 * false when this libarchive can't write zstd. */
static bool
write_archive (const char *path, const struct ent *ents, size_t n, bool zstd)
{
  struct archive *a = archive_write_new ();
  cr_assert_not_null (a);
  cr_assert_eq (archive_write_set_format_pax (a), ARCHIVE_OK);
  if (zstd && archive_write_add_filter_zstd (a) != ARCHIVE_OK)
    {
      archive_write_free (a);
      return false;
    }
  cr_assert_eq (archive_write_open_filename (a, path), ARCHIVE_OK, "%s", archive_error_string (a));
  for (size_t i = 0; i < n; i++)
    {
      const struct ent *x = &ents[i];
      struct archive_entry *e = archive_entry_new ();
      archive_entry_set_pathname (e, x->path);
      archive_entry_set_mtime (e, MTIME, 0);
      archive_entry_set_uid (e, 0);
      archive_entry_set_gid (e, 0);
      size_t size = 0;
      switch (x->kind)
        {
        case REG:
          archive_entry_set_mode (e, S_IFREG | x->perm);
          size = strlen (x->data);
          break;
        case DIR_:
          archive_entry_set_mode (e, S_IFDIR | x->perm);
          break;
        case SYM:
          archive_entry_set_mode (e, S_IFLNK | 0777);
          archive_entry_set_symlink (e, x->data);
          break;
        case HARD:
          archive_entry_set_mode (e, S_IFREG | x->perm);
          archive_entry_set_hardlink (e, x->data);
          break;
        case CHR:
          archive_entry_set_mode (e, S_IFCHR | x->perm);
          archive_entry_set_rdevmajor (e, 1);
          archive_entry_set_rdevminor (e, 3);
          break;
        case FIFO:
          archive_entry_set_mode (e, S_IFIFO | x->perm);
          break;
        }
      archive_entry_set_size (e, (la_int64_t)size);
      cr_assert_geq (archive_write_header (a, e), ARCHIVE_WARN, "%s: %s", x->path,
                     archive_error_string (a));
      if (size)
        cr_assert_eq (archive_write_data (a, x->data, size), (la_ssize_t)size);
      archive_entry_free (e);
    }
  cr_assert_eq (archive_write_close (a), ARCHIVE_OK);
  archive_write_free (a);
  return true;
}

static char *
path_in (const char *dir, const char *name)
{
  char *p = NULL;
  cr_assert_geq (asprintf (&p, "%s/%s", dir, name), 0);
  return p;
}

static void
assert_file (const char *dir, const char *name, const char *contents, mode_t perm)
{
  char *p = path_in (dir, name);
  char *buf = NULL;
  size_t len = 0;
  csr_error *err = NULL;
  cr_assert_eq (csr_read_file (p, 1 << 20, &buf, &len, &err), 0, "%s", csr_error_text (err));
  cr_assert_str_eq (buf, contents, "contents of %s", name);
  cr_assert_eq (len, strlen (contents));
  struct stat st;
  cr_assert_eq (lstat (p, &st), 0);
  cr_assert (S_ISREG (st.st_mode), "%s is not a regular file", name);
  cr_assert_eq (st.st_mode & 07777, perm, "%s: mode 0%o, expected 0%o", name,
                (unsigned)(st.st_mode & 07777), (unsigned)perm);
  cr_assert_eq (st.st_mtim.tv_sec, MTIME, "%s: mtime not restored", name);
  free (buf);
  free (p);
}

static void
assert_missing (const char *path)
{
  struct stat st;
  cr_assert_neq (lstat (path, &st), 0, "'%s' must not exist", path);
  cr_assert_eq (errno, ENOENT);
}

static size_t
count_entries (const char *dir)
{
  DIR *d = opendir (dir);
  cr_assert_not_null (d, "opendir %s: %s", dir, strerror (errno));
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      n++;
  closedir (d);
  return n;
}

/* Unpack ARCHIVE into DEST expecting a refusal whose text contains every
 * string of NEEDLES (NULL-terminated); nothing may appear in OUTSIDE. */
static void
expect_refused (const char *archive, const char *const *needles)
{
  csr_error *err = NULL;
  int r = csr_rootfs_unpack (archive, dest, &err);
  cr_assert_lt (r, 0, "hostile archive was unpacked");
  cr_assert_not_null (err);
  const char *text = csr_error_text (err);
  cr_assert_null (strchr (text, '\n'), "one line: %s", text);
  for (; *needles; needles++)
    cr_assert_not_null (strstr (text, *needles), "error lacks \"%s\": %s", *needles, text);
  cr_assert_eq (count_entries (outside), 0, "something was written outside DEST");
  csr_error_free (err);
}

/* ---------------------------------------------------------------- unpack */

static const struct ent good[] = {
  { DIR_, "./", 0755, NULL },
  { DIR_, "./bin/", 0755, NULL },
  { REG, "./bin/hello", 0755, "#!/bin/sh\necho hello\n" },
  { REG, "etc//conf", 0640, "key=value\n" }, /* parent not in the archive */
  { SYM, "bin/link", 0, "hello" },
  { SYM, "bin/python3", 0, "/usr/bin/python3.11" },
  { HARD, "bin/hard", 0755, "./bin/hello" },
  { DIR_, "ro/", 0555, NULL },
  { REG, "ro/file", 0444, "read only\n" },
  { DIR_, "tmp", 01777, NULL },
  { REG, "empty", 0600, "" },
};

/* RO: unpacked into the cache, read-only (files 0444/0555, dirs 0555). */
static void
check_tree (const char *dir, bool ro)
{
  assert_file (dir, "bin/hello", "#!/bin/sh\necho hello\n", 0755 & (ro ? 0555 : 07777));
  assert_file (dir, "etc/conf", "key=value\n", ro ? 0444 : 0640);
  assert_file (dir, "bin/hard", "#!/bin/sh\necho hello\n", 0755 & (ro ? 0555 : 07777));
  assert_file (dir, "ro/file", "read only\n", 0444);
  assert_file (dir, "empty", "", ro ? 0444 : 0600);

  char target[PATH_MAX];
  char *p = path_in (dir, "bin/link");
  ssize_t n = readlink (p, target, sizeof target - 1);
  cr_assert_gt (n, 0, "bin/link is not a symlink");
  target[n] = '\0';
  cr_assert_str_eq (target, "hello");
  free (p);
  p = path_in (dir, "bin/python3");
  n = readlink (p, target, sizeof target - 1);
  cr_assert_gt (n, 0, "bin/python3 is not a symlink");
  target[n] = '\0';
  cr_assert_str_eq (target, "/usr/bin/python3.11");
  free (p);

  struct stat a, b;
  char *pa = path_in (dir, "bin/hello"), *pb = path_in (dir, "bin/hard");
  cr_assert_eq (stat (pa, &a), 0);
  cr_assert_eq (stat (pb, &b), 0);
  cr_assert_eq (a.st_ino, b.st_ino, "bin/hard is not a hardlink of bin/hello");
  cr_assert_eq (a.st_nlink, 2);
  free (pa);
  free (pb);

  p = path_in (dir, "ro");
  cr_assert_eq (stat (p, &a), 0);
  cr_assert (S_ISDIR (a.st_mode));
  cr_assert_eq (a.st_mode & 07777, 0555, "ro: mode 0%o", (unsigned)(a.st_mode & 07777));
  cr_assert_eq (a.st_mtim.tv_sec, MTIME, "directory mtime not restored");
  free (p);
  p = path_in (dir, "tmp");
  cr_assert_eq (stat (p, &a), 0);
  cr_assert_eq (a.st_mode & 07777, ro ? 0555 : 01777);
  free (p);
}

static void
check_good_tree (const char *dir)
{
  check_tree (dir, false);
}

Test (unpack, good_archive_round_trips)
{
  char *archive = path_in (root, "good.tar");
  write_archive (archive, good, sizeof good / sizeof *good, false);
  csr_error *err = NULL;
  cr_assert_eq (csr_rootfs_unpack (archive, dest, &err), 0, "%s", csr_error_text (err));
  check_good_tree (dest);
  cr_assert_eq (count_entries (dest), 5); /* bin etc ro tmp empty */
  free (archive);
}

Test (unpack, good_zstd_archive_round_trips)
{
  char *archive = path_in (root, "good.tar.zst");
  if (!write_archive (archive, good, sizeof good / sizeof *good, true))
    cr_skip_test ("this libarchive can't write zstd");
  csr_error *err = NULL;
  cr_assert_eq (csr_rootfs_unpack (archive, dest, &err), 0, "%s", csr_error_text (err));
  check_good_tree (dest);
  free (archive);
}

Test (unpack, keeps_the_current_directory)
{
  char *archive = path_in (root, "good.tar");
  write_archive (archive, good, sizeof good / sizeof *good, false);
  char before[PATH_MAX], after[PATH_MAX];
  cr_assert_not_null (getcwd (before, sizeof before));
  csr_error *err = NULL;
  cr_assert_eq (csr_rootfs_unpack (archive, dest, &err), 0, "%s", csr_error_text (err));
  cr_assert_not_null (getcwd (after, sizeof after));
  cr_assert_str_eq (before, after);
  /* ... on failure too. */
  const struct ent bad[] = {
    { DIR_, "d", 0755, NULL },
    { REG, "d/su", 04755, "#!/bin/sh\n" },
  };
  write_archive (archive, bad, 2, false);
  err = NULL;
  cr_assert_lt (csr_rootfs_unpack (archive, dest, &err), 0, "setuid entry accepted");
  csr_error_free (err);
  cr_assert_not_null (getcwd (after, sizeof after));
  cr_assert_str_eq (before, after);
  free (archive);
}

Test (unpack, refuses_dotdot)
{
  const struct ent ents[] = {
    { REG, "ok", 0644, "fine\n" },
    { REG, "../x", 0644, "evil\n" },
  };
  char *archive = path_in (root, "a.tar");
  write_archive (archive, ents, 2, false);
  expect_refused (archive, (const char *[]){ "'../x'", "..", NULL });
  char *x = path_in (root, "x");
  assert_missing (x);
  free (x);
  free (archive);
}

Test (unpack, refuses_absolute)
{
  char *abs = path_in (outside, "abs");
  const struct ent ents[] = {
    { REG, abs, 0644, "evil\n" },
  };
  char *archive = path_in (root, "a.tar");
  write_archive (archive, ents, 1, false);
  char quoted[PATH_MAX + 2];
  snprintf (quoted, sizeof quoted, "'%s'", abs);
  expect_refused (archive, (const char *[]){ quoted, "absolute", NULL });
  assert_missing (abs);
  free (archive);
  free (abs);
}

Test (unpack, refuses_path_through_symlink)
{
  const struct ent ents[] = {
    { SYM, "a", 0, outside },
    { REG, "a/evil", 0644, "evil\n" },
  };
  char *archive = path_in (root, "a.tar");
  write_archive (archive, ents, 2, false);
  expect_refused (archive, (const char *[]){ "entry 'a/evil' goes through symlink 'a'", NULL });
  char *evil = path_in (outside, "evil");
  assert_missing (evil);
  free (evil);
  free (archive);
}

Test (unpack, refuses_path_through_symlink_spelled_differently)
{
  const struct ent ents[] = {
    { DIR_, "d/", 0755, NULL },
    { SYM, "./d/a", 0, "../../outside" },
    { REG, "d//a/sub/evil", 0644, "evil\n" },
  };
  char *archive = path_in (root, "a.tar");
  write_archive (archive, ents, 3, false);
  expect_refused (archive, (const char *[]){ "'d//a/sub/evil'", "symlink 'd/a'", NULL });
  free (archive);
}

Test (unpack, refuses_char_device)
{
  const struct ent ents[] = {
    { DIR_, "dev/", 0755, NULL },
    { CHR, "dev/mem", 0666, NULL },
  };
  char *archive = path_in (root, "a.tar");
  write_archive (archive, ents, 2, false);
  expect_refused (archive, (const char *[]){ "'dev/mem'", "character device", NULL });
  char *p = path_in (dest, "dev/mem");
  assert_missing (p);
  free (p);
  free (archive);
}

Test (unpack, refuses_fifo)
{
  const struct ent ents[] = {
    { FIFO, "fifo", 0644, NULL },
  };
  char *archive = path_in (root, "a.tar");
  write_archive (archive, ents, 1, false);
  expect_refused (archive, (const char *[]){ "'fifo'", "FIFO", NULL });
  free (archive);
}

Test (unpack, refuses_setuid)
{
  const struct ent ents[] = {
    { REG, "su", 04755, "#!/bin/sh\n" },
  };
  char *archive = path_in (root, "a.tar");
  write_archive (archive, ents, 1, false);
  expect_refused (archive, (const char *[]){ "entry 'su' has the setuid bit", NULL });
  char *p = path_in (dest, "su");
  assert_missing (p);
  free (p);
  free (archive);
}

Test (unpack, refuses_hardlink_to_absolute)
{
  const struct ent ents[] = {
    { HARD, "passwd", 0644, "/etc/passwd" },
  };
  char *archive = path_in (root, "a.tar");
  write_archive (archive, ents, 1, false);
  expect_refused (archive, (const char *[]){ "'passwd'", "absolute", NULL });
  free (archive);
}

Test (unpack, refuses_hardlink_to_unknown_or_non_file)
{
  const struct ent ents1[] = {
    { HARD, "h", 0644, "nothing" },
  };
  char *archive = path_in (root, "a.tar");
  write_archive (archive, ents1, 1, false);
  expect_refused (archive, (const char *[]){ "'h'", "not an earlier regular file", NULL });

  const struct ent ents2[] = {
    { SYM, "s", 0, outside },
    { HARD, "h", 0644, "s" },
  };
  write_archive (archive, ents2, 2, false);
  cr_assert_eq (csr_rm_rf (dest, NULL), 0);
  cr_assert_eq (mkdir (dest, 0755), 0);
  expect_refused (archive, (const char *[]){ "'h'", "not an earlier regular file", NULL });

  const struct ent ents3[] = {
    { DIR_, "d", 0755, NULL },
    { HARD, "h", 0644, "d" },
  };
  write_archive (archive, ents3, 2, false);
  cr_assert_eq (csr_rm_rf (dest, NULL), 0);
  cr_assert_eq (mkdir (dest, 0755), 0);
  expect_refused (archive, (const char *[]){ "'h'", "not an earlier regular file", NULL });
  free (archive);
}

Test (unpack, refuses_empty_archive)
{
  char *archive = path_in (root, "empty.tar");
  write_archive (archive, NULL, 0, false);
  expect_refused (archive, (const char *[]){ "no entries", NULL });
  free (archive);
}

Test (unpack, refuses_garbage)
{
  char *archive = path_in (root, "garbage.tar");
  char junk[4096];
  for (size_t i = 0; i < sizeof junk; i++)
    junk[i] = (char)('a' + (i * 7) % 26);
  cr_assert_eq (csr_write_file_atomic (archive, junk, sizeof junk, 0644, NULL), 0);
  expect_refused (archive, (const char *[]){ archive, NULL });
  free (archive);
}

Test (unpack, missing_archive)
{
  csr_error *err = NULL;
  cr_assert_lt (csr_rootfs_unpack ("/nonexistent/x.tar", dest, &err), 0);
  cr_assert_eq (err->status, ENOENT);
  cr_assert_not_null (strstr (csr_error_text (err), "/nonexistent/x.tar"));
  csr_error_free (err);
}

/* ---------------------------------------------------------------- resolve */

static char *
make_good_tarball (void)
{
  char *archive = path_in (root, "rootfs.tar.zst");
  if (!write_archive (archive, good, sizeof good / sizeof *good, true))
    {
      free (archive);
      archive = path_in (root, "rootfs.tar");
      write_archive (archive, good, sizeof good / sizeof *good, false);
    }
  return archive;
}

static char *
file_sha256 (const char *path)
{
  char *buf = NULL;
  size_t len = 0;
  csr_error *err = NULL;
  cr_assert_eq (csr_read_file (path, 64 << 20, &buf, &len, &err), 0);
  char *hex = malloc (CSR_SHA256_HEX_LEN + 1);
  cr_assert_eq (csr_sha256_buf (buf, len, hex, &err), 0);
  free (buf);
  return hex;
}

static size_t
count_trees (const char *cache, size_t *temps)
{
  DIR *d = opendir (cache);
  cr_assert_not_null (d);
  size_t n = 0;
  *temps = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strlen (de->d_name) == CSR_SHA256_HEX_LEN
          && strspn (de->d_name, "0123456789abcdef") == CSR_SHA256_HEX_LEN)
        n++;
      else if (strncmp (de->d_name, ".tmp", 4) == 0)
        (*temps)++;
    }
  closedir (d);
  return n;
}

Test (fs, sha256_known_vectors)
{
  char hex[CSR_SHA256_HEX_LEN + 1];
  cr_assert_eq (csr_sha256_buf ("abc", 3, hex, NULL), 0);
  cr_assert_str_eq (hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  cr_assert_eq (csr_sha256_buf ("", 0, hex, NULL), 0);
  cr_assert_str_eq (hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  char *p = path_in (root, "f");
  cr_assert_eq (csr_write_file_atomic (p, "abc", 3, 0644, NULL), 0);
  int fd = open (p, O_RDONLY);
  cr_assert_geq (fd, 0);
  cr_assert_eq (csr_sha256_fd (fd, hex, NULL), 0);
  cr_assert_str_eq (hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  close (fd);
  free (p);
}

Test (resolve, first_call_unpacks_then_index_is_used)
{
  umask (077); /* the tree must be usable by other uids anyway */
  char *archive = make_good_tarball ();
  char *cache = path_in (root, "cache");
  char *sha = file_sha256 (archive);
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;

  cr_assert_eq (csr_rootfs_resolve (archive, cache, &r, &err), 0, "%s", csr_error_text (err));
  cr_assert (r->unpacked_now, "first resolve did not unpack");
  cr_assert_str_eq (r->sha256, sha);
  cr_assert_str_eq (r->source, archive);
  char real_cache[PATH_MAX];
  cr_assert_not_null (realpath (cache, real_cache));
  char *expected = path_in (real_cache, sha);
  cr_assert_str_eq (r->dir, expected);
  check_tree (r->dir, true);
  struct stat st;
  char *etc = path_in (r->dir, "etc"); /* not in the archive: made by csrun */
  cr_assert_eq (stat (etc, &st), 0);
  cr_assert_eq (st.st_mode & 07777, 0555, "implicit parent: mode 0%o",
                (unsigned)(st.st_mode & 07777));
  free (etc);
  cr_assert_eq (umask (077), 077, "the caller's umask was not restored");
  cr_assert_eq (stat (r->dir, &st), 0);
  cr_assert_eq (st.st_mode & 07777, 0555, "tree top: mode 0%o", (unsigned)(st.st_mode & 07777));
  cr_assert_eq (stat (cache, &st), 0);
  cr_assert_eq (st.st_mode & 07777, 0700, "cache dir: mode 0%o", (unsigned)(st.st_mode & 07777));
  char *first_dir = strdup (r->dir);
  csr_rootfs_free (r);

  /* The index entry: by-stat/<dev>-<ino>-<size>-<mtime> -> <sha256>. */
  cr_assert_eq (stat (archive, &st), 0);
  char key[PATH_MAX], target[PATH_MAX];
  snprintf (key, sizeof key, "%s/by-stat/%ju-%ju-%jd-%jd.%09ld", cache, (uintmax_t)st.st_dev,
            (uintmax_t)st.st_ino, (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec,
            (long)st.st_mtim.tv_nsec);
  ssize_t n = readlink (key, target, sizeof target - 1);
  cr_assert_gt (n, 0, "no index entry %s", key);
  target[n] = '\0';
  cr_assert_str_eq (target, sha);

  r = NULL;
  cr_assert_eq (csr_rootfs_resolve (archive, cache, &r, &err), 0, "%s", csr_error_text (err));
  cr_assert_not (r->unpacked_now, "second resolve unpacked again");
  cr_assert_str_eq (r->dir, first_dir);
  cr_assert_str_eq (r->sha256, sha);
  csr_rootfs_free (r);

  size_t temps;
  cr_assert_eq (count_trees (cache, &temps), 1);
  cr_assert_eq (temps, 0);
  free (first_dir);
  free (expected);
  free (sha);
  free (cache);
  free (archive);
}

Test (resolve, warm_path_trusts_the_index_without_hashing)
{
  char *archive = make_good_tarball ();
  char *cache = path_in (root, "cache");
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_rootfs_resolve (archive, cache, &r, &err), 0, "%s", csr_error_text (err));
  csr_rootfs_free (r);

  /* Point the index entry at another (fake) tree: if resolve still hashed
   * the tarball it would not notice. */
  static const char fake[] = "00000000000000000000000000000000000000000000000000000000000000ff";
  char *fake_dir = path_in (cache, fake);
  cr_assert_eq (mkdir (fake_dir, 0755), 0);
  struct stat st;
  cr_assert_eq (stat (archive, &st), 0);
  char key[PATH_MAX];
  snprintf (key, sizeof key, "%s/by-stat/%ju-%ju-%jd-%jd.%09ld", cache, (uintmax_t)st.st_dev,
            (uintmax_t)st.st_ino, (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec,
            (long)st.st_mtim.tv_nsec);
  cr_assert_eq (unlink (key), 0);
  cr_assert_eq (symlink (fake, key), 0);
  r = NULL;
  cr_assert_eq (csr_rootfs_resolve (archive, cache, &r, &err), 0, "%s", csr_error_text (err));
  cr_assert_str_eq (r->sha256, fake);
  cr_assert_not (r->unpacked_now);
  csr_rootfs_free (r);

  /* An index entry whose tree is gone, or that is not a digest, is ignored. */
  cr_assert_eq (rmdir (fake_dir), 0);
  char *sha = file_sha256 (archive);
  r = NULL;
  cr_assert_eq (csr_rootfs_resolve (archive, cache, &r, &err), 0, "%s", csr_error_text (err));
  cr_assert_str_eq (r->sha256, sha);
  cr_assert_not (r->unpacked_now, "the real tree was still there");
  csr_rootfs_free (r);
  cr_assert_eq (unlink (key), 0);
  cr_assert_eq (symlink ("../../etc", key), 0);
  r = NULL;
  cr_assert_eq (csr_rootfs_resolve (archive, cache, &r, &err), 0, "%s", csr_error_text (err));
  cr_assert_str_eq (r->sha256, sha);
  csr_rootfs_free (r);
  free (sha);
  free (fake_dir);
  free (cache);
  free (archive);
}

Test (resolve, concurrent_first_runs)
{
  /* A larger archive makes the two unpacks overlap. */
  enum
  {
    N = 400
  };
  struct ent ents[N];
  char names[N][32];
  for (int i = 0; i < N; i++)
    {
      snprintf (names[i], sizeof names[i], "d%d/f%d", i % 10, i);
      ents[i] = (struct ent){ REG, names[i], 0644, "some contents that are not very long\n" };
    }
  char *archive = path_in (root, "big.tar");
  write_archive (archive, ents, N, false);
  char *cache = path_in (root, "cache");
  char *results[2];
  pid_t pids[2];
  for (int k = 0; k < 2; k++)
    {
      char name[16];
      snprintf (name, sizeof name, "result%d", k);
      results[k] = path_in (root, name);
      pids[k] = fork ();
      cr_assert_geq (pids[k], 0);
      if (pids[k] == 0)
        {
          struct csr_rootfs *r = NULL;
          csr_error *err = NULL;
          if (csr_rootfs_resolve (archive, cache, &r, &err) < 0)
            {
              fprintf (stderr, "child %d: %s\n", k, csr_error_text (err));
              _exit (1);
            }
          char line[PATH_MAX + 8];
          int n = snprintf (line, sizeof line, "%d %s", r->unpacked_now, r->dir);
          _exit (csr_write_file_atomic (results[k], line, (size_t)n, 0644, NULL) < 0 ? 2 : 0);
        }
    }
  for (int k = 0; k < 2; k++)
    {
      int status;
      cr_assert_eq (waitpid (pids[k], &status, 0), pids[k]);
      cr_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0, "child %d failed (status %d)", k,
                 status);
    }
  char *out[2];
  for (int k = 0; k < 2; k++)
    cr_assert_eq (csr_read_file (results[k], 1 << 16, &out[k], NULL, NULL), 0);
  cr_assert_str_eq (out[0] + 2, out[1] + 2, "different trees: %s / %s", out[0], out[1]);
  cr_assert_eq ((out[0][0] == '1') + (out[1][0] == '1'), 1, "exactly one unpacks: %s / %s", out[0],
                out[1]);
  size_t temps;
  cr_assert_eq (count_trees (cache, &temps), 1);
  cr_assert_eq (temps, 0);
  char *f = path_in (out[0] + 2, "d7/f397");
  cr_assert_eq (access (f, R_OK), 0);
  free (f);
  for (int k = 0; k < 2; k++)
    {
      free (out[k]);
      free (results[k]);
    }
  free (cache);
  free (archive);
}

Test (resolve, removes_stale_temporary_trees)
{
  char *cache = path_in (root, "cache");
  char *stale = path_in (cache, ".tmp-0123456789abcdef-AbCdEf");
  char *inner = path_in (stale, "usr/lib");
  cr_assert_eq (csr_mkdir_p (inner, 0755, NULL), 0);
  cr_assert_eq (chmod (inner, 0), 0); /* as a crashed unpack can leave it */
  char *archive = make_good_tarball ();
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_rootfs_resolve (archive, cache, &r, &err), 0, "%s", csr_error_text (err));
  cr_assert (r->unpacked_now);
  assert_missing (stale);
  size_t temps;
  cr_assert_eq (count_trees (cache, &temps), 1);
  cr_assert_eq (temps, 0);
  csr_rootfs_free (r);
  free (archive);
  free (inner);
  free (stale);
  free (cache);
}

Test (resolve, hostile_tarball_leaves_no_trace)
{
  const struct ent ents[] = {
    { REG, "ok", 0644, "fine\n" },
    { SYM, "a", 0, outside },
    { REG, "a/x", 0644, "evil\n" },
  };
  char *archive = path_in (root, "hostile.tar");
  write_archive (archive, ents, 3, false);
  char *cache = path_in (root, "cache");
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;
  cr_assert_lt (csr_rootfs_resolve (archive, cache, &r, &err), 0);
  cr_assert_null (r);
  const char *text = csr_error_text (err);
  cr_assert_not_null (strstr (text, "entry 'a/x' goes through symlink 'a'"), "%s", text);
  cr_assert_not_null (strstr (text, archive), "%s", text);
  cr_assert_eq (count_entries (outside), 0);
  size_t temps;
  cr_assert_eq (count_trees (cache, &temps), 0);
  cr_assert_eq (temps, 0);
  csr_error_free (err);
  free (cache);
  free (archive);
}

Test (resolve, directory_is_used_as_is)
{
  char *sub = path_in (root, "tree/usr");
  cr_assert_eq (csr_mkdir_p (sub, 0755, NULL), 0);
  char *src = path_in (root, "tree/usr/..");
  char *expected = path_in (root, "tree");
  char real[PATH_MAX];
  cr_assert_not_null (realpath (expected, real));
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_rootfs_resolve (src, "/nonexistent/cache", &r, &err), 0, "%s",
                csr_error_text (err));
  cr_assert_str_eq (r->dir, real);
  cr_assert_null (r->sha256);
  cr_assert_not (r->unpacked_now);
  cr_assert_str_eq (r->source, src);
  csr_rootfs_free (r);
  free (expected);
  free (src);
  free (sub);
}

Test (resolve, missing_path_errors)
{
  char *src = path_in (root, "no-such-rootfs.tar.zst");
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;
  cr_assert_lt (csr_rootfs_resolve (src, NULL, &r, &err), 0);
  cr_assert_null (r);
  cr_assert_eq (err->status, ENOENT);
  char expected[PATH_MAX + 64];
  snprintf (expected, sizeof expected, "rootfs '%s': No such file or directory", src);
  cr_assert_str_eq (csr_error_text (err), expected);
  csr_error_free (err);
  free (src);
}

Test (resolve, cache_dir_from_environment)
{
  char *dir = NULL;
  setenv ("CSRUN_CACHE_DIR", "/some/where", 1);
  setenv ("XDG_CACHE_HOME", "/xdg", 1);
  cr_assert_eq (csr_rootfs_cache_dir (&dir, NULL), 0);
  cr_assert_str_eq (dir, "/some/where");
  free (dir);
  unsetenv ("CSRUN_CACHE_DIR");
  cr_assert_eq (csr_rootfs_cache_dir (&dir, NULL), 0);
  cr_assert_str_eq (dir, "/xdg/csrun/rootfs");
  free (dir);
  unsetenv ("XDG_CACHE_HOME");
  setenv ("HOME", "/home/u", 1);
  cr_assert_eq (csr_rootfs_cache_dir (&dir, NULL), 0);
  cr_assert_str_eq (dir,
                    geteuid () == 0 ? "/var/cache/csrun/rootfs" : "/home/u/.cache/csrun/rootfs");
  free (dir);

  /* resolve (..., NULL, ...) uses it. */
  char *cache = path_in (root, "env-cache");
  setenv ("CSRUN_CACHE_DIR", cache, 1);
  char *archive = make_good_tarball ();
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_rootfs_resolve (archive, NULL, &r, &err), 0, "%s", csr_error_text (err));
  size_t temps;
  cr_assert_eq (count_trees (cache, &temps), 1);
  csr_rootfs_free (r);
  free (archive);
  free (cache);
}

/* ---------------------------------------------------------------- fs */

Test (fs, rm_rf_deep_tree_without_following_symlinks)
{
  char *victim = path_in (outside, "keep");
  cr_assert_eq (csr_write_file_atomic (victim, "keep\n", 5, 0644, NULL), 0);
  char path[PATH_MAX];
  int n = snprintf (path, sizeof path, "%s/tree", root);
  cr_assert_eq (mkdir (path, 0755), 0);
  for (int depth = 0; depth < 200 && n < PATH_MAX - 64; depth++)
    {
      n += snprintf (path + n, sizeof path - (size_t)n, "/d");
      cr_assert_eq (mkdir (path, 0755), 0, "mkdir %s: %s", path, strerror (errno));
      char *f = path_in (path, "file");
      cr_assert_eq (csr_write_file_atomic (f, "x", 1, 0444, NULL), 0);
      free (f);
      if (depth % 50 == 0)
        {
          char *l = path_in (path, "link");
          cr_assert_eq (symlink (outside, l), 0);
          free (l);
        }
    }
  /* Directories without permissions, as an archive can leave them. */
  char *p = path_in (root, "tree/d/d");
  cr_assert_eq (chmod (p, 0), 0);
  free (p);
  p = path_in (root, "tree/d");
  cr_assert_eq (chmod (p, 0555), 0);
  free (p);
  char *tree = path_in (root, "tree");
  csr_error *err = NULL;
  cr_assert_eq (csr_rm_rf (tree, &err), 0, "%s", csr_error_text (err));
  assert_missing (tree);
  char *buf = NULL;
  cr_assert_eq (csr_read_file (victim, 100, &buf, NULL, NULL), 0, "rm_rf followed a symlink");
  cr_assert_str_eq (buf, "keep\n");
  /* Missing paths are fine; a symlink is removed, not followed. */
  cr_assert_eq (csr_rm_rf (tree, NULL), 0);
  char *l = path_in (root, "l");
  cr_assert_eq (symlink (outside, l), 0);
  cr_assert_eq (csr_rm_rf (l, NULL), 0);
  assert_missing (l);
  cr_assert_eq (access (victim, F_OK), 0);
  free (l);
  free (buf);
  free (tree);
  free (victim);
}

Test (fs, read_file_refuses_non_regular)
{
  char *buf = NULL;
  csr_error *err = NULL;
  cr_assert_lt (csr_read_file (root, 100, &buf, NULL, &err), 0);
  cr_assert_eq (err->status, EISDIR);
  cr_assert_not_null (strstr (csr_error_text (err), "Is a directory"));
  csr_error_free (err);
  err = NULL;
  char *fifo = path_in (root, "fifo");
  cr_assert_eq (mkfifo (fifo, 0644), 0);
  cr_assert_lt (csr_read_file (fifo, 100, &buf, NULL, &err), 0);
  cr_assert_not_null (err);
  csr_error_free (err);
  free (fifo);
}

Test (fs, read_file_limit_and_contents)
{
  char *p = path_in (root, "f");
  cr_assert_eq (csr_write_file_atomic (p, "0123456789", 10, 0600, NULL), 0);
  struct stat st;
  cr_assert_eq (stat (p, &st), 0);
  cr_assert_eq (st.st_mode & 07777, 0600);
  char *buf = NULL;
  size_t len = 0;
  cr_assert_eq (csr_read_file (p, 10, &buf, &len, NULL), 0);
  cr_assert_eq (len, 10);
  cr_assert_str_eq (buf, "0123456789");
  free (buf);
  csr_error *err = NULL;
  cr_assert_lt (csr_read_file (p, 9, &buf, &len, &err), 0);
  cr_assert_eq (err->status, EFBIG);
  csr_error_free (err);
  /* From a pipe (no size known). */
  int fds[2];
  cr_assert_eq (pipe (fds), 0);
  char big[10000];
  memset (big, 'z', sizeof big);
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (fds[0]);
      _exit (csr_write_all (fds[1], big, sizeof big, NULL) < 0);
    }
  close (fds[1]);
  cr_assert_eq (csr_read_fd (fds[0], 1 << 20, &buf, &len, NULL), 0);
  cr_assert_eq (len, sizeof big);
  cr_assert_eq (memcmp (buf, big, sizeof big), 0);
  close (fds[0]);
  waitpid (pid, NULL, 0);
  free (buf);
  free (p);
}

Test (fs, mkdir_p_modes)
{
  umask (077);
  char *p = path_in (root, "a//b/c/");
  cr_assert_eq (csr_mkdir_p (p, 0755, NULL), 0);
  cr_assert_eq (csr_mkdir_p (p, 0755, NULL), 0, "existing path");
  struct stat st;
  char *b = path_in (root, "a/b");
  cr_assert_eq (stat (b, &st), 0);
  cr_assert (S_ISDIR (st.st_mode));
  cr_assert_eq (st.st_mode & 07777, 0755);
  char *f = path_in (root, "file");
  cr_assert_eq (csr_write_file_atomic (f, "", 0, 0644, NULL), 0);
  char *under = path_in (f, "x");
  csr_error *err = NULL;
  cr_assert_lt (csr_mkdir_p (under, 0755, &err), 0);
  cr_assert_eq (err->status, ENOTDIR);
  csr_error_free (err);
  free (under);
  free (f);
  free (b);
  free (p);
}

/* ---------------------------------------------------------------- manifest, damage, short writes
 */

TestSuite (manifest, .init = setup, .fini = teardown);

Test (manifest, round_trips_with_escaped_names)
{
  struct csr_manifest m;
  memset (&m, 0, sizeof m);
  m.source = strdup ("/srv/root fs/py.tar.zst");
  snprintf (m.sha256, sizeof m.sha256, "%064d", 7);
  m.bytes = 12345;
  const char *hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  cr_assert_geq (csr_manifest_add (&m, 'd', 0555, 0, NULL, ".", NULL), 0);
  cr_assert_geq (csr_manifest_add (&m, 'f', 0444, 3, hex, "a b\\c\nd", NULL), 0);
  cr_assert_geq (csr_manifest_add (&m, 'l', 0777, 9, "../x y\tz", "usr/lib/l", NULL), 0);
  char *text = NULL;
  size_t len = 0;
  csr_error *err = NULL;
  cr_assert_eq (csr_manifest_format (&m, &text, &len, &err), 0);
  cr_assert_not_null (strstr (text,
                              "f 0444 3 "
                              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
                              " a\\040b\\134c\\012d\n"),
                      "%s", text);
  struct csr_manifest back;
  cr_assert_eq (csr_manifest_parse (text, len, &back, &err), 0, "%s", csr_error_text (err));
  cr_assert_str_eq (back.source, m.source);
  cr_assert_str_eq (back.sha256, m.sha256);
  cr_assert_eq (back.bytes, 12345);
  cr_assert_eq (back.n, 3);
  for (size_t i = 0; i < 3; i++)
    {
      cr_assert_eq (back.entries[i].type, m.entries[i].type);
      cr_assert_eq (back.entries[i].mode, m.entries[i].mode);
      cr_assert_eq (back.entries[i].size, m.entries[i].size);
      cr_assert_str_eq (back.entries[i].path, m.entries[i].path);
      if (m.entries[i].data)
        cr_assert_str_eq (back.entries[i].data, m.entries[i].data);
      else
        cr_assert_null (back.entries[i].data);
    }
  csr_manifest_release (&back);
  /* Damaged manifests are refused, not half-read. */
  static const char *const bad[] = {
    "csrun-manifest 2\n",
    "csrun-manifest 1\nsource -\nsha256 -\nbytes 0\nentries 1\n",
    "csrun-manifest 1\nsource -\nsha256 -\nbytes 0\nentries 1\nf 0444 3 abc x\n",
    "csrun-manifest 1\nsource -\nsha256 -\nbytes 0\nentries 1\nd 0555 0 - /abs\n",
    "csrun-manifest 1\nsource -\nsha256 -\nbytes 0\nentries 1\nd 0555 0 - a\\9b\n",
    "csrun-manifest 1\nsource -\nsha256 -\nbytes 0\nentries 1\nd 0555 0 - a",
    "csrun-manifest 1\nsource -\nsha256 -\nbytes 0\nentries 1\nx 0555 0 - a\n",
    "csrun-manifest 1\nsource -\nsha256 -\nbytes 0\nentries 1\nd 0555 0 - a b\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      csr_error *e = NULL;
      cr_assert_lt (csr_manifest_parse (bad[i], strlen (bad[i]), &back, &e), 0, "accepted: %s",
                    bad[i]);
      csr_error_free (e);
    }
  free (text);
  csr_manifest_release (&m);
}

Test (manifest, unpack_records_every_entry_and_check_finds_damage)
{
  char *archive = make_good_tarball ();
  struct csr_manifest m;
  memset (&m, 0, sizeof m);
  struct csr_unpack_opts o = { .read_only = true, .manifest = &m };
  csr_error *err = NULL;
  cr_assert_eq (csr_rootfs_unpack_ex (archive, dest, &o, &err), 0, "%s", csr_error_text (err));
  check_tree (dest, true);
  /* ".", bin, bin/hello, etc (implicit), etc/conf, 2 links, hard, ro, ro/file, tmp, empty */
  cr_assert_eq (m.n, 12, "%zu entries", m.n);
  int tfd = open (dest, O_RDONLY | O_DIRECTORY);
  cr_assert_geq (tfd, 0);
  struct csr_tree_damage d;
  memset (&d, 0, sizeof d);
  cr_assert_eq (csr_manifest_check (tfd, &m, true, &d, &err), 0);
  cr_assert_eq (d.n, 0, "fresh tree damaged: %s", d.n_shown ? d.shown[0] : "");
  csr_tree_damage_release (&d);

  /* Same size, other bytes: only the full check sees it. */
  char *conf = path_in (dest, "etc/conf");
  cr_assert_eq (chmod (conf, 0644), 0);
  int fd = open (conf, O_WRONLY);
  cr_assert_geq (fd, 0);
  cr_assert_eq (pwrite (fd, "K", 1, 0), 1);
  close (fd);
  cr_assert_eq (chmod (conf, 0444), 0);
  cr_assert_eq (csr_manifest_check (tfd, &m, false, &d, &err), 0);
  cr_assert_eq (d.n, 0, "the quick check read contents");
  cr_assert_eq (csr_manifest_check (tfd, &m, true, &d, &err), 0);
  cr_assert_eq (d.n, 1);
  cr_assert_not_null (strstr (d.shown[0], "etc/conf: contents differ"), "%s", d.shown[0]);
  csr_tree_damage_release (&d);

  /* A deleted file and a changed mode: the quick check sees both. */
  char *bin = path_in (dest, "bin");
  cr_assert_eq (chmod (bin, 0755), 0);
  char *hello = path_in (dest, "bin/hello");
  cr_assert_eq (unlink (hello), 0);
  cr_assert_eq (csr_manifest_check (tfd, &m, false, &d, &err), 0);
  cr_assert_eq (d.n, 2, "%zu damaged", d.n);
  cr_assert_str_eq (d.shown[0], "bin: mode 0755, not 0555");
  cr_assert_str_eq (d.shown[1], "bin/hello: missing");
  csr_tree_damage_release (&d);

  /* A file the archive never had is damage too. */
  char *extra = path_in (dest, "bin/sitecustomize.py");
  cr_assert_eq (csr_write_file_atomic (extra, "x", 1, 0444, NULL), 0);
  cr_assert_eq (csr_manifest_check (tfd, &m, false, &d, &err), 0);
  cr_assert_eq (d.n, 3, "%zu damaged", d.n);
  cr_assert_str_eq (d.shown[1], "bin/sitecustomize.py: not in the manifest");
  csr_tree_damage_release (&d);
  free (extra);
  close (tfd);
  csr_manifest_release (&m);
  free (bin);
  free (hello);
  free (conf);
  free (archive);
}

Test (manifest, resolve_writes_a_read_only_manifest)
{
  char *archive = make_good_tarball ();
  char *cache = path_in (root, "cache");
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_rootfs_resolve (archive, cache, &r, &err), 0, "%s", csr_error_text (err));
  char *mpath = NULL;
  cr_assert_geq (asprintf (&mpath, "%s.manifest", r->dir), 0);
  struct stat st;
  cr_assert_eq (stat (mpath, &st), 0, "no manifest next to the tree");
  cr_assert_eq (st.st_mode & 07777, 0444);
  struct csr_tree_damage d;
  cr_assert_eq (csr_rootfs_cache_verify (cache, r->sha256, true, &d, &err), 0);
  cr_assert_eq (d.n, 0, "%s", d.n_shown ? d.shown[0] : "");
  csr_tree_damage_release (&d);
  char **hexes = NULL;
  size_t n = 0;
  cr_assert_eq (csr_rootfs_cache_trees (cache, &hexes, &n, &err), 0);
  cr_assert_eq (n, 1);
  cr_assert_str_eq (hexes[0], r->sha256);
  free (hexes[0]);
  free (hexes);
  csr_rootfs_free (r);
  free (mpath);
  free (cache);
  free (archive);
}

Test (manifest, damaged_tree_is_unpacked_again_once)
{
  char *archive = make_good_tarball ();
  char *cache = path_in (root, "cache");
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_rootfs_resolve (archive, cache, &r, &err), 0, "%s", csr_error_text (err));
  struct csr_tree_damage d;
  bool repaired = true;
  cr_assert_eq (csr_rootfs_check_repair (r, &d, &repaired, &err), 0, "%s", csr_error_text (err));
  cr_assert_not (repaired, "an intact tree was unpacked again");
  csr_tree_damage_release (&d);

  char *ro = path_in (r->dir, "ro");
  char *file = path_in (r->dir, "ro/file");
  cr_assert_eq (chmod (ro, 0755), 0);
  cr_assert_eq (unlink (file), 0);
  cr_assert_eq (csr_rootfs_check_repair (r, &d, &repaired, &err), 0, "%s", csr_error_text (err));
  cr_assert (repaired);
  cr_assert_eq (d.n, 2, "%zu", d.n); /* ro's mode, ro/file */
  cr_assert_str_eq (d.shown[1], "ro/file: missing");
  csr_tree_damage_release (&d);
  check_tree (r->dir, true);
  size_t temps;
  cr_assert_eq (count_trees (cache, &temps), 1);
  cr_assert_eq (temps, 0);

  /* Without its tarball a damaged tree can only be removed. */
  cr_assert_eq (chmod (ro, 0755), 0);
  cr_assert_eq (unlink (file), 0);
  cr_assert_eq (unlink (archive), 0);
  enum csr_repair_outcome out;
  char *used = NULL;
  cr_assert_lt (csr_rootfs_cache_repair (cache, r->sha256, NULL, false, 0, &out, &used, &err), 0);
  csr_error_freep (&err);
  cr_assert_eq (csr_rootfs_cache_repair (cache, r->sha256, NULL, true, 0, &out, &used, &err), 0,
                "%s", csr_error_text (err));
  cr_assert_eq (out, CSR_REPAIR_REMOVED);
  cr_assert_eq (count_trees (cache, &temps), 0);
  cr_assert_eq (temps, 0);
  free (used);
  free (ro);
  free (file);
  csr_rootfs_free (r);
  free (cache);
  free (archive);
}

/* A failed write(2) during the unpack (here EFBIG: RLIMIT_FSIZE with SIGXFSZ
 * ignored) fails it: nothing is published, nothing is left behind.
 * libarchive alone calls it a warning and zero-fills the rest of the file. */
Test (manifest, failed_write_publishes_nothing)
{
  static char big[256 * 1024];
  memset (big, 'x', sizeof big - 1);
  const struct ent ents[] = {
    { DIR_, "usr/", 0755, NULL },
    { REG, "usr/big", 0644, big },
    { REG, "usr/after", 0644, "after\n" },
  };
  char *archive = path_in (root, "big.tar");
  write_archive (archive, ents, 3, false);
  char *cache = path_in (root, "cache");
  cr_assert_eq (mkdir (cache, 0755), 0);
  signal (SIGXFSZ, SIG_IGN);
  struct rlimit rl = { 64 * 1024, 64 * 1024 };
  cr_assert_eq (setrlimit (RLIMIT_FSIZE, &rl), 0);
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;
  int rc = csr_rootfs_resolve (archive, cache, &r, &err);
  cr_assert_lt (rc, 0, "a tree with a short file was published");
  cr_assert_not_null (strstr (csr_error_text (err), "usr/big"), "%s", csr_error_text (err));
  cr_assert_null (strchr (csr_error_text (err), '\n'));
  size_t temps;
  cr_assert_eq (count_trees (cache, &temps), 0);
  cr_assert_eq (temps, 0);
  char **hexes = NULL;
  size_t n = 9;
  cr_assert_eq (csr_rootfs_cache_trees (cache, &hexes, &n, NULL), 0);
  cr_assert_eq (n, 0);
  csr_error_free (err);
  free (cache);
  free (archive);
}

/* A private mount namespace (and, unprivileged, a user namespace) with a
 * SIZE-byte tmpfs on DIR.  False when the kernel does not allow it here. */
static bool
small_tmpfs (const char *dir, const char *size)
{
  uid_t uid = geteuid ();
  gid_t gid = getegid ();
  if (uid != 0)
    {
      if (unshare (CLONE_NEWUSER | CLONE_NEWNS) < 0)
        return false;
      char map[64];
      snprintf (map, sizeof map, "0 %u 1", (unsigned)uid);
      int fd = open ("/proc/self/setgroups", O_WRONLY);
      if (fd >= 0)
        {
          (void)!write (fd, "deny", 4);
          close (fd);
        }
      fd = open ("/proc/self/uid_map", O_WRONLY);
      if (fd < 0 || write (fd, map, strlen (map)) < 0)
        return false;
      close (fd);
      snprintf (map, sizeof map, "0 %u 1", (unsigned)gid);
      fd = open ("/proc/self/gid_map", O_WRONLY);
      if (fd < 0 || write (fd, map, strlen (map)) < 0)
        return false;
      close (fd);
    }
  else if (unshare (CLONE_NEWNS) < 0)
    return false;
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return false;
  char opts[64];
  snprintf (opts, sizeof opts, "size=%s,mode=0700", size);
  return mount ("tmpfs", dir, "tmpfs", 0, opts) == 0;
}

/* The work of out_of_space_publishes_nothing, in a child (a user namespace
 * needs a single-threaded process): 0 passed, 77 no tmpfs here, else
 * failed with the reason on FD. */
static int
out_of_space_child (const char *archive, const char *mnt, int fd)
{
  if (!small_tmpfs (mnt, "256k"))
    {
      dprintf (fd, "%s", strerror (errno));
      return 77;
    }
  struct csr_rootfs *r = NULL;
  csr_error *err = NULL;
  if (csr_rootfs_resolve (archive, mnt, &r, &err) == 0)
    {
      dprintf (fd, "a tree with a zero-filled file was published");
      return 1;
    }
  const char *text = csr_error_text (err);
  char want[PATH_MAX + 64];
  snprintf (want, sizeof want, "no space left on %s while unpacking usr/big (needs 1 MiB)", mnt);
  if (strstr (text, want) == NULL)
    {
      dprintf (fd, "want '%s' in: %s", want, text);
      return 1;
    }
  csr_error_freep (&err);
  size_t temps;
  if (count_trees (mnt, &temps) != 0 || temps != 0)
    {
      dprintf (fd, "a tree or a temporary directory was left in the cache");
      return 1;
    }
  if (mount (NULL, mnt, NULL, MS_REMOUNT, "size=4m") < 0)
    {
      dprintf (fd, "remount: %s", strerror (errno));
      return 1;
    }
  if (csr_rootfs_resolve (archive, mnt, &r, &err) < 0)
    {
      dprintf (fd, "with room: %s", csr_error_text (err));
      return 1;
    }
  csr_rootfs_free (r);
  umount2 (mnt, MNT_DETACH);
  return 0;
}

/* Out of space on the cache's file system (a tmpfs, where libarchive's
 * ftruncate() after a failed write succeeds and would publish a
 * zero-filled file): a clear error, nothing published; with room, it works. */
Test (manifest, out_of_space_publishes_nothing)
{
  static char big[1000 * 1000];
  memset (big, 'y', sizeof big - 1);
  const struct ent ents[] = {
    { DIR_, "usr/", 0755, NULL },
    { REG, "usr/small", 0644, "small\n" },
    { REG, "usr/big", 0644, big },
  };
  char *archive = path_in (root, "big.tar");
  write_archive (archive, ents, 3, false);
  char *mnt = path_in (root, "mnt");
  cr_assert_eq (mkdir (mnt, 0755), 0);
  int p[2];
  cr_assert_eq (pipe (p), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      close (p[0]);
      _exit (out_of_space_child (archive, mnt, p[1]));
    }
  close (p[1]);
  char why[1024] = "";
  ssize_t n = read (p[0], why, sizeof why - 1);
  why[n > 0 ? n : 0] = '\0';
  close (p[0]);
  int status;
  cr_assert_eq (waitpid (pid, &status, 0), pid);
  cr_assert (WIFEXITED (status), "the child died: status 0x%x", (unsigned)status);
  if (WEXITSTATUS (status) == 77)
    cr_skip_test ("cannot mount a tmpfs in a private mount namespace here: %s", why);
  cr_assert_eq (WEXITSTATUS (status), 0, "%s", why);
  free (mnt);
  free (archive);
}

/* The bulk hasher (libcrypto when loadable) and the built-in one agree. */
Test (fs, sha256_fast_and_builtin_agree)
{
  static unsigned char data[300 * 1000];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (unsigned char)(i * 2654435761u >> 13);
  static const size_t lens[] = { 0, 1, 55, 56, 63, 64, 65, 4096, sizeof data };
  for (size_t k = 0; k < sizeof lens / sizeof *lens; k++)
    {
      char a[CSR_SHA256_HEX_LEN + 1], b[CSR_SHA256_HEX_LEN + 1];
      struct csr_sha256 s;
      csr_sha256_init (&s);
      csr_sha256_update (&s, data, lens[k]);
      cr_assert_eq (csr_sha256_final (&s, a), 0);
      csr_sha256_init_fast (&s);
      /* In uneven pieces. */
      for (size_t off = 0; off < lens[k];)
        {
          size_t n = lens[k] - off < 7777 ? lens[k] - off : 7777;
          csr_sha256_update (&s, data + off, n);
          off += n;
        }
      cr_assert_eq (csr_sha256_final (&s, b), 0);
      cr_assert_str_eq (a, b, "length %zu", lens[k]);
    }
  char hex[CSR_SHA256_HEX_LEN + 1];
  struct csr_sha256 s;
  csr_sha256_init_fast (&s);
  csr_sha256_update (&s, "abc", 3);
  cr_assert_eq (csr_sha256_final (&s, hex), 0);
  cr_assert_str_eq (hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
