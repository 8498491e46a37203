/* Unit tests for the pure parts of `csrun hook` (src/lib/oci/hookutil.c).
 *
 * python:  csr_hook_is_python: interpreter names and look-alikes.
 * program: csr_hook_find_program: which program process.args runs (script
 *          file, -c code, -m module, stdin, nothing), through interpreter
 *          options (grouped, with attached or separate arguments) and env(1).
 * k8s:     csr_hook_k8s_strip: conmon's k8s-file framing removed, partial
 *          records joined, other lines kept. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "oci/hookutil.h"

/* ------------------------------------------------------------- python */

Test (python, interpreter_names)
{
  cr_assert (csr_hook_is_python ("python"));
  cr_assert (csr_hook_is_python ("python3"));
  cr_assert (csr_hook_is_python ("python3.12"));
  cr_assert (csr_hook_is_python ("python3.9"));
  cr_assert (csr_hook_is_python ("/usr/bin/python3"));
  cr_assert (csr_hook_is_python ("/usr/local/bin/python3.11"));
  cr_assert (csr_hook_is_python ("./python"));
}

Test (python, not_interpreters)
{
  cr_assert_not (csr_hook_is_python (NULL));
  cr_assert_not (csr_hook_is_python (""));
  cr_assert_not (csr_hook_is_python ("/"));
  cr_assert_not (csr_hook_is_python ("python3."));
  cr_assert_not (csr_hook_is_python ("python3.x"));
  cr_assert_not (csr_hook_is_python ("python3.12a"));
  cr_assert_not (csr_hook_is_python ("python2"));
  cr_assert_not (csr_hook_is_python ("python3-config"));
  cr_assert_not (csr_hook_is_python ("ipython"));
  cr_assert_not (csr_hook_is_python ("/usr/bin/python3/sh"));
  cr_assert_not (csr_hook_is_python ("/python3/bin/sh"));
  cr_assert_not (csr_hook_is_python ("sh"));
  cr_assert_not (csr_hook_is_python ("Python3"));
}

/* ------------------------------------------------------------- program */

#define ARGS(...) ((char *const[]){ __VA_ARGS__ })
#define NARGS(...) (sizeof ((char *const[]){ __VA_ARGS__ }) / sizeof (char *))

static struct csr_hook_prog
find_n (char *const *args, size_t n)
{
  struct csr_hook_prog p;
  memset (&p, 0xAA, sizeof p);
  csr_hook_find_program (args, n, &p);
  return p;
}
#define FIND(...) find_n (ARGS (__VA_ARGS__), NARGS (__VA_ARGS__))

static void
expect (struct csr_hook_prog p, enum csr_hook_prog_kind kind, const char *value)
{
  cr_assert_eq (p.kind, kind, "kind %d, want %d", (int)p.kind, (int)kind);
  if (value == NULL)
    cr_assert_null (p.value, "value '%s', want NULL", p.value);
  else
    {
      cr_assert_not_null (p.value, "value NULL, want '%s'", value);
      cr_assert_str_eq (p.value, value);
    }
}

Test (program, plain_script)
{
  struct csr_hook_prog p = FIND ("python3", "/job.py");
  expect (p, CSR_HOOK_PROG_FILE, "/job.py");
  cr_assert_eq (p.index, 1);
  cr_assert_not (p.executable);
}

Test (program, script_arguments_are_not_the_script)
{
  struct csr_hook_prog p = FIND ("python3", "/job.py", "other.py", "-c", "x");
  expect (p, CSR_HOOK_PROG_FILE, "/job.py");
  cr_assert_eq (p.index, 1);
}

Test (program, interpreter_paths_and_versions)
{
  expect (FIND ("/usr/bin/python3", "a.py"), CSR_HOOK_PROG_FILE, "a.py");
  expect (FIND ("python", "a.py"), CSR_HOOK_PROG_FILE, "a.py");
  expect (FIND ("/usr/local/bin/python3.12", "/w/a.py"), CSR_HOOK_PROG_FILE, "/w/a.py");
}

Test (program, relative_script)
{
  expect (FIND ("python3", "jobs/run.py"), CSR_HOOK_PROG_FILE, "jobs/run.py");
  expect (FIND ("python3", "./run.py"), CSR_HOOK_PROG_FILE, "./run.py");
}

Test (program, script_without_py_suffix_still_runs)
{
  /* Python runs any file it is given: gate it whatever its name. */
  expect (FIND ("python3", "/job"), CSR_HOOK_PROG_FILE, "/job");
  expect (FIND ("python3", "-u", "/app/main.pyw"), CSR_HOOK_PROG_FILE, "/app/main.pyw");
}

Test (program, single_flags)
{
  static const char *const flags[] = { "-u", "-B", "-O", "-OO", "-I", "-E", "-s", "-S", "-b", "-bb",
                                       "-d", "-i", "-q", "-v",  "-x", "-P", "-R", "-h", "-V" };
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
    {
      struct csr_hook_prog p = FIND ("python3", (char *)flags[k], "/job.py");
      cr_assert_eq (p.kind, CSR_HOOK_PROG_FILE, "after %s", flags[k]);
      cr_assert_str_eq (p.value, "/job.py", "after %s", flags[k]);
      cr_assert_eq (p.index, 2);
    }
}

Test (program, many_flags)
{
  struct csr_hook_prog p = FIND ("python3", "-u", "-B", "-I", "-E", "-s", "-S", "/job.py");
  expect (p, CSR_HOOK_PROG_FILE, "/job.py");
  cr_assert_eq (p.index, 7);
}

Test (program, grouped_flags)
{
  expect (FIND ("python3", "-uBI", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  expect (FIND ("python3", "-OOu", "x.py"), CSR_HOOK_PROG_FILE, "x.py");
}

Test (program, options_with_separate_argument)
{
  expect (FIND ("python3", "-W", "ignore", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  expect (FIND ("python3", "-X", "dev", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  expect (FIND ("python3", "-X", "importtime", "-W", "error::DeprecationWarning", "-u", "/j.py"),
          CSR_HOOK_PROG_FILE, "/j.py");
  /* The argument of -W is not the script even when it looks like one. */
  expect (FIND ("python3", "-W", "decoy.py", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  expect (FIND ("python3", "-X", "x.py", "real.py"), CSR_HOOK_PROG_FILE, "real.py");
}

Test (program, options_with_attached_argument)
{
  expect (FIND ("python3", "-Wignore", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  expect (FIND ("python3", "-Xdev", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  expect (FIND ("python3", "-Xutf8=1", "-Werror", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  /* A group ending in W or X takes the next argument. */
  expect (FIND ("python3", "-uW", "ignore", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  expect (FIND ("python3", "-BX", "dev", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  /* -W in the middle of a group takes the rest of the group. */
  expect (FIND ("python3", "-uWignore", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
}

Test (program, long_options)
{
  expect (FIND ("python3", "--check-hash-based-pycs", "never", "/job.py"), CSR_HOOK_PROG_FILE,
          "/job.py");
  expect (FIND ("python3", "--unknown-long", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  expect (FIND ("python3", "--check-hash-based-pycs"), CSR_HOOK_PROG_NONE, NULL);
}

Test (program, double_dash_ends_options)
{
  expect (FIND ("python3", "-u", "--", "/job.py"), CSR_HOOK_PROG_FILE, "/job.py");
  /* After "--", "-c" is a file name. */
  expect (FIND ("python3", "--", "-c"), CSR_HOOK_PROG_FILE, "-c");
  expect (FIND ("python3", "--"), CSR_HOOK_PROG_STDIN, NULL);
  expect (FIND ("python3", "--", "-"), CSR_HOOK_PROG_STDIN, NULL);
}

Test (program, inline_code)
{
  struct csr_hook_prog p = FIND ("python3", "-c", "import os; os.system('id')");
  expect (p, CSR_HOOK_PROG_INLINE, "import os; os.system('id')");
  cr_assert_eq (p.index, 2);
  expect (FIND ("python3", "-u", "-c", "print(1)", "arg.py"), CSR_HOOK_PROG_INLINE, "print(1)");
  /* -c ends the options: what follows is sys.argv[1:]. */
  expect (FIND ("python3", "-c", "print(1)", "-m", "x"), CSR_HOOK_PROG_INLINE, "print(1)");
}

Test (program, inline_code_attached_or_grouped)
{
  expect (FIND ("python3", "-cprint(1)"), CSR_HOOK_PROG_INLINE, "print(1)");
  expect (FIND ("python3", "-uc", "print(2)"), CSR_HOOK_PROG_INLINE, "print(2)");
  expect (FIND ("python3", "-uBcprint(3)"), CSR_HOOK_PROG_INLINE, "print(3)");
  /* Not a decoy script in front of -c. */
  expect (FIND ("python3", "-W", "x.py", "-c", "print(4)"), CSR_HOOK_PROG_INLINE, "print(4)");
}

Test (program, inline_code_missing)
{
  /* Python refuses to start: nothing runs. */
  expect (FIND ("python3", "-c"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("python3", "-uc"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("python3", "-m"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("python3", "-W"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("python3", "-u", "-X"), CSR_HOOK_PROG_NONE, NULL);
}

Test (program, inline_code_empty_string)
{
  expect (FIND ("python3", "-c", ""), CSR_HOOK_PROG_INLINE, "");
}

Test (program, module)
{
  expect (FIND ("python3", "-m", "http.server"), CSR_HOOK_PROG_MODULE, "http.server");
  expect (FIND ("python3", "-mpip", "install", "x.py"), CSR_HOOK_PROG_MODULE, "pip");
  expect (FIND ("python3", "-um", "job"), CSR_HOOK_PROG_MODULE, "job");
  expect (FIND ("python3", "-u", "-m", "job", "/job.py"), CSR_HOOK_PROG_MODULE, "job");
}

Test (program, stdin)
{
  expect (FIND ("python3"), CSR_HOOK_PROG_STDIN, NULL);
  expect (FIND ("python3", "-u"), CSR_HOOK_PROG_STDIN, NULL);
  expect (FIND ("python3", "-"), CSR_HOOK_PROG_STDIN, NULL);
  expect (FIND ("python3", "-u", "-", "x.py"), CSR_HOOK_PROG_STDIN, NULL);
  expect (FIND ("python3", "-W", "ignore"), CSR_HOOK_PROG_STDIN, NULL);
}

Test (program, not_python)
{
  expect (FIND ("sh", "-c", "python3 /job.py"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("/bin/bash", "/job.py"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("node", "app.js"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("ipython", "job.py"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("python2", "job.py"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND (".py"), CSR_HOOK_PROG_NONE, NULL);
}

Test (program, executable_script)
{
  struct csr_hook_prog p = FIND ("/app/job.py", "--flag");
  expect (p, CSR_HOOK_PROG_FILE, "/app/job.py");
  cr_assert (p.executable);
  cr_assert_eq (p.index, 0);
  p = FIND ("job.py");
  expect (p, CSR_HOOK_PROG_FILE, "job.py");
  cr_assert (p.executable);
}

Test (program, env_wrapper)
{
  struct csr_hook_prog p = FIND ("/usr/bin/env", "python3", "/job.py");
  expect (p, CSR_HOOK_PROG_FILE, "/job.py");
  cr_assert_eq (p.index, 2);
  expect (FIND ("env", "-i", "A=1", "B=2", "python3", "-u", "j.py"), CSR_HOOK_PROG_FILE, "j.py");
  expect (FIND ("env", "-u", "HOME", "python3", "j.py"), CSR_HOOK_PROG_FILE, "j.py");
  expect (FIND ("env", "-uHOME", "--unset=X", "python3", "-c", "1"), CSR_HOOK_PROG_INLINE, "1");
  expect (FIND ("env", "--", "python3", "j.py"), CSR_HOOK_PROG_FILE, "j.py");
  p = FIND ("env", "A=1", "/srv/job.py");
  expect (p, CSR_HOOK_PROG_FILE, "/srv/job.py");
  cr_assert (p.executable);
}

Test (program, env_not_followed)
{
  /* -C changes the directory a relative script is in; -S splits a string. */
  expect (FIND ("env", "-C", "/tmp", "python3", "j.py"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("env", "-S", "python3 j.py"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("env"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("env", "A=1"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("env", "-u"), CSR_HOOK_PROG_NONE, NULL);
  expect (FIND ("env", "sh", "-c", "x"), CSR_HOOK_PROG_NONE, NULL);
}

Test (program, empty_and_null)
{
  struct csr_hook_prog p;
  memset (&p, 0xAA, sizeof p);
  csr_hook_find_program (NULL, 0, &p);
  expect (p, CSR_HOOK_PROG_NONE, NULL);
  char *none[] = { NULL };
  memset (&p, 0xAA, sizeof p);
  csr_hook_find_program (none, 0, &p);
  expect (p, CSR_HOOK_PROG_NONE, NULL);
  csr_hook_find_program (none, 1, &p);
  expect (p, CSR_HOOK_PROG_NONE, NULL);
}

Test (program, null_terminated_list_shorter_than_n)
{
  /* A NULL ends the list even when N says more. */
  char *args[] = { "python3", "-u", NULL, "/job.py" };
  expect (find_n (args, 4), CSR_HOOK_PROG_STDIN, NULL);
  char *args2[] = { "python3", "-c", NULL };
  expect (find_n (args2, 3), CSR_HOOK_PROG_NONE, NULL);
}

/* ------------------------------------------------------------- k8s */

/* Strip a copy of IN and compare with WANT. */
static void
strip_eq (const char *in, const char *want)
{
  size_t len = strlen (in);
  char *buf = malloc (len + 1);
  cr_assert_not_null (buf);
  memcpy (buf, in, len + 1);
  size_t n = csr_hook_k8s_strip (buf, len);
  cr_assert_leq (n, len);
  cr_assert_eq (buf[n], '\0', "not NUL-terminated");
  cr_assert_eq (n, strlen (want), "length %zu, want %zu: got '%s'", n, strlen (want), buf);
  cr_assert_str_eq (buf, want);
  free (buf);
}

Test (k8s, full_lines)
{
  strip_eq ("2024-05-01T10:00:00.123456789+00:00 stdout F hello\n"
            "2024-05-01T10:00:00.223456789+00:00 stderr F world\n",
            "hello\nworld\n");
}

Test (k8s, partial_lines_join)
{
  strip_eq ("2024-05-01T10:00:00.1+00:00 stdout P Empty Data\n"
            "2024-05-01T10:00:00.2+00:00 stdout P Fra\n"
            "2024-05-01T10:00:00.3+00:00 stdout F me\n"
            "2024-05-01T10:00:00.4+00:00 stdout F next\n",
            "Empty DataFrame\nnext\n");
}

Test (k8s, partial_at_end)
{
  strip_eq ("2024-05-01T10:00:00Z stdout P no newline yet\n", "no newline yet");
}

Test (k8s, empty_text)
{
  strip_eq ("2024-05-01T10:00:00Z stdout F \n"
            "2024-05-01T10:00:00Z stdout F\n"
            "2024-05-01T10:00:00Z stdout F x\n",
            "\n\nx\n");
}

Test (k8s, text_keeps_its_spaces_and_framing_lookalikes)
{
  strip_eq ("2024-05-01T10:00:00Z stdout F   indented  text \n"
            "2024-05-01T10:00:00Z stderr F 2024-01-01T00:00:00Z stdout F inner\n",
            "  indented  text \n2024-01-01T00:00:00Z stdout F inner\n");
}

Test (k8s, last_record_without_newline)
{
  strip_eq ("2024-05-01T10:00:00Z stdout F done", "done\n");
}

Test (k8s, other_lines_kept)
{
  strip_eq ("plain output\n"
            "2024-05-01 stdout\n"
            "2024-05-01T10:00:00Z stdlog F x\n"
            "2024-05-01T10:00:00Z stdout f lower\n"
            "2024-05-01T10:00:00Z stdout F real\n"
            "12:00:00 stdout F x\n"
            "tail",
            "plain output\n"
            "2024-05-01 stdout\n"
            "2024-05-01T10:00:00Z stdlog F x\n"
            "2024-05-01T10:00:00Z stdout f lower\n"
            "real\n"
            "12:00:00 stdout F x\n"
            "tail");
}

Test (k8s, tags_with_colons)
{
  strip_eq ("2024-05-01T10:00:00Z stdout F:X a\n", "a\n");
}

Test (k8s, empty_and_blank)
{
  strip_eq ("", "");
  strip_eq ("\n\n", "\n\n");
}

Test (k8s, not_nul_terminated_input)
{
  /* No NUL after LEN: nothing read past it, and a shorter result gets one. */
  char buf[64];
  memset (buf, 'Z', sizeof buf);
  const char *rec = "2024-05-01T10:00:00Z stdout F ab";
  size_t len = strlen (rec);
  memcpy (buf, rec, len);
  size_t n = csr_hook_k8s_strip (buf, len);
  cr_assert_eq (n, 3);
  cr_assert_eq (memcmp (buf, "ab\n", 3), 0);
  cr_assert_eq (buf[3], '\0');
  cr_assert_eq (buf[len], 'Z');
}

Test (k8s, unchanged_text_is_unchanged)
{
  const char *in = "no framing at all\nsecond line\n";
  char buf[64];
  strcpy (buf, in);
  cr_assert_eq (csr_hook_k8s_strip (buf, strlen (in)), strlen (in));
  cr_assert_str_eq (buf, in);
}
