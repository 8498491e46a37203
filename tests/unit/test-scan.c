#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/scan.h"
#include "util/fs.h"

#include "helpers.h"

/* ------------------------------------------------------------- helpers */

static void
load_defaults (struct csr_scan *s)
{
  char *path = test_policy_path ("silent-failure.conf");
  csr_error *err = NULL;
  memset (s, 0, sizeof *s);
  int rc = csr_scan_load (path, s, &err);
  cr_assert_eq (rc, 0, "cannot load %s: %s", path, err ? csr_error_text (err) : "?");
  cr_assert_null (err);
  free (path);
}

/* Match TEXT against S: the pattern (NULL for no match) and the line. */
static const char *
match (const struct csr_scan *s, const char *text, char **line)
{
  const char *pattern = (const char *)1;
  char *l = (char *)1;
  bool hit = csr_scan_match (s, text, strlen (text), &pattern, &l);
  if (!hit)
    {
      cr_assert_null (pattern);
      cr_assert_null (l);
      if (line)
        *line = NULL;
      return NULL;
    }
  cr_assert_not_null (pattern);
  cr_assert_not_null (l);
  if (line)
    *line = l;
  else
    free (l);
  return pattern;
}

static void
expect_hit (const struct csr_scan *s, const char *text, const char *pattern, const char *line)
{
  char *l = NULL;
  const char *p = match (s, text, &l);
  cr_assert_not_null (p, "no pattern matched: %s", text);
  cr_assert_str_eq (p, pattern, "for: %s", text);
  cr_assert_str_eq (l, line);
  free (l);
}

static void
expect_miss (const struct csr_scan *s, const char *text)
{
  char *l = NULL;
  const char *p = match (s, text, &l);
  cr_assert_null (p, "'%s' matched '%s' (line '%s')", p, text, l);
}

static void
parse_ok (struct csr_scan *s, const char *text)
{
  csr_error *err = NULL;
  int rc = csr_scan_parse (text, strlen (text), s, &err);
  cr_assert_eq (rc, 0, "parse failed: %s", err ? csr_error_text (err) : "?");
  cr_assert_null (err);
}

static void
parse_fails (const char *text, const char *message)
{
  struct csr_scan s = { 0 };
  csr_error *err = NULL;
  int rc = csr_scan_parse (text, strlen (text), &s, &err);
  cr_assert_lt (rc, 0, "parse of '%s' should fail", text);
  cr_assert_not_null (err);
  cr_assert_str_eq (csr_error_text (err), message);
  cr_assert_eq (s.n, 0);
  csr_error_free (err);
  csr_scan_release (&s);
}

/* ------------------------------------------------------- the defaults */

Test (defaults, load)
{
  struct csr_scan s;
  load_defaults (&s);
  cr_assert_eq (s.n, 8);
  /* The five of the issue come first. */
  cr_assert_str_eq (s.sources[0], "empty\\s+dataframe");
  cr_assert_str_eq (s.sources[1], "\\ball[-[:space:]]+nans?\\b");
  cr_assert_str_eq (s.sources[2], "\\btraceback \\(most recent call last\\)");
  cr_assert_str_eq (s.sources[3], "\\bpipeline\\s+failed");
  cr_assert_str_eq (s.sources[4], "\\bfatal\\s+error");
  csr_scan_release (&s);
  cr_assert_eq (s.n, 0);
  cr_assert_null (s.sources);
  cr_assert_null (s.res);
}

Test (defaults, failures_are_caught)
{
  struct csr_scan s;
  load_defaults (&s);
  /* What pandas prints for an empty frame. */
  expect_hit (&s, "rows after filter:\nEmpty DataFrame\nColumns: [id, name]\nIndex: []\n",
              "empty\\s+dataframe", "Empty DataFrame");
  expect_hit (&s, "column price is all NaN\n", "\\ball[-[:space:]]+nans?\\b",
              "column price is all NaN");
  expect_hit (&s, "ALL   NANS in the result", "\\ball[-[:space:]]+nans?\\b",
              "ALL   NANS in the result");
  expect_hit (&s,
              "/usr/lib/python3/dist-packages/numpy/lib/nanfunctions.py:1217: RuntimeWarning: "
              "All-NaN slice encountered\n  return np.nanmax(a)\n",
              "\\ball[-[:space:]]+nans?\\b",
              "/usr/lib/python3/dist-packages/numpy/lib/nanfunctions.py:1217: RuntimeWarning: "
              "All-NaN slice encountered");
  expect_hit (&s,
              "loading\nTraceback (most recent call last):\n  File \"snippet.py\", line 3, in "
              "<module>\nValueError: x\ncontinuing\n",
              "\\btraceback \\(most recent call last\\)", "Traceback (most recent call last):");
  expect_hit (&s, "  + Exception Group Traceback (most recent call last):\n",
              "\\btraceback \\(most recent call last\\)",
              "  + Exception Group Traceback (most recent call last):");
  expect_hit (&s, "step 3/4\nPipeline failed: no rows\n", "\\bpipeline\\s+failed",
              "Pipeline failed: no rows");
  expect_hit (&s, "ETL PIPELINE\tFAILED.", "\\bpipeline\\s+failed", "ETL PIPELINE\tFAILED.");
  expect_hit (&s, "Fatal error: cannot continue", "\\bfatal\\s+error",
              "Fatal error: cannot continue");
  /* The same line matches two patterns: the one listed first is named. */
  expect_hit (&s, "Error: [Errno 2] No such file or directory: 'data.csv'\nDone\n",
              "\\[errno -?[0-9]+\\]", "Error: [Errno 2] No such file or directory: 'data.csv'");
  expect_hit (&s, "fetch failed: <urlopen error [Errno -3] Temporary failure in name resolution>",
              "\\[errno -?[0-9]+\\]",
              "fetch failed: <urlopen error [Errno -3] Temporary failure in name resolution>");
  expect_hit (&s, "could not save: [Errno 30] Read-only file system: '/out.csv'",
              "\\[errno -?[0-9]+\\]",
              "could not save: [Errno 30] Read-only file system: '/out.csv'");
  expect_hit (&s, "Error reading input: No such file or directory",
              "\\bno such file or directory\\b", "Error reading input: No such file or directory");
  expect_hit (&s, "INFO:root:start\nERROR:root:model failed to load\n",
              "^(error|critical):[^:[:space:]]+:", "ERROR:root:model failed to load");
  expect_hit (&s, "CRITICAL:etl.loader:disk full",
              "^(error|critical):[^:[:space:]]+:", "CRITICAL:etl.loader:disk full");
  csr_scan_release (&s);
}

Test (defaults, ordinary_output_is_not_a_failure)
{
  struct csr_scan s;
  load_defaults (&s);
  const char *ok[] = {
    "Nothing to do.",
    "nothing to do: all files up to date",
    "NaN",
    "mean: nan",
    "[1.0, nan, 3.0]",
    "Overall NaN count: 0",
    "Total NaN values per column:\na    0\nb    2\ndtype: int64",
    "small nanoparticles",
    "all nanoseconds are counted",
    "Series([], dtype: int64)",
    "Series([], Name: price, dtype: float64)",
    "The DataFrame is not empty",
    "Empty list: []",
    "No missing values found",
    "Error: 0.05",
    "Mean squared error: 0.123",
    "error_rate=0.1",
    "0 errors, 0 warnings",
    "INFO:root:started",
    "WARNING:root:slow query",
    "Errors: none",
    "import traceback",
    "traceback printing is disabled",
    "The pipeline finished in 3 s",
    "fatalities: 3",
    "No errors. Nothing failed.",
    "errno is a C variable",
    "Hello, world!",
    "",
  };
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    expect_miss (&s, ok[i]);
  csr_scan_release (&s);
}

/* ------------------------------------------------------------ matching */

Test (match, first_line_wins_over_pattern_order)
{
  struct csr_scan s = { 0 };
  parse_ok (&s, "alpha\nbeta\n");
  /* beta (pattern 2) is on an earlier line than alpha (pattern 1). */
  expect_hit (&s, "x\nthe beta line\nthe alpha line\n", "beta", "the beta line");
  expect_hit (&s, "alpha beta\n", "alpha", "alpha beta");
  csr_scan_release (&s);
}

Test (match, line_by_line)
{
  struct csr_scan s = { 0 };
  parse_ok (&s, "empty\\s+dataframe\n^done$\n");
  /* \s can't reach over the newline: matching is per line. */
  expect_miss (&s, "empty\ndataframe\n");
  expect_miss (&s, "empty \n dataframe");
  /* But a later line still matches after a cross-line candidate. */
  expect_hit (&s, "empty\ndataframe\nEmpty  dataframe\n", "empty\\s+dataframe", "Empty  dataframe");
  /* ^ and $ anchor lines. */
  expect_hit (&s, "not done\nDONE\nmore\n", "^done$", "DONE");
  expect_miss (&s, "not done\ndone or not\n");
  /* Lines end at LF; the CR of a CRLF is part of the line for matching
     (so $ does not match before it) but not of the line reported. */
  expect_miss (&s, "DONE\r\n");
  expect_hit (&s, "x\r\nan Empty DataFrame\r\n", "empty\\s+dataframe", "an Empty DataFrame");
  csr_scan_release (&s);
}

Test (match, output_with_nul_and_binary)
{
  struct csr_scan s = { 0 };
  parse_ok (&s, "fatal\\s+error\n");
  const char text[] = "\x00\xff\xfe binary\n\x00 x Fatal error\x00 here\nend";
  const char *pattern = NULL;
  char *line = NULL;
  cr_assert (csr_scan_match (&s, text, sizeof text - 1, &pattern, &line));
  cr_assert_str_eq (pattern, "fatal\\s+error");
  cr_assert_eq (line[0], '\0'); /* the line starts with its NUL byte */
  free (line);
  cr_assert_not (csr_scan_match (&s, "", 0, &pattern, &line));
  cr_assert_null (pattern);
  cr_assert_null (line);
  cr_assert_not (csr_scan_match (&s, NULL, 0, NULL, NULL));
  csr_scan_release (&s);
}

Test (match, long_line_is_cut)
{
  struct csr_scan s = { 0 };
  parse_ok (&s, "needle\n");
  size_t n = 5000;
  char *text = malloc (n + 1);
  cr_assert_not_null (text);
  memset (text, 'x', n);
  memcpy (text + 4000, "needle", 6);
  text[n] = '\0';
  char *line = NULL;
  cr_assert_not_null (match (&s, text, &line));
  cr_assert_eq (strlen (line), 500);
  cr_assert (strspn (line, "x") == 500);
  free (line);
  free (text);
  csr_scan_release (&s);
}

Test (match, optional_outputs)
{
  struct csr_scan s = { 0 };
  parse_ok (&s, "boom\n");
  cr_assert (csr_scan_match (&s, "a\nboom\n", 7, NULL, NULL));
  const char *pattern = NULL;
  cr_assert (csr_scan_match (&s, "boom", 4, &pattern, NULL));
  cr_assert_str_eq (pattern, "boom");
  /* No patterns: nothing matches. */
  struct csr_scan empty = { 0 };
  cr_assert_not (csr_scan_match (&empty, "boom", 4, &pattern, NULL));
  csr_scan_release (&s);
}

Test (match, big_output_is_fast_enough)
{
  /* 4 MiB of ordinary lines with the default patterns, match at the end. */
  struct csr_scan s;
  load_defaults (&s);
  size_t n = 4 * 1024 * 1024;
  char *text = malloc (n + 64);
  cr_assert_not_null (text);
  for (size_t i = 0; i < n; i++)
    text[i] = i % 80 == 79 ? '\n' : "all is well, error rate 0.1 "[i % 28];
  strcpy (text + n, "\nPipeline failed\n");
  char *line = NULL;
  cr_assert_str_eq (match (&s, text, &line), "\\bpipeline\\s+failed");
  cr_assert_str_eq (line, "Pipeline failed");
  free (line);
  free (text);
  csr_scan_release (&s);
}

/* ------------------------------------------------------------- parsing */

Test (parse, comments_blanks_and_spaces)
{
  struct csr_scan s = { 0 };
  parse_ok (&s, "# a comment\n\n   \n  pipeline\\s+failed  \r\n\t# indented comment\nx[ ]y\n");
  cr_assert_eq (s.n, 2);
  cr_assert_str_eq (s.sources[0], "pipeline\\s+failed");
  cr_assert_str_eq (s.sources[1], "x[ ]y");
  /* A last line without newline counts. */
  parse_ok (&s, "last");
  cr_assert_eq (s.n, 3);
  cr_assert_str_eq (s.sources[2], "last");
  csr_scan_release (&s);
  csr_scan_release (&s);
  parse_ok (&s, "");
  cr_assert_eq (s.n, 0);
  csr_scan_release (&s);
}

Test (parse, errors_name_the_line)
{
  parse_fails ("ok1\nok2\n# c\na(\n", "line 4: invalid pattern 'a(': Unmatched ( or \\(");
  parse_fails ("x{2,1}", "line 1: invalid pattern 'x{2,1}': Invalid content of \\{\\}");
  parse_fails ("ok\n[abc\n", "line 2: invalid pattern '[abc': Unmatched [, [^, [:, [., or [=");
  parse_fails ("ok\n.*\n",
               "line 2: invalid pattern '.*': it matches an empty line, so it would flag almost "
               "any output");
  parse_fails ("^", "line 1: invalid pattern '^': it matches an empty line, so it would flag "
                    "almost any output");
}

Test (parse, nul_byte_in_file)
{
  struct csr_scan s = { 0 };
  csr_error *err = NULL;
  const char text[] = "ok\nbad\0x\n";
  cr_assert_lt (csr_scan_parse (text, sizeof text - 1, &s, &err), 0);
  cr_assert_str_eq (csr_error_text (err), "line 2: invalid pattern: it contains a NUL byte");
  csr_error_free (err);
  cr_assert_eq (s.n, 0);
  csr_scan_release (&s);
}

Test (parse, failure_leaves_the_set_unchanged)
{
  struct csr_scan s = { 0 };
  parse_ok (&s, "one\ntwo\n");
  csr_error *err = NULL;
  const char *bad = "three\nfour(\n";
  cr_assert_lt (csr_scan_parse (bad, strlen (bad), &s, &err), 0);
  csr_error_free (err);
  cr_assert_eq (s.n, 2);
  expect_hit (&s, "two", "two", "two");
  expect_miss (&s, "three");
  csr_scan_release (&s);
}

Test (parse, load_errors_name_the_file)
{
  char dir[] = "/tmp/csrun-test-scan-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char *path = NULL;
  cr_assert_geq (asprintf (&path, "%s/silent-failure.conf", dir), 0);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  fputs ("# patterns\nfoo\n\na(\n", f);
  fclose (f);

  struct csr_scan s = { 0 };
  csr_error *err = NULL;
  cr_assert_lt (csr_scan_load (path, &s, &err), 0);
  char *want = NULL;
  cr_assert_geq (asprintf (&want, "%s line 4: invalid pattern 'a(': Unmatched ( or \\(", path), 0);
  cr_assert_str_eq (csr_error_text (err), want);
  cr_assert_eq (s.n, 0);
  csr_error_free (err);
  err = NULL;
  free (want);

  unlink (path);
  cr_assert_lt (csr_scan_load (path, &s, &err), 0);
  cr_assert_eq (err->status, ENOENT);
  csr_error_free (err);
  csr_scan_release (&s);
  rmdir (dir);
  free (path);
}

Test (add, validates_and_appends)
{
  struct csr_scan s;
  load_defaults (&s);
  size_t n = s.n;
  csr_error *err = NULL;
  cr_assert_eq (csr_scan_add (&s, "model\\s+diverged", &err), 0);
  cr_assert_eq (s.n, n + 1);
  cr_assert_str_eq (s.sources[n], "model\\s+diverged");
  expect_hit (&s, "epoch 3: Model  diverged", "model\\s+diverged", "epoch 3: Model  diverged");

  cr_assert_lt (csr_scan_add (&s, "a(", &err), 0);
  cr_assert_str_eq (csr_error_text (err), "invalid pattern 'a(': Unmatched ( or \\(");
  csr_error_free (err);
  err = NULL;
  cr_assert_lt (csr_scan_add (&s, "", &err), 0);
  cr_assert_str_eq (csr_error_text (err), "invalid pattern '': empty pattern");
  csr_error_free (err);
  err = NULL;
  cr_assert_lt (csr_scan_add (&s, "x*", &err), 0);
  csr_error_free (err);
  cr_assert_eq (s.n, n + 1);
  csr_scan_release (&s);

  /* Into an empty set. */
  cr_assert_eq (csr_scan_add (&s, "only", NULL), 0);
  cr_assert_eq (s.n, 1);
  expect_hit (&s, "ONLY", "only", "ONLY");
  csr_scan_release (&s);
}

Test (syntax, gnu_escapes_and_digits)
{
  struct csr_scan s = { 0 };
  parse_ok (&s, "exit code \\d+\n");
  /* \d is a digit (glibc alone would read a literal 'd'). */
  expect_hit (&s, "exit code 42", "exit code \\d+", "exit code 42");
  expect_miss (&s, "exit code d");
  csr_scan_release (&s);

  parse_ok (&s, "^\\D+$\n");
  expect_hit (&s, "123\nabc\n", "^\\D+$", "abc");
  csr_scan_release (&s);

  /* Inside brackets nothing is translated: [\d] is a backslash or a d. */
  parse_ok (&s, "x[\\d]y\n");
  expect_hit (&s, "xdy", "x[\\d]y", "xdy");
  expect_hit (&s, "x\\y", "x[\\d]y", "x\\y");
  expect_miss (&s, "x5y");
  csr_scan_release (&s);

  /* Brackets with ']' first and with classes, then \d after them. */
  parse_ok (&s, "[]x][[:alpha:]]\\d\n[^]a]\\d\n");
  expect_hit (&s, "]q7", "[]x][[:alpha:]]\\d", "]q7");
  expect_hit (&s, "b7", "[^]a]\\d", "b7");
  expect_miss (&s, "]qd");
  csr_scan_release (&s);

  /* \s \S \w \W \b \< \> are glibc's own; \\d stays a backslash + d. */
  parse_ok (&s, "\\<no\\>\\s\\w+\\W\\S\n\\\\d\n");
  expect_hit (&s, "say no more!x", "\\<no\\>\\s\\w+\\W\\S", "say no more!x");
  expect_miss (&s, "sayno more!x");
  expect_hit (&s, "a\\d", "\\\\d", "a\\d");
  expect_miss (&s, "a\\5");
  csr_scan_release (&s);
}

Test (syntax, case_insensitive)
{
  struct csr_scan s = { 0 };
  parse_ok (&s, "FATAL\n");
  expect_hit (&s, "fatal", "FATAL", "fatal");
  expect_hit (&s, "FaTaL", "FATAL", "FaTaL");
  csr_scan_release (&s);
}
