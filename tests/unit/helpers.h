/* csrun — what the Criterion unit tests share: formatting that fails the
 * test instead of truncating, per-test scratch directories, and the path of
 * a policy file in the source tree.  Header only (static inline: a test
 * includes what it uses, and unused helpers cost nothing).  Include it
 * after <criterion/criterion.h>. */
#ifndef CSRUN_TESTS_UNIT_HELPERS_H
#define CSRUN_TESTS_UNIT_HELPERS_H

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/fs.h"

/* snprintf that fails the test instead of truncating. */
static inline void fmt (char *buf, size_t size, const char *f, ...)
    __attribute__ ((format (printf, 3, 4)));
static inline void
fmt (char *buf, size_t size, const char *f, ...)
{
  va_list ap;
  va_start (ap, f);
  int n = vsnprintf (buf, size, f, ap);
  va_end (ap);
  cr_assert (n >= 0 && (size_t)n < size, "path too long");
}

/* Where scratch directories go: $TMPDIR, else /tmp. */
static inline const char *
test_tmp_base (void)
{
  const char *t = getenv ("TMPDIR");
  return t && *t ? t : "/tmp";
}

/* A fresh directory BASE/csrun-NAME.XXXXXX into BUF (SIZE bytes). */
static inline void
test_tmpdir_in (char *buf, size_t size, const char *name)
{
  fmt (buf, size, "%s/csrun-%s.XXXXXX", test_tmp_base (), name);
  cr_assert_not_null (mkdtemp (buf), "mkdtemp: %s", strerror (errno));
}

/* The same, malloc'ed (the caller frees it). */
static inline char *
test_tmpdir (const char *name)
{
  char *dir = NULL;
  cr_assert_geq (asprintf (&dir, "%s/csrun-%s.XXXXXX", test_tmp_base (), name), 0);
  cr_assert_not_null (mkdtemp (dir), "mkdtemp: %s", strerror (errno));
  return dir;
}

/* Remove the scratch directory DIR (a warning, not a failure, when it can't
 * be: it is cleanup). */
static inline void
test_tmpdir_remove (const char *dir)
{
  csr_error *err = NULL;
  if (dir[0] && csr_rm_rf (dir, &err) < 0)
    cr_log_warn ("cleanup: %s", csr_error_text (err));
  csr_error_free (err);
}

/* policies/NAME of the source tree (malloc'ed): $CSRUN_SRCDIR (set by make
 * check), else found from this file's own path. */
static inline char *
test_policy_path (const char *name)
{
  char *path = NULL;
  const char *srcdir = getenv ("CSRUN_SRCDIR");
  if (srcdir && *srcdir)
    cr_assert_geq (asprintf (&path, "%s/policies/%s", srcdir, name), 0);
  else
    {
      /* tests/unit/helpers.h → policies/NAME */
      const char *end = strstr (__FILE__, "tests/unit/");
      int dir = end ? (int)(end - __FILE__) : 0;
      cr_assert_geq (asprintf (&path, "%.*spolicies/%s", dir, __FILE__, name), 0);
    }
  return path;
}

#endif
