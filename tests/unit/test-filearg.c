#include "config.h"

#include <criterion/criterion.h>
#include <string.h>

#include "util/filearg.h"
#include "util/pack.h"

/* ------------------------------------------------------------------ --in */

static void
in_ok (const char *arg, const char *src, const char *dest)
{
  struct csr_in_arg in;
  csr_error *err = NULL;
  cr_assert_eq (csr_in_arg_parse (arg, &in, &err), 0, "'%s': %s", arg, err ? err->msg : "");
  cr_assert_str_eq (in.src, src);
  cr_assert_str_eq (in.dest, dest);
  csr_in_arg_release (&in);
}

static void
in_bad (const char *arg, const char *want)
{
  struct csr_in_arg in;
  csr_error *err = NULL;
  cr_assert_lt (csr_in_arg_parse (arg, &in, &err), 0, "'%s' should be refused", arg);
  cr_assert_not_null (strstr (err->msg, want), "'%s': %s", arg, err->msg);
  csr_error_free (err);
}

Test (filearg, in_default_dest)
{
  in_ok ("data.csv", "data.csv", "/work/data.csv");
  in_ok ("/srv/x/dir/", "/srv/x/dir/", "/work/dir");
  in_ok ("a:b.txt", "a:b.txt", "/work/a:b.txt"); /* a colon not followed by '/' is the name's */
}

Test (filearg, in_explicit_dest)
{
  in_ok ("data.csv:/work/in/d.csv", "data.csv", "/work/in/d.csv");
  in_ok ("x:/tmp/y", "x", "/tmp/y");
}

Test (filearg, in_refused)
{
  in_bad ("x:/usr/x", "below /work or /tmp");
  in_bad ("x:/work", "below /work or /tmp");
  in_bad ("x:/work/../etc/passwd", "'..'");
  in_bad ("x:/work/./a", "'.'");
  in_bad ("x:/work//a", "below /work");
  in_bad ("x:/work/a/", "below /work");
  in_bad ("x:/workshop/a", "below /work");
  in_bad ("x:/work/snippet.py", "the snippet itself");
  in_bad ("..", "no file name");
  in_bad (":/work/a", "no host path");
}

/* ------------------------------------------------------------------ --mount */

Test (filearg, mount_parse)
{
  struct csr_mount_arg m;
  csr_error *err = NULL;
  cr_assert_eq (csr_mount_arg_parse ("/srv/data:/data", &m, &err), 0);
  cr_assert_str_eq (m.src, "/srv/data");
  cr_assert_str_eq (m.dst, "/data");
  cr_assert (!m.rw);
  csr_mount_arg_release (&m);
  cr_assert_eq (csr_mount_arg_parse ("/srv/data:/work/d:rw", &m, &err), 0);
  cr_assert (m.rw);
  csr_mount_arg_release (&m);
  cr_assert_eq (csr_mount_arg_parse ("/srv/data:/mnt/a/b:ro", &m, &err), 0);
  cr_assert (!m.rw);
  csr_mount_arg_release (&m);
}

Test (filearg, mount_refused)
{
  const char *bad[] = { "/x:/usr",        "/x:/proc/self", "/x:/dev",      "/x:/work",
                        "/x:/mnt/../usr", "/x:/datax",     "/x:/data:rwx", "/x",
                        ":/work/a",       "/x:/",          "/x:relative",  "/x:/work/snippet.py" };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      struct csr_mount_arg m;
      csr_error *err = NULL;
      cr_assert_lt (csr_mount_arg_parse (bad[i], &m, &err), 0, "'%s' should be refused", bad[i]);
      csr_error_free (err);
    }
}

Test (filearg, in_inside_mount_refused)
{
  struct csr_in_arg in = { (char *)"a", (char *)"/work/m/a" };
  struct csr_mount_arg m = { (char *)"/srv", (char *)"/work/m", false };
  csr_error *err = NULL;
  cr_assert_lt (csr_files_args_check (&in, 1, &m, 1, &err), 0);
  csr_error_free (err);
  err = NULL;
  struct csr_in_arg above = { (char *)"d", (char *)"/work/m" };
  cr_assert_lt (csr_files_args_check (&above, 1, &m, 1, &err), 0);
  csr_error_free (err);
  err = NULL;
  struct csr_in_arg beside = { (char *)"d", (char *)"/work/mm" };
  cr_assert_eq (csr_files_args_check (&beside, 1, &m, 1, &err), 0);
}

/* ------------------------------------------------------------------ --out-path */

Test (filearg, out_globs)
{
  const char *g[] = { "*.csv", "res", "logs/*.txt" };
  cr_assert (csr_out_glob_match ("a.csv", g, 3));
  cr_assert (!csr_out_glob_match ("sub/a.csv", g, 3)); /* '*' does not cross '/' */
  cr_assert (csr_out_glob_match ("res", g, 3));
  cr_assert (csr_out_glob_match ("res/deep/x.bin", g, 3)); /* a directory brings its contents */
  cr_assert (csr_out_glob_match ("logs/a.txt", g, 3));
  cr_assert (!csr_out_glob_match ("logs/a.log", g, 3));
  cr_assert (!csr_out_glob_match ("resx", g, 3));
  cr_assert (csr_out_glob_match ("anything", NULL, 0));
}

/* ------------------------------------------------------------------ pack paths */

Test (filearg, pack_paths)
{
  cr_assert (csr_pack_path_ok ("a/b.txt"));
  cr_assert (!csr_pack_path_ok ("/a"));
  cr_assert (!csr_pack_path_ok ("a/../b"));
  cr_assert (!csr_pack_path_ok (".."));
  cr_assert (!csr_pack_path_ok ("a//b"));
  cr_assert (!csr_pack_path_ok ("a/"));
  cr_assert (!csr_pack_path_ok (""));
  cr_assert (!csr_pack_path_ok ("./a"));
}

Test (filearg, same_dest_refused)
{
  struct csr_in_arg in[2] = { { (char *)"a/x.csv", (char *)"/work/x.csv" },
                              { (char *)"b/x.csv", (char *)"/work/x.csv" } };
  csr_error *err = NULL;
  cr_assert_lt (csr_files_args_check (in, 2, NULL, 0, &err), 0);
  cr_assert_not_null (strstr (err->msg, "both go to /work/x.csv"));
  csr_error_free (err);
}
