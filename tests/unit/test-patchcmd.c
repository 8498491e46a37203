/* Unit tests for --patch-cmd: real child programs (shell scripts written to
 * a temporary directory per test). */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/heal.h"
#include "util/fs.h"

#include "helpers.h"

static char dir[2048]; /* per-test scratch directory */

static void
setup (void)
{
  test_tmpdir_in (dir, sizeof dir, "test-patchcmd");
}

static void
teardown (void)
{
  test_tmpdir_remove (dir);
}

TestSuite (patchcmd, .init = setup, .fini = teardown, .timeout = 60);

/* Write an executable script NAME with BODY; returns its path (static). */
static const char *
script (const char *name, const char *body)
{
  static char path[4096];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  char *text = NULL;
  cr_assert_geq (asprintf (&text, "#!/bin/sh\n%s", body), 0);
  csr_error *err = NULL;
  cr_assert_eq (csr_write_file_atomic (path, text, strlen (text), 0755, &err), 0);
  free (text);
  return path;
}

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* No child of ours is left, running or zombie. */
static void
assert_no_children (void)
{
  int status;
  errno = 0;
  cr_assert_eq (waitpid (-1, &status, WNOHANG), -1, "a child is left");
  cr_assert_eq (errno, ECHILD);
}

/* PID is gone (or a zombie that is not ours to reap). */
static bool
gone (pid_t pid)
{
  char path[64], buf[512];
  snprintf (path, sizeof path, "/proc/%d/stat", (int)pid);
  for (int i = 0; i < 100; i++)
    {
      FILE *f = fopen (path, "r");
      if (f == NULL)
        return true;
      size_t n = fread (buf, 1, sizeof buf - 1, f);
      fclose (f);
      buf[n] = '\0';
      const char *rp = strrchr (buf, ')');
      if (rp && (rp[2] == 'Z' || rp[2] == 'X'))
        return true;
      usleep (10000);
    }
  return false;
}

static bool
have_python (void)
{
  return system ("command -v python3 >/dev/null 2>&1") == 0;
}

static struct csr_diagnosis diag
    = { "NameError", "name 'math' is not defined", 1, "1: print(math.pi)", NULL };

static int
run (const char *program, double timeout, const char *code, char **out, const char **why)
{
  csr_error *err = NULL;
  int rc = csr_patchcmd_run (program, timeout, code, &diag, 1, out, why, &err);
  cr_assert_geq (rc, 0, "csrun error: %s", err ? csr_error_text (err) : "?");
  assert_no_children ();
  return rc;
}

/* ---------------------------------------------------------------- tests */

Test (patchcmd, fixer_with_fence)
{
  const char *p = script ("fix.sh", "cat >/dev/null\n"
                                    "echo 'Here is the fixed program:'\n"
                                    "echo\n"
                                    "echo '```python'\n"
                                    "echo 'import math'\n"
                                    "echo 'print(math.pi)'\n"
                                    "echo '```'\n"
                                    "echo 'It imports math.'\n");
  char *out = NULL;
  const char *why = NULL;
  cr_assert_eq (run (p, 5, "print(math.pi)\n", &out, &why), 1, "why: %s", why);
  cr_assert_str_eq (out, "import math\nprint(math.pi)\n");
  free (out);
}

Test (patchcmd, raw_reply_and_arguments)
{
  /* PROGRAM goes through sh -c: arguments and pipes work. */
  script ("raw.sh", "cat >/dev/null\nprintf 'import math\\r\\nprint(math.%s)\\r\\n' \"$1\"\n");
  char *prog = NULL;
  cr_assert_geq (asprintf (&prog, "'%s/raw.sh' tau | cat", dir), 0);
  char *out = NULL;
  const char *why = NULL;
  cr_assert_eq (run (prog, 5, "print(math.tau)\n", &out, &why), 1, "why: %s", why);
  cr_assert_str_eq (out, "import math\nprint(math.tau)\n");
  free (out);
  free (prog);
}

Test (patchcmd, echo_is_identical)
{
  if (!have_python ())
    cr_skip_test ("python3 is not installed");
  const char *p = script ("echo.sh", "exec python3 -c 'import json, sys; "
                                     "sys.stdout.write(json.load(sys.stdin)[\"code\"])'\n");
  char *out = NULL;
  const char *why = NULL;
  cr_assert_eq (run (p, 10, "x = 1\nprint(x)\n", &out, &why), 0);
  cr_assert_null (out);
  cr_assert_str_eq (why, "identical to the input");
  /* In a fence, without the final newline: still the same code. */
  p = script ("fence.sh", "cat >/dev/null; printf '```py\\nx = 1\\nprint(x)\\n```'\n");
  cr_assert_eq (run (p, 10, "x = 1\nprint(x)", &out, &why), 0);
  cr_assert_str_eq (why, "identical to the input");
}

Test (patchcmd, exit_status)
{
  const char *p = script ("fail.sh", "cat >/dev/null\necho '```python'\necho 'x = 1'\nexit 3\n");
  char *out = NULL;
  const char *why = NULL;
  cr_assert_eq (run (p, 5, "x = 0\n", &out, &why), 0);
  cr_assert_null (out);
  cr_assert_str_eq (why, "exit status 3");
  p = script ("fail2.sh", "echo 'warming up' >&2\necho 'no API key' >&2\nexit 2\n");
  cr_assert_eq (run (p, 5, "x = 0\n", &out, &why), 0);
  cr_assert_str_eq (why, "exit status 2: no API key");
  cr_assert_eq (run ("exec /nonexistent/patcher", 5, "x = 0\n", &out, &why), 0);
  cr_assert (strncmp (why, "exit status 127: ", 17) == 0, "why: %s", why);
}

Test (patchcmd, killed_by_signal)
{
  char *out = NULL;
  const char *why = NULL;
  cr_assert_eq (run ("kill -9 $$", 5, "x = 0\n", &out, &why), 0);
  cr_assert_str_eq (why, "killed by signal 9");
}

Test (patchcmd, empty_reply)
{
  const char *p = script ("empty.sh", "cat >/dev/null\n");
  char *out = NULL;
  const char *why = NULL;
  cr_assert_eq (run (p, 5, "x = 0\n", &out, &why), 0);
  cr_assert_str_eq (why, "empty reply");
  p = script ("blank.sh", "printf '\\n\\n```python\\n\\n```\\n'\n");
  cr_assert_eq (run (p, 5, "x = 0\n", &out, &why), 0);
  cr_assert_str_eq (why, "empty reply");
}

Test (patchcmd, timeout_kills_the_group)
{
  char *body = NULL;
  cr_assert_geq (asprintf (&body,
                           "echo $$ > '%s/pids'\n"
                           "sleep 30 &\n"
                           "echo $! >> '%s/pids'\n"
                           "sleep 30\n",
                           dir, dir),
                 0);
  const char *p = script ("hang.sh", body);
  free (body);
  char *out = NULL;
  const char *why = NULL;
  double t0 = now ();
  cr_assert_eq (run (p, 0.5, "x = 0\n", &out, &why), 0);
  double took = now () - t0;
  cr_assert_str_eq (why, "timed out after 0.5s");
  cr_assert_lt (took, 2.0, "took %.2fs", took);
  cr_assert_geq (took, 0.4, "took %.2fs", took);
  char path[4096];
  snprintf (path, sizeof path, "%s/pids", dir);
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f);
  int pid, n = 0;
  while (fscanf (f, "%d", &pid) == 1)
    {
      cr_assert (gone (pid), "process %d is still running", pid);
      n++;
    }
  fclose (f);
  cr_assert_eq (n, 2);
}

Test (patchcmd, exit_kills_leftovers)
{
  /* It answers and exits, but a background child still holds stdout. */
  char *body = NULL;
  cr_assert_geq (asprintf (&body,
                           "cat >/dev/null\n"
                           "sleep 30 &\n"
                           "echo $! > '%s/pids'\n"
                           "printf '```python\\nprint(2)\\n```\\n'\n",
                           dir),
                 0);
  const char *p = script ("bg.sh", body);
  free (body);
  char *out = NULL;
  const char *why = NULL;
  double t0 = now ();
  cr_assert_eq (run (p, 10, "print(1)\n", &out, &why), 1, "why: %s", why);
  cr_assert_lt (now () - t0, 2.0);
  cr_assert_str_eq (out, "print(2)\n");
  free (out);
  char path[4096];
  snprintf (path, sizeof path, "%s/pids", dir);
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f);
  int pid;
  cr_assert_eq (fscanf (f, "%d", &pid), 1);
  fclose (f);
  cr_assert (gone (pid), "process %d is still running", pid);
}

Test (patchcmd, escaped_grandchild_does_not_hang)
{
  /* A grandchild in its own session keeps stdout open after the program
   * exits: csrun stops waiting for it soon (and can't kill it: we do). */
  if (system ("command -v setsid >/dev/null 2>&1") != 0)
    cr_skip_test ("setsid is not installed");
  char *body = NULL;
  cr_assert_geq (asprintf (&body,
                           "cat >/dev/null\n"
                           "setsid sleep 30 &\n"
                           "echo $! > '%s/pids'\n"
                           "echo 'print(4)'\n",
                           dir),
                 0);
  const char *p = script ("escape.sh", body);
  free (body);
  char *out = NULL;
  const char *why = NULL;
  double t0 = now ();
  int rc = run (p, 20, "print(1)\n", &out, &why);
  double took = now () - t0;
  char path[4096];
  snprintf (path, sizeof path, "%s/pids", dir);
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f);
  int pid;
  cr_assert_eq (fscanf (f, "%d", &pid), 1);
  fclose (f);
  kill (pid, SIGKILL);
  cr_assert_eq (rc, 1, "why: %s", why);
  cr_assert_str_eq (out, "print(4)\n");
  cr_assert_lt (took, 5.0, "took %.2fs", took);
  free (out);
}

Test (patchcmd, output_too_large)
{
  const char *p = script ("big.sh", "cat >/dev/null\nhead -c 2097152 /dev/zero | tr '\\0' a\n");
  char *out = NULL;
  const char *why = NULL;
  double t0 = now ();
  cr_assert_eq (run (p, 10, "x = 0\n", &out, &why), 0);
  cr_assert_null (out);
  cr_assert_str_eq (why, "output too large");
  cr_assert_lt (now () - t0, 5.0);
  /* Exactly 1 MiB is fine. */
  p = script ("mib.sh", "cat >/dev/null\nhead -c 1048575 /dev/zero | tr '\\0' a; echo\n");
  cr_assert_eq (run (p, 10, "x = 0\n", &out, &why), 1, "why: %s", why);
  cr_assert_eq (strlen (out), 1048576);
  free (out);
}

Test (patchcmd, program_that_does_not_read_stdin)
{
  /* A request far larger than a pipe buffer, to a program that never reads
   * it: the write fails with EPIPE, csrun does not die of SIGPIPE, and no
   * SIGPIPE is left pending. */
  size_t n = 4 * 1024 * 1024;
  char *code = malloc (n + 1);
  cr_assert_not_null (code);
  for (size_t i = 0; i < n; i++)
    code[i] = i % 64 == 63 ? '\n' : 'x';
  code[n] = '\0';
  const char *p = script ("deaf.sh", "exec 0<&-\nprintf '```python\\nprint(\"fixed\")\\n```\\n'\n");
  sigset_t before, after, pending;
  sigprocmask (SIG_SETMASK, NULL, &before);
  char *out = NULL;
  const char *why = NULL;
  cr_assert_eq (run (p, 10, code, &out, &why), 1, "why: %s", why);
  cr_assert_str_eq (out, "print(\"fixed\")\n");
  free (out);
  sigprocmask (SIG_SETMASK, NULL, &after);
  cr_assert_eq (sigismember (&after, SIGPIPE), sigismember (&before, SIGPIPE));
  sigpending (&pending);
  cr_assert_eq (sigismember (&pending, SIGPIPE), 0);
  /* Also when it reads a little, then stops. */
  p = script ("deaf2.sh", "head -c 10 >/dev/null\nexec 0<&-\nsleep 0.1\necho 'print(3)'\n");
  cr_assert_eq (run (p, 10, code, &out, &why), 1, "why: %s", why);
  cr_assert_str_eq (out, "print(3)\n");
  free (out);
  free (code);
}

Test (patchcmd, request_fields)
{
  if (!have_python ())
    cr_skip_test ("python3 is not installed");
  const char *check_py
      = "import json, sys\n"
        "r = json.load(sys.stdin)\n"
        "assert set(r) == {'code', 'diagnosis', 'attempt'}, r\n"
        "assert r['code'] == 'print(\"h\\u00e9\", \\'\\\\\\\\\\')\\n\\tprint(math.pi)\\n', "
        "repr(r['code'])\n"
        "d = r['diagnosis']\n"
        "assert set(d) == {'error_type', 'message', 'line', 'context'}, d\n"
        "assert d['error_type'] == 'NameError', d\n"
        "assert d['message'] == 'name \"math\" is not defined \\ufffd', d\n"
        "assert d['line'] == 2 and isinstance(d['line'], int), d\n"
        "assert d['context'] == '1: x\\n2: y', d\n"
        "assert r['attempt'] == 2, r\n"
        "print('import math')\n"
        "print(r['code'], end='')\n";
  char path[4096];
  snprintf (path, sizeof path, "%s/check.py", dir);
  csr_error *err = NULL;
  cr_assert_eq (csr_write_file_atomic (path, check_py, strlen (check_py), 0644, &err), 0);
  char *body = NULL;
  cr_assert_geq (asprintf (&body, "exec python3 '%s'\n", path), 0);
  const char *p = script ("fields.sh", body);
  free (body);
  const char *code = "print(\"h\xc3\xa9\", '\\\\')\n\tprint(math.pi)\n";
  struct csr_diagnosis d
      = { "NameError", "name \"math\" is not defined \xff", 2, "1: x\n2: y", NULL };
  char *out = NULL;
  const char *why = NULL;
  int rc = csr_patchcmd_run (p, 10, code, &d, 2, &out, &why, &err);
  cr_assert_eq (rc, 1, "why: %s", why ? why : (err ? csr_error_text (err) : "?"));
  char *want = NULL;
  cr_assert_geq (asprintf (&want, "import math\n%s", code), 0);
  cr_assert_str_eq (out, want);
  free (want);
  free (out);
  /* Without a diagnosis: null. */
  p = script ("null.sh",
              "exec python3 -c 'import json, sys; r = json.load(sys.stdin); "
              "sys.exit(0 if r[\"diagnosis\"] is None and r[\"attempt\"] == 1 else 1)'\n");
  rc = csr_patchcmd_run (p, 10, "x\n", NULL, 1, &out, &why, &err);
  cr_assert_eq (rc, 0);
  cr_assert_str_eq (why, "empty reply");
  assert_no_children ();
}

Test (patchcmd, clean_environment_and_fds)
{
  setenv ("CSRUN_TEST_SECRET", "sk-do-not-leak", 1);
  setenv ("LANG", "C.UTF-8", 1);
  int fd = open ("/dev/null", O_RDONLY); /* no O_CLOEXEC: must not leak anyway */
  cr_assert_geq (fd, 3);
  char *body = NULL;
  cr_assert_geq (asprintf (&body,
                           "cat >/dev/null\n"
                           "env | sort\n"
                           "[ -e /proc/$$/fd/%d ] && echo LEAKED_FD\n"
                           "echo \"pgid $(cut -d' ' -f5 /proc/$$/stat) pid $$ ppid $PPID\"\n",
                           fd),
                 0);
  const char *p = script ("env.sh", body);
  free (body);
  char *out = NULL;
  const char *why = NULL;
  cr_assert_eq (run (p, 5, "x = 0\n", &out, &why), 1, "why: %s", why);
  close (fd);
  unsetenv ("CSRUN_TEST_SECRET");
  cr_assert (strstr (out, "sk-do-not-leak") == NULL, "environment leaked:\n%s", out);
  cr_assert (strstr (out, "PATH=") != NULL, "%s", out);
  cr_assert (strstr (out, "LANG=C.UTF-8") != NULL, "%s", out);
  cr_assert (strstr (out, "LEAKED_FD") == NULL, "%s", out);
  /* The group of the "sh -c" (the script's parent, or itself after exec). */
  int pgid = 0, pid = -1, ppid = -1;
  const char *l = strstr (out, "pgid ");
  cr_assert_not_null (l);
  cr_assert_eq (sscanf (l, "pgid %d pid %d ppid %d", &pgid, &pid, &ppid), 3);
  cr_assert (pgid == pid || pgid == ppid, "not in its own process group: %s", l);
  cr_assert_neq (pgid, getpgrp ());
  free (out);
}

Test (patchcmd, bad_arguments)
{
  char *out = NULL;
  const char *why = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_patchcmd_run ("", 1, "x", NULL, 1, &out, &why, &err), -1);
  cr_assert_not_null (err);
  csr_error_free (err);
}

/* ------------------------------------------------------ csr_extract_code */

static void
check_extract (const char *reply, const char *want)
{
  char *got = csr_extract_code (reply, reply ? strlen (reply) : 0);
  cr_assert_not_null (got);
  cr_assert_str_eq (got, want, "reply:\n%s\ngot:\n%s\nwanted:\n%s", reply, got, want);
  free (got);
}

Test (extract, python_fence_first)
{
  check_extract ("Sure!\n```python\nimport math\nprint(math.pi)\n```\nDone.\n",
                 "import math\nprint(math.pi)\n");
  /* A shell block before the Python one. */
  check_extract ("Run:\n```bash\npip install x\n```\nThen:\n```py\nprint(1)\n```\n"
                 "```python\nprint(2)\n```\n",
                 "print(1)\n");
  check_extract ("```python3\nx = 1\n```", "x = 1\n");
  check_extract ("```Python title=\"fix.py\"\nx = 2\n```\n", "x = 2\n");
}

Test (extract, plain_fence)
{
  check_extract ("Here:\n```\nprint(3)\n```\n", "print(3)\n");
  check_extract ("```text\nprint(4)\n```\n```js\nx\n```\n", "print(4)\n");
  /* Unclosed: to the end. */
  check_extract ("```python\nprint(5)\n\n", "print(5)\n");
  /* A longer fence may hold a shorter one. */
  check_extract ("````python\ns = '''\n```\n'''\n````\n", "s = '''\n```\n'''\n");
  /* An inline code span is not a fence. */
  check_extract ("use ```x``` here\nprint(6)\n", "use ```x``` here\nprint(6)\n");
}

Test (extract, raw_text)
{
  check_extract ("\n\n  \nprint(7)\n", "print(7)\n");
  check_extract ("def f():\n    return 1\n\n\n   \n", "def f():\n    return 1\n");
  check_extract ("x = 1", "x = 1\n");
  check_extract ("", "");
  check_extract ("\n \n\t\n", "");
  check_extract (NULL, "");
}

Test (extract, whitespace_kept)
{
  /* Internal indentation and blank lines (with their spaces) stay. */
  check_extract ("```python\nif x:\n\ty = 1\n    \n\tz = 2\n```\n",
                 "if x:\n\ty = 1\n    \n\tz = 2\n");
  /* CRLF -> LF. */
  check_extract ("```python\r\nif x:\r\n    y = 1\r\n```\r\n", "if x:\n    y = 1\n");
  /* An indented fence (in a list item): its indentation goes. */
  check_extract ("1. Fix:\n  ```python\n  if x:\n      y = 1\n  ```\n", "if x:\n    y = 1\n");
}

/* ------------------------------------------------- what a patch may be */

Test (patchcmd, patch_size_cap)
{
  cr_assert_eq (csr_patch_max_size (0, 1 << 20), 64 << 10);
  cr_assert_eq (csr_patch_max_size (100, 1 << 20), 64 << 10);
  cr_assert_eq (csr_patch_max_size (100000, 1 << 20), 4 * 100000 + (16 << 10));
  cr_assert_eq (csr_patch_max_size (1 << 20, 1 << 20), 1 << 20); /* --max-code-size bounds it */
  cr_assert_eq (csr_patch_max_size (10, 1000), 1000);
  cr_assert_eq (csr_patch_max_size (SIZE_MAX / 2, 0), SIZE_MAX); /* no overflow */
}

Test (patchcmd, patch_problems)
{
  cr_assert_null (csr_patch_problem ("print(x)\n", "print(1)\n", 1 << 20));
  cr_assert_str_eq (csr_patch_problem ("print(x)\n", "x = 1 +\n\xff\n", 1 << 20),
                    "unusable reply: not valid UTF-8");
  cr_assert_str_eq (csr_patch_problem ("print(x)\n", "s = '\xed\xb3\xbf'\n", 1 << 20),
                    "unusable reply: not valid UTF-8"); /* a lone surrogate */
  size_t n = (64 << 10) + 1;
  char *big = malloc (n + 1);
  cr_assert_not_null (big);
  memset (big, '#', n);
  big[n] = '\0';
  cr_assert_str_eq (csr_patch_problem ("print(x)\n", big, 1 << 20),
                    "unusable reply: the patch is 65537 bytes, over the limit of 65536 bytes for "
                    "this snippet");
  big[n - 1] = '\0';
  cr_assert_null (csr_patch_problem ("print(x)\n", big, 1 << 20));
  free (big);
}

Test (patchcmd, nul_byte_is_unusable)
{
  /* The code would be cut at the NUL without a word: refuse it, as a
   * snippet with a NUL byte is refused. */
  const char *p = script ("nul.sh", "cat >/dev/null\nprintf 'x = 1\\000\\nimport os\\n'\n");
  char *out = NULL;
  const char *why = NULL;
  cr_assert_eq (run (p, 5, "x = 0\n", &out, &why), 0);
  cr_assert_null (out);
  cr_assert_str_eq (why, "unusable reply: contains a NUL byte");
}
