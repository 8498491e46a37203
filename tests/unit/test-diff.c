/* Unit tests for csr_unified_diff: exact output on small cases, and random
 * edits whose diffs must apply with patch(1) and git apply. */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/heal.h"
#include "util/fs.h"

#include "helpers.h"

static char root[2048]; /* per-test scratch directory */

static void
setup (void)
{
  test_tmpdir_in (root, sizeof root, "test-diff");
}

static void
teardown (void)
{
  test_tmpdir_remove (root);
}

TestSuite (diff, .init = setup, .fini = teardown);

#define HDR "--- a/f.py\n+++ b/f.py\n"

static void
check (const char *a, const char *b, const char *want)
{
  char *got = csr_unified_diff (a, b, "f.py");
  cr_assert_not_null (got);
  cr_assert_str_eq (got, want, "diff of\n%s\nand\n%s\ngot:\n%s\nwanted:\n%s", a, b, got, want);
  free (got);
}

static bool
have (const char *tool)
{
  char cmd[256];
  snprintf (cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
  return system (cmd) == 0;
}

static void
write_file (const char *dir, const char *name, const char *data)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  csr_error *err = NULL;
  cr_assert_eq (csr_write_file_atomic (path, data, strlen (data), 0644, &err), 0, "%s",
                err ? csr_error_text (err) : "");
}

static char *
read_back (const char *dir, const char *name)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  char *s = NULL;
  size_t len = 0;
  csr_error *err = NULL;
  cr_assert_eq (csr_read_file (path, 1 << 24, &s, &len, &err), 0);
  return s;
}

/* Count the '-' and '+' lines of a unified diff. */
static size_t
changed_lines (const char *diff)
{
  size_t n = 0;
  for (const char *p = diff; *p;)
    {
      if ((*p == '-' && strncmp (p, "--- ", 4) != 0) || (*p == '+' && strncmp (p, "+++ ", 4) != 0))
        n++;
      const char *nl = strchr (p, '\n');
      if (nl == NULL)
        break;
      p = nl + 1;
    }
  return n;
}

/* The diff of A and B turns A into B with patch -p1 (really applied, then
 * compared) and passes git apply --check; it changes no more lines than
 * diff --minimal. */
static void
verify (const char *a, const char *b, int n)
{
  char *diff = csr_unified_diff (a, b, "f.py");
  cr_assert_not_null (diff);
  if (strcmp (a, b) == 0)
    {
      cr_assert_str_eq (diff, "");
      free (diff);
      return;
    }
  char dir[4096], cmd[8192];
  snprintf (dir, sizeof dir, "%s/case%d", root, n);
  cr_assert_eq (mkdir (dir, 0755), 0);
  write_file (dir, "f.py", a);
  write_file (dir, "want.py", b);
  write_file (dir, "fix.diff", diff);
  if (have ("git"))
    {
      snprintf (cmd, sizeof cmd, "cd '%s' && git apply --check fix.diff >/dev/null 2>&1", dir);
      cr_assert_eq (system (cmd), 0, "git apply --check rejects (case %d):\n%s", n, diff);
    }
  if (have ("patch"))
    {
      snprintf (cmd, sizeof cmd, "cd '%s' && patch -s -p1 --dry-run < fix.diff >/dev/null 2>&1",
                dir);
      cr_assert_eq (system (cmd), 0, "patch --dry-run rejects (case %d):\n%s", n, diff);
      snprintf (cmd, sizeof cmd, "cd '%s' && patch -s -p1 < fix.diff >/dev/null 2>&1", dir);
      cr_assert_eq (system (cmd), 0);
      char *got = read_back (dir, "f.py");
      cr_assert_str_eq (got, b, "patch gives a different file (case %d):\n%s", n, diff);
      free (got);
      write_file (dir, "f.py", a);
    }
  if (have ("diff"))
    {
      snprintf (cmd, sizeof cmd, "cd '%s' && diff --minimal -u f.py want.py > gnu.diff", dir);
      int rc = system (cmd);
      cr_assert (WIFEXITED (rc) && WEXITSTATUS (rc) == 1);
      char *gnu = read_back (dir, "gnu.diff");
      cr_assert_leq (changed_lines (diff), changed_lines (gnu),
                     "not minimal (case %d): ours\n%s\nGNU diff --minimal\n%s", n, diff, gnu);
      free (gnu);
    }
  free (diff);
  csr_error *err = NULL;
  cr_assert_eq (csr_rm_rf (dir, &err), 0);
}

/* ---------------------------------------------------------------- exact */

Test (diff, identical_is_empty)
{
  check ("", "", "");
  check ("a\nb\n", "a\nb\n", "");
  check ("no newline", "no newline", "");
  char *d = csr_unified_diff (NULL, NULL, NULL);
  cr_assert_str_eq (d, "");
  free (d);
}

Test (diff, insert_at_top)
{
  check ("a\nb\nc\nd\ne\n", "x\na\nb\nc\nd\ne\n", HDR "@@ -1,3 +1,4 @@\n+x\n a\n b\n c\n");
  check ("a\n", "import math\na\n", HDR "@@ -1 +1,2 @@\n+import math\n a\n");
}

Test (diff, insert_at_end)
{
  check ("a\nb\nc\nd\ne\n", "a\nb\nc\nd\ne\nf\n", HDR "@@ -3,3 +3,4 @@\n c\n d\n e\n+f\n");
}

Test (diff, empty_files)
{
  check ("", "a\nb\n", HDR "@@ -0,0 +1,2 @@\n+a\n+b\n");
  check ("a\nb\n", "", HDR "@@ -1,2 +0,0 @@\n-a\n-b\n");
  check ("", "x", HDR "@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n");
}

Test (diff, change_in_the_middle)
{
  check ("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
         HDR "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

Test (diff, no_newline_at_end)
{
  /* Only the newline differs. */
  check ("a\nb", "a\nb\n", HDR "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
  check ("a\nb\n", "a\nb", HDR "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n");
  /* Both lack it, the last line changes. */
  check ("a\nb", "a\nc",
         HDR "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of "
             "file\n");
  /* A change far from the unterminated last line. */
  check ("1\n2\n3\n4\n5\n6\n7\n8", "one\n2\n3\n4\n5\n6\n7\n8",
         HDR "@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n");
  check ("1\n2\n3", "0\n1\n2\n3",
         HDR "@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n\\ No newline at end of file\n");
}

Test (diff, hunks_split_and_merged)
{
  /* Changes 7 equal lines apart: two hunks (as GNU diff -u). */
  check ("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "X\n2\n3\n4\n5\n6\n7\n8\nY\n",
         HDR "@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n"
             "@@ -6,4 +6,4 @@\n 6\n 7\n 8\n-9\n+Y\n");
  /* 6 equal lines apart: one hunk. */
  check ("1\n2\n3\n4\n5\n6\n7\n8\n", "X\n2\n3\n4\n5\n6\n7\nY\n",
         HDR "@@ -1,8 +1,8 @@\n-1\n+X\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+Y\n");
}

Test (diff, label)
{
  char *d = csr_unified_diff ("a\n", "b\n", "snippet.py");
  cr_assert_str_eq (d, "--- a/snippet.py\n+++ b/snippet.py\n@@ -1 +1 @@\n-a\n+b\n");
  free (d);
}

/* ------------------------------------------------------ against tools */

Test (diff, small_cases_apply)
{
  static const char *const pairs[][2] = {
    { "a\n", "b\n" },
    { "a\nb\nc\n", "c\nb\na\n" },
    { "x\nx\nx\n", "x\nx\n" },
    { "a\nb\na\nb\n", "b\na\nb\na\n" },
    { "", "only\n" },
    { "only\n", "" },
    { "a", "b" },
    { "a\n\n\nb\n", "a\n\nb\n\n" },
    { "def f():\n    return 1\n", "import math\ndef f():\n    return math.pi\n" },
    { "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\nl13\nl14\n",
      "l1\nl2\nL3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nL12\nl13\n" },
  };
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    verify (pairs[i][0], pairs[i][1], (int)i);
}

/* A random text of N lines over a small alphabet (so lines repeat). */
static char *
random_text (unsigned *seed, int n, bool final_newline)
{
  size_t cap = (size_t)n * 8 + 16, len = 0;
  char *s = malloc (cap);
  cr_assert_not_null (s);
  for (int i = 0; i < n; i++)
    {
      int k = rand_r (seed) % 12;
      len += (size_t)snprintf (s + len, cap - len, k < 10 ? "l%d\n" : "\n", k);
    }
  if (!final_newline && len > 0 && s[len - 1] == '\n')
    len--;
  s[len] = '\0';
  return s;
}

/* B = A with random line insertions, deletions and changes. */
static char *
random_edit (unsigned *seed, const char *a)
{
  size_t cap = strlen (a) * 4 + 256, len = 0;
  char *b = malloc (cap);
  cr_assert_not_null (b);
  const char *p = a;
  int rate = 1 + rand_r (seed) % 3; /* in tenths: deletions, insertions, changes */
  while (*p && len + 64 < cap)
    {
      const char *nl = strchr (p, '\n');
      size_t l = nl ? (size_t)(nl - p) + 1 : strlen (p);
      int r = rand_r (seed) % 10;
      if (r < rate) /* delete */
        p += l;
      else if (r < 2 * rate) /* insert before */
        len += (size_t)snprintf (b + len, cap - len, "new%d\n", rand_r (seed) % 5);
      else if (r < 3 * rate) /* change */
        {
          len += (size_t)snprintf (b + len, cap - len, "chg%d\n", rand_r (seed) % 5);
          p += l;
        }
      else
        {
          memcpy (b + len, p, l);
          len += l;
          p += l;
        }
    }
  while (rand_r (seed) % 3 == 0 && len + 64 < cap) /* append */
    len += (size_t)snprintf (b + len, cap - len, "end%d\n", rand_r (seed) % 5);
  /* Sometimes drop or add the final newline. */
  if (len > 0 && rand_r (seed) % 6 == 0)
    {
      if (b[len - 1] == '\n')
        len--;
      else
        b[len++] = '\n';
    }
  b[len] = '\0';
  return b;
}

Test (diff, random_edits_apply, .timeout = 120)
{
  if (!have ("patch") && !have ("git"))
    cr_skip_test ("neither patch nor git is installed");
  unsigned seed = 12345;
  for (int i = 0; i < 150; i++)
    {
      int n = rand_r (&seed) % (i < 100 ? 20 : 200);
      char *a = random_text (&seed, n, rand_r (&seed) % 5 != 0);
      char *b = rand_r (&seed) % 10 == 0 ? random_text (&seed, rand_r (&seed) % 30, true)
                                         : random_edit (&seed, a);
      verify (a, b, 100 + i);
      free (a);
      free (b);
    }
}

Test (diff, large_and_totally_different)
{
  /* Worst case for the algorithm: nothing in common. */
  size_t n = 3000;
  char *a = malloc (n * 8 + 1), *b = malloc (n * 8 + 1);
  size_t la = 0, lb = 0;
  for (size_t i = 0; i < n; i++)
    {
      la += (size_t)sprintf (a + la, "a%zu\n", i);
      lb += (size_t)sprintf (b + lb, "b%zu\n", i);
    }
  char *d = csr_unified_diff (a, b, "f.py");
  cr_assert_not_null (d);
  cr_assert_eq (changed_lines (d), 2 * n);
  free (d);
  verify (a, b, 1);
  free (a);
  free (b);
}

/* ------------------------------------------------------------ the budget */

/* N lines: "1\n" each (a reply made of one repeated line). */
static char *
repeated_lines (size_t n)
{
  char *s = malloc (2 * n + 1);
  cr_assert_not_null (s);
  for (size_t i = 0; i < n; i++)
    memcpy (s + 2 * i, "1\n", 2);
  s[2 * n] = '\0';
  return s;
}

/* N lines where every other one differs between the two texts (WHICH 0 or 1). */
static char *
interleaved_lines (size_t n, int which)
{
  char *s = malloc (n * 16 + 1);
  cr_assert_not_null (s);
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += (size_t)sprintf (s + len, "%c%zu\n", i % 2 ? 'x' : (which ? 'b' : 'a'), i);
  return s;
}

Test (diff, huge_reply_takes_the_fallback, .timeout = 60)
{
  /* A short snippet and a 300,000-line reply: without a bound, Myers needs
   * D = 300,000 and about D^2 / 2 steps (minutes). */
  const char *a = "print(undefined_name)\n";
  char *b = repeated_lines (300000);
  struct csr_diff_stats st;
  char *d = csr_unified_diff_ex (a, b, "f.py", CSR_DIFF_BUDGET, &st);
  cr_assert_not_null (d);
  cr_assert (st.replaced_all, "the fallback was not taken (work %llu)",
             (unsigned long long)st.work);
  cr_assert_leq (st.work, CSR_DIFF_BUDGET + 2 * (uint64_t)CSR_DIFF_MAX_D + 2);
  cr_assert_eq (changed_lines (d), 300001);
  cr_assert (strncmp (d, HDR "@@ -1 +1,300000 @@\n-print(undefined_name)\n+1\n", 51) == 0, "%.200s",
             d);
  free (d);
  free (b);
}

Test (diff, huge_pair_takes_the_fallback, .timeout = 60)
{
  /* Two 300,000-line texts that differ on every other line. */
  char *a = interleaved_lines (300000, 0), *b = interleaved_lines (300000, 1);
  struct csr_diff_stats st;
  char *d = csr_unified_diff_ex (a, b, "f.py", CSR_DIFF_BUDGET, &st);
  cr_assert_not_null (d);
  cr_assert (st.replaced_all);
  cr_assert_leq (st.work, CSR_DIFF_BUDGET + 2 * (uint64_t)CSR_DIFF_MAX_D + 2);
  cr_assert_eq (changed_lines (d), 600000);
  free (d);
  free (a);
  free (b);
}

Test (diff, huge_reply_plain_call_is_bounded, .timeout = 10)
{
  /* What the healing loop calls: must come back (the timeout fails it on a
   * diff without a budget). */
  char *b = repeated_lines (300000);
  char *d = csr_unified_diff ("print(undefined_name)\n", b, "f.py");
  cr_assert_not_null (d);
  cr_assert_eq (changed_lines (d), 300001);
  free (d);
  free (b);
}

Test (diff, fallback_diff_applies)
{
  /* Past the budget the diff still turns A into B; a tiny budget forces it. */
  char *a = interleaved_lines (300, 0), *b = interleaved_lines (300, 1);
  struct csr_diff_stats st;
  char *d = csr_unified_diff_ex (a, b, "f.py", 10, &st);
  cr_assert_not_null (d);
  cr_assert (st.replaced_all);
  cr_assert_eq (changed_lines (d), 600);
  free (d);
  verify (a, b, 2); /* the default budget: a real, minimal diff */
  char *small = csr_unified_diff_ex (a, b, "f.py", CSR_DIFF_BUDGET, &st);
  cr_assert (!st.replaced_all);
  free (small);
  free (a);
  free (b);
}

Test (diff, small_edits_stay_minimal_within_the_budget)
{
  /* 2,000 edits spread over a 100,000-line file: well inside the bound. */
  char *a = interleaved_lines (100000, 0);
  char *b = strdup (a);
  cr_assert_not_null (b);
  size_t changed = 0;
  for (char *p = b; *p && changed < 1000; p++)
    if (*p == 'a' && (p == b || p[-1] == '\n') && (p - b) % 97 < 50)
      {
        *p = 'c';
        changed++;
      }
  cr_assert_eq (changed, 1000);
  struct csr_diff_stats st;
  char *d = csr_unified_diff_ex (a, b, "f.py", CSR_DIFF_BUDGET, &st);
  cr_assert_not_null (d);
  cr_assert (!st.replaced_all, "work %llu", (unsigned long long)st.work);
  cr_assert_eq (changed_lines (d), 2 * changed);
  free (d);
  free (a);
  free (b);
}
