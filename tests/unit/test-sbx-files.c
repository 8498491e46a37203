/* Sandbox files (src/lib/sandbox/files.h): paths, tar entry names, where a
 * tree goes, ID:PATH arguments, listing records, the worker's seccomp
 * filter, and the host's side of an extraction with hostile entries. */
#include "config.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/seccomp.h>

#include "helpers.h"
#include "sandbox/files-tar.h"
#include "sandbox/files-worker.h"
#include "sandbox/files.h"

static void
clean_ok (const char *wd, const char *in, const char *want, bool want_slash)
{
  char *out = NULL;
  bool slash = !want_slash;
  csr_error *e = NULL;
  cr_assert_eq (csr_files_clean_path (wd, in, &out, &slash, &e), 0, "%s: %s", in,
                e ? csr_error_text (e) : "");
  cr_assert_str_eq (out, want, "%s", in);
  cr_assert_eq (slash, want_slash, "%s: slash", in);
  free (out);
}

Test (sbx_files, clean_path)
{
  clean_ok ("/work", "a.txt", "/work/a.txt", false);
  clean_ok ("/work", "/etc//passwd", "/etc/passwd", false);
  clean_ok ("/work", "./a/./b/", "/work/a/b", true);
  clean_ok ("/work", "a/../b", "/work/b", false);
  clean_ok ("/work", "..", "/", true);
  clean_ok ("/work", "../etc/.", "/etc", true);
  clean_ok ("/work", ".", "/work", true);
  clean_ok ("/work", "/", "/", true);
  clean_ok ("/work/deep", "../../tmp", "/tmp", false);
  clean_ok (NULL, "x", "/x", false);
  const char *bad[] = { "../../etc", "/..", "/a/../..", "", "../../../x" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      char *out = NULL;
      csr_error *e = NULL;
      cr_assert_lt (csr_files_clean_path ("/work", bad[i], &out, NULL, &e), 0, "%s", bad[i]);
      cr_assert_null (out);
      cr_assert_not_null (e);
      csr_error_free (e);
    }
}

Test (sbx_files, entry_names)
{
  char out[64];
  cr_assert_eq (csr_files_entry_name ("./a//b/", out, sizeof out), 0);
  cr_assert_str_eq (out, "a/b");
  cr_assert_eq (csr_files_entry_name ("./", out, sizeof out), 0);
  cr_assert_str_eq (out, "");
  cr_assert_eq (csr_files_entry_name ("dir/", out, sizeof out), 0);
  cr_assert_str_eq (out, "dir");
  cr_assert_eq (csr_files_entry_name ("/etc/passwd", out, sizeof out), CSR_FILES_NAME_ABSOLUTE);
  cr_assert_eq (csr_files_entry_name ("../x", out, sizeof out), CSR_FILES_NAME_DOTDOT);
  cr_assert_eq (csr_files_entry_name ("a/../../x", out, sizeof out), CSR_FILES_NAME_DOTDOT);
  cr_assert_eq (csr_files_entry_name ("a/..", out, sizeof out), CSR_FILES_NAME_DOTDOT);
  cr_assert_eq (csr_files_entry_name ("", out, sizeof out), CSR_FILES_NAME_EMPTY);
  cr_assert_eq (csr_files_entry_name (NULL, out, sizeof out), CSR_FILES_NAME_EMPTY);
  char longname[100];
  memset (longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  cr_assert_eq (csr_files_entry_name (longname, out, sizeof out), CSR_FILES_NAME_LONG);
  /* "..." and "..a" are names like any other. */
  cr_assert_eq (csr_files_entry_name ("a/.../..b", out, sizeof out), 0);
  cr_assert_str_eq (out, "a/.../..b");
}

Test (sbx_files, place)
{
  csr_error *e = NULL;
  /* cp's rule: into an existing directory, else as DST. */
  cr_assert_eq (csr_files_place ("d", CSR_FILES_IS_DIR, false, "t", &e), CSR_FILES_PLACE_INTO);
  cr_assert_eq (csr_files_place ("d", CSR_FILES_MISSING, false, "t", &e), CSR_FILES_PLACE_AS);
  cr_assert_eq (csr_files_place ("d/", CSR_FILES_MISSING, true, "t", &e), CSR_FILES_PLACE_INTO);
  cr_assert_eq (csr_files_place ("f", CSR_FILES_IS_OTHER, false, "t", &e), CSR_FILES_PLACE_AS);
  /* A raw tar and the contents of a root always go into a directory. */
  cr_assert_eq (csr_files_place ("d", CSR_FILES_MISSING, false, NULL, &e), CSR_FILES_PLACE_INTO);
  cr_assert_eq (csr_files_place ("d", CSR_FILES_MISSING, false, ".", &e), CSR_FILES_PLACE_INTO);
  cr_assert_null (e);
  cr_assert_lt (csr_files_place ("f/", CSR_FILES_IS_OTHER, true, "t", &e), 0);
  cr_assert_eq (e->status, ENOTDIR);
  csr_error_freep (&e);
  cr_assert_lt (csr_files_place ("f", CSR_FILES_IS_OTHER, false, NULL, &e), 0);
  csr_error_free (e);
}

Test (sbx_files, split_arg)
{
  char *id, *path;
  cr_assert (csr_files_split_arg ("box1:/work/a", &id, &path));
  cr_assert_str_eq (id, "box1");
  cr_assert_str_eq (path, "/work/a");
  free (id);
  free (path);
  cr_assert (csr_files_split_arg ("abcd:x:y", &id, &path));
  cr_assert_str_eq (path, "x:y");
  free (id);
  free (path);
  const char *host[] = { "-", "file", "./a:b", "/tmp/a:b", ":x", "box:", "dir/x:y" };
  for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
    cr_assert (!csr_files_split_arg (host[i], &id, &path), "%s", host[i]);
}

Test (sbx_files, records_round_trip)
{
  struct csr_files_rec a
      = { CSR_FT_SYMLINK, 0777, 11, 1700000000, 5, (char *)"d/l\xff", (char *)"/etc" };
  struct csr_files_rec b = { CSR_FT_FILE, 04755, 1ULL << 40, -5, 0, (char *)"f", NULL };
  char buf[256];
  size_t na = csr_files_rec_encode (&a, buf, sizeof buf);
  size_t nb = csr_files_rec_encode (&b, buf + na, sizeof buf - na);
  cr_assert (na > 0 && nb > 0);
  struct csr_files_rec r;
  for (size_t cut = 0; cut < na; cut++)
    cr_assert_eq (csr_files_rec_decode (buf, cut, &r), 0, "cut at %zu", cut);
  cr_assert_eq (csr_files_rec_decode (buf, na + nb, &r), (ssize_t)na);
  cr_assert_eq (r.type, CSR_FT_SYMLINK);
  cr_assert_eq (r.mode, 0777);
  cr_assert_eq (r.size, 11);
  cr_assert_eq (r.mtime, 1700000000);
  cr_assert_str_eq (r.path, "d/l\xff");
  cr_assert_str_eq (r.target, "/etc");
  cr_assert_eq (csr_files_rec_decode (buf + na, nb, &r), (ssize_t)nb);
  cr_assert_eq (r.size, 1ULL << 40);
  cr_assert_eq (r.mode, 04755);
  cr_assert_null (r.target);
  /* Damaged: a bad magic, a type out of range. */
  char bad[256];
  memcpy (bad, buf, na);
  bad[0] ^= 1;
  cr_assert_eq (csr_files_rec_decode (bad, na, &r), -1);
  memcpy (bad, buf, na);
  bad[4] = 99;
  cr_assert_eq (csr_files_rec_decode (bad, na, &r), -1);
  /* Too small a buffer to encode. */
  cr_assert_eq (csr_files_rec_encode (&a, buf, 10), 0);
}

/* The worker's filter: no exec, no executable mapping (dlopen), plain
 * mappings and the rest still work. */
Test (sbx_files, lockdown_filter)
{
  struct csr_seccomp *sc = NULL;
  csr_error *e = NULL;
  cr_assert_eq (csr_files_lockdown (&sc, &e), 0, "%s", e ? csr_error_text (e) : "");
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
          || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &sc->prog) < 0)
        _exit (10);
      void *rw = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (rw == MAP_FAILED)
        _exit (11);
      void *x = mmap (NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (x != MAP_FAILED || errno != EPERM)
        _exit (12);
      if (mprotect (rw, 4096, PROT_READ | PROT_EXEC) == 0)
        _exit (13);
      if (dlopen ("libnss_dns.so.2", RTLD_NOW) != NULL)
        _exit (14);
      char *argv[] = { (char *)"/bin/true", NULL };
      execv ("/bin/true", argv);
      _exit (errno == EPERM ? 0 : 15);
    }
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFEXITED (st), "status %d", st);
  cr_assert_eq (WEXITSTATUS (st), 0, "step %d failed", WEXITSTATUS (st));
  csr_seccomp_free (sc);
}

/* A tar with hostile entries extracted on the host: the good entries are
 * made, the others refused and nothing appears outside. */
Test (sbx_files, host_unpack_refuses_escapes)
{
  char dir[512], tarp[600], dst[600], outside[600], probe[700];
  fmt (dir, sizeof dir, "%s/csrun-test-sbx-files.XXXXXX", test_tmp_base ());
  cr_assert_not_null (mkdtemp (dir));
  fmt (tarp, sizeof tarp, "%s/t.tar", dir);
  fmt (dst, sizeof dst, "%s/out", dir);
  fmt (outside, sizeof outside, "%s/outside", dir);
  cr_assert_eq (mkdir (outside, 0755), 0);
  csr_error *e = NULL;
  cr_assert_eq (csr_la_load (&e), 0, "%s", e ? csr_error_text (e) : "");
  int fd = open (tarp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  cr_assert_geq (fd, 0);
  struct archive *a = csr_ftar_writer (fd, &e);
  cr_assert_not_null (a);
  struct
  {
    const char *name;
    int type;
    const char *link; /* symlink target, or hardlink target with type 0 */
  } ents[] = {
    { "t", AE_IFDIR, NULL },       { "t/ok", AE_IFREG, NULL },   { "t/../x", AE_IFREG, NULL },
    { "/abs", AE_IFREG, NULL },    { "t/l", AE_IFLNK, outside }, { "t/l/evil", AE_IFREG, NULL },
    { "t/hl", 0, "/etc/passwd" },  { "t/hl2", 0, "t/ok" },       { "t/dev", AE_IFCHR, NULL },
    { "other/x", AE_IFREG, NULL },
  };
  for (size_t i = 0; i < sizeof ents / sizeof ents[0]; i++)
    {
      struct archive_entry *en = csr_la.archive_entry_new ();
      csr_la.archive_entry_copy_pathname (en, ents[i].name);
      csr_la.archive_entry_set_perm (en, ents[i].type == AE_IFDIR ? 0755 : 0644);
      if (ents[i].type == 0)
        {
          csr_la.archive_entry_set_filetype (en, AE_IFREG);
          csr_la.archive_entry_copy_hardlink (en, ents[i].link);
        }
      else
        csr_la.archive_entry_set_filetype (en, (unsigned)ents[i].type);
      if (ents[i].type == AE_IFLNK)
        csr_la.archive_entry_copy_symlink (en, ents[i].link);
      bool data = ents[i].type == AE_IFREG;
      csr_la.archive_entry_set_size (en, data ? 3 : 0);
      cr_assert_geq (csr_la.archive_write_header (a, en), ARCHIVE_WARN, "%s", ents[i].name);
      if (data)
        cr_assert_eq (csr_la.archive_write_data (a, "abc", 3), 3);
      csr_la.archive_entry_free (en);
    }
  cr_assert_eq (csr_ftar_writer_close (a, &e), 0);
  close (fd);
  fd = open (tarp, O_RDONLY);
  struct csr_files_limits lim = { 1 << 20, 1000 };
  struct csr_files_stats st = { 0 };
  cr_assert_eq (csr_files_host_unpack (fd, dst, &lim, &st, &e), 0, "%s",
                e ? csr_error_text (e) : "");
  close (fd);
  /* DST did not exist: the tree "t" became DST. */
  fmt (probe, sizeof probe, "%s/ok", dst);
  cr_assert_eq (access (probe, F_OK), 0);
  fmt (probe, sizeof probe, "%s/hl2", dst);
  struct stat sb;
  cr_assert_eq (lstat (probe, &sb), 0);
  cr_assert_eq (sb.st_nlink, 2);
  cr_assert_eq (st.files, 1);
  cr_assert_eq (st.hardlinks, 1);
  cr_assert_eq (st.symlinks, 1);
  cr_assert_eq (st.refused.n, 6, "refused %zu", st.refused.n);
  fmt (probe, sizeof probe, "%s/evil", outside);
  cr_assert_neq (access (probe, F_OK), 0);
  fmt (probe, sizeof probe, "%s/x", dir);
  cr_assert_neq (access (probe, F_OK), 0);
  fmt (probe, sizeof probe, "%s/dev", dst);
  cr_assert_neq (access (probe, F_OK), 0);
  csr_files_stats_release (&st);
  csr_error *ignored = NULL;
  csr_rm_rf (dir, &ignored);
  csr_error_free (ignored);
}
