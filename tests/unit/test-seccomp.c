#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail/seccomp.h"
#include "jail/seccomp-notify.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/trust.h"

#include "helpers.h"

/* The cache entry's header: "csrun-seccomp-cache 4\\n", "key <64 hex>\\n", "bpf <64 hex>\\n". */
#define CACHE_HEADER (22 + 69 + 69)

/* ------------------------------------------------------------- helpers */

static char *
default_profile_path (void)
{
  char *path = NULL;
  const char *srcdir = getenv ("CSRUN_SRCDIR");
  if (srcdir && *srcdir)
    cr_assert_geq (asprintf (&path, "%s/policies/seccomp/default.json", srcdir), 0);
  else
    {
      /* tests/unit/test-seccomp.c -> policies/seccomp/default.json */
      const char *end = strstr (__FILE__, "tests/unit/");
      int dir = end ? (int)(end - __FILE__) : 0;
      cr_assert_geq (asprintf (&path, "%.*spolicies/seccomp/default.json", dir, __FILE__), 0);
    }
  return path;
}

static struct csr_seccomp *
default_filter (void)
{
  char *path = default_profile_path ();
  struct csr_seccomp *s = NULL;
  csr_error *err = NULL;
  int r = csr_seccomp_load (path, NULL, &s, &err);
  cr_assert_eq (r, 0, "%s: %s", path, err ? csr_error_text (err) : "?");
  free (path);
  return s;
}

static struct csr_seccomp *
compile_ok (const char *json)
{
  struct csr_seccomp *s = NULL;
  csr_error *err = NULL;
  int r = csr_seccomp_compile (json, strlen (json), &s, &err);
  cr_assert_eq (r, 0, "%s\n-> %s", json, err ? csr_error_text (err) : "?");
  return s;
}

static void
expect_error (const char *json, const char *want)
{
  struct csr_seccomp *s = NULL;
  csr_error *err = NULL;
  int r = csr_seccomp_compile (json, strlen (json), &s, &err);
  cr_assert_lt (r, 0, "accepted: %s", json);
  cr_assert_null (s);
  cr_assert_not_null (err);
  cr_expect (strstr (csr_error_text (err), want) != NULL, "%s\n-> \"%s\", expected \"%s\"", json,
             csr_error_text (err), want);
  csr_error_free (err);
}

#define PROFILE(syscalls) "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [" syscalls "]}"

/* What a probe saw in a child running under the filter. */
struct outcome
{
  int status; /* waitpid */
  long ret;
  int err;
  bool reported;
};

typedef long (*probe_fn) (void);

/* Fork; the child loads S (as the jail does: no_new_privs, then the
 * filter), runs FN and reports its result through a pipe. */
static struct outcome
run_probe (const struct csr_seccomp *s, probe_fn fn)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      close (p[0]);
      if (s
          && (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
              || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &s->prog) < 0))
        _exit (100);
      errno = 0;
      long r = fn ();
      long msg[2] = { r, errno };
      if (write (p[1], msg, sizeof msg) != (ssize_t)sizeof msg)
        _exit (101);
      _exit (0);
    }
  close (p[1]);
  long msg[2] = { 0, 0 };
  struct outcome o = { 0 };
  o.reported = read (p[0], msg, sizeof msg) == (ssize_t)sizeof msg;
  close (p[0]);
  cr_assert_eq (waitpid (pid, &o.status, 0), pid);
  o.ret = msg[0];
  o.err = (int)msg[1];
  return o;
}

static void
check_errno (const struct csr_seccomp *s, probe_fn fn, const char *name, int want)
{
  struct outcome o = run_probe (s, fn);
  cr_assert (WIFEXITED (o.status) && WEXITSTATUS (o.status) == 0 && o.reported,
             "%s: the child died (status 0x%x)", name, o.status);
  cr_expect (o.ret == -1 && o.err == want, "%s: returned %ld, errno %d (%s); expected errno %d",
             name, o.ret, o.err, strerror (o.err), want);
}

static void
check_works (const struct csr_seccomp *s, probe_fn fn, const char *name)
{
  struct outcome o = run_probe (s, fn);
  cr_assert (WIFEXITED (o.status) && WEXITSTATUS (o.status) == 0 && o.reported,
             "%s: the child died (status 0x%x)", name, o.status);
  cr_expect (o.ret >= 0, "%s: returned %ld, errno %d (%s)", name, o.ret, o.err, strerror (o.err));
}

/* Not refused by the filter (the kernel may still refuse it otherwise). */
static void
check_not_eperm (const struct csr_seccomp *s, probe_fn fn, const char *name)
{
  struct outcome o = run_probe (s, fn);
  cr_assert (WIFEXITED (o.status) && WEXITSTATUS (o.status) == 0 && o.reported,
             "%s: the child died (status 0x%x)", name, o.status);
  cr_expect (o.ret >= 0 || o.err != EPERM, "%s: EPERM", name);
}

static void
check_sigsys (const struct csr_seccomp *s, probe_fn fn, const char *name)
{
  struct outcome o = run_probe (s, fn);
  cr_expect (WIFSIGNALED (o.status) && WTERMSIG (o.status) == SIGSYS,
             "%s: expected death by SIGSYS, status 0x%x (ret %ld, errno %d)", name, o.status, o.ret,
             o.err);
}

#define ERRNO(s, fn, e) check_errno (s, fn, #fn, e)
#define WORKS(s, fn) check_works (s, fn, #fn)
#define NOT_EPERM(s, fn) check_not_eperm (s, fn, #fn)
#define SIGSYS_(s, fn) check_sigsys (s, fn, #fn)

/* ------------------------------------------------------------- parsing */

Test (parse, malformed_json)
{
  expect_error ("{\"defaultAction\": ", "malformed JSON: ");
  expect_error ("{\"defaultAction\": SCMP_ACT_ALLOW}", "malformed JSON: lexical error");
  expect_error ("", "malformed JSON");
  struct csr_seccomp *s = NULL;
  csr_error *err = NULL;
  cr_assert_lt (csr_seccomp_compile ("{}\0{}", 5, &s, &err), 0);
  cr_expect (strstr (csr_error_text (err), "NUL byte"));
  csr_error_free (err);
}

Test (parse, top_level)
{
  expect_error ("[]", "the profile must be a JSON object");
  expect_error ("{}", "defaultAction is missing");
  expect_error ("{\"defaultAction\": 1}", "defaultAction must be a string");
  expect_error ("{\"defaultAction\": \"SCMP_ACT_NOPE\"}",
                "defaultAction: unknown action \"SCMP_ACT_NOPE\"");
  expect_error ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"defaultAcion\": 1}",
                "profile: unknown field \"defaultAcion\"");
  expect_error ("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": \"1\"}",
                "defaultErrnoRet must be a non-negative integer");
  expect_error ("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 4096}",
                "out of range");
  expect_error ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": {}}",
                "syscalls must be an array");
  expect_error ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": \"SCMP_ARCH_X86\"}",
                "architectures must be an array of strings");
  expect_error ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"SCMP_ARCH_VAX\"]}",
                "unknown architecture \"SCMP_ARCH_VAX\"");
  expect_error ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_X\"]}",
                "flags: unknown flag \"SECCOMP_FILTER_FLAG_X\"");
  expect_error ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"/run/x.sock\"}",
                "listenerPath is only for OCI configs");
  expect_error ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"archMap\": [{\"architecture\": 1}]}",
                "archMap[0].architecture must be a string");
}

Test (parse, unsupported_actions)
{
  expect_error ("{\"defaultAction\": \"SCMP_ACT_TRACE\"}", "SCMP_ACT_TRACE is not supported");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_NOTIFY\"}"),
                "syscalls[0]: SCMP_ACT_NOTIFY needs a listenerPath");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"ALLOW\"}"),
                "syscalls[0]: unknown action \"ALLOW\"");
}

static void
expect_oci_error (const char *json, const char *want)
{
  struct csr_seccomp *s = NULL;
  csr_error *err = NULL;
  cr_assert_lt (csr_seccomp_compile_oci (json, strlen (json), &s, &err), 0, "accepted: %s", json);
  cr_expect (strstr (csr_error_text (err), want) != NULL, "%s\n-> \"%s\", expected \"%s\"", json,
             csr_error_text (err), want);
  csr_error_free (err);
}

#define NOTIFY_PROFILE(extra, syscalls)                                                            \
  "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"/run/agent.sock\"" extra            \
  ", \"syscalls\": [" syscalls "]}"

/* SCMP_ACT_NOTIFY in an OCI config with a listenerPath (runtime-spec). */
Test (parse, notify_with_a_listener)
{
  const char *ok = NOTIFY_PROFILE (", \"listenerMetadata\": \"m\"",
                                   "{\"names\": [\"mkdir\", \"openat\", \"write\"], \"action\": "
                                   "\"SCMP_ACT_NOTIFY\"}");
  struct csr_seccomp *s = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_seccomp_compile_oci (ok, strlen (ok), &s, &err), 0, "%s",
                err ? csr_error_text (err) : "");
  /* The program returns SECCOMP_RET_USER_NOTIF somewhere. */
  bool found = false;
  const struct sock_filter *f = s->bpf;
  for (size_t i = 0; i < s->prog.len; i++)
    found |= BPF_CLASS (f[i].code) == BPF_RET && f[i].k == SECCOMP_RET_USER_NOTIF;
  cr_expect (found, "no SECCOMP_RET_USER_NOTIF in the program");
  csr_seccomp_free (s);
  char *path = NULL, *meta = NULL;
  cr_assert_eq (csr_seccomp_listener_config (ok, strlen (ok), &path, &meta, NULL), 0);
  cr_expect_str_eq (path, "/run/agent.sock");
  cr_expect_str_eq (meta, "m");
  free (path);
  free (meta);
  const char *none = "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"\"}";
  cr_assert_eq (csr_seccomp_listener_config (none, strlen (none), &path, &meta, NULL), 0);
  cr_expect_null (path);

  expect_oci_error (NOTIFY_PROFILE ("", "{\"names\": [\"sendmsg\"], \"action\": "
                                        "\"SCMP_ACT_NOTIFY\"}"),
                    "SCMP_ACT_NOTIFY cannot be used for sendmsg");
  expect_oci_error ("{\"defaultAction\": \"SCMP_ACT_NOTIFY\", \"listenerPath\": \"/a\"}",
                    "defaultAction SCMP_ACT_NOTIFY is not supported");
  expect_oci_error ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"\", "
                    "\"syscalls\": [{\"names\": [\"mkdir\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}",
                    "SCMP_ACT_NOTIFY needs a listenerPath");
  expect_oci_error ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": 1}",
                    "listenerPath must be a string");
}

Test (parse, every_action)
{
  static const char *actions[]
      = { "SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO",        "SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD",
          "SCMP_ACT_TRAP",  "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_LOG" };
  for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
    for (size_t j = 0; j < sizeof actions / sizeof actions[0]; j++)
      {
        char json[512];
        snprintf (json, sizeof json,
                  "{\"defaultAction\": \"%s\", \"syscalls\": [{\"names\": [\"getppid\"], "
                  "\"action\": \"%s\"}, {\"names\": [\"getuid\"], \"action\": "
                  "\"SCMP_ACT_ERRNO\", \"errnoRet\": 13}]}",
                  actions[i], actions[j]);
        csr_seccomp_free (compile_ok (json));
      }
}

Test (parse, wrong_types)
{
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\"},"
                         "{\"names\": [\"write\"], \"action\": \"SCMP_ACT_ALLOW\"},"
                         "{\"names\": [\"close\"], \"action\": \"SCMP_ACT_ALLOW\"},"
                         "{\"names\": \"openat\", \"action\": \"SCMP_ACT_ALLOW\"}"),
                "syscalls[3].names must be an array of strings");
  expect_error (PROFILE ("{\"names\": [\"read\", 3], \"action\": \"SCMP_ACT_ALLOW\"}"),
                "syscalls[0].names must be an array of strings");
  expect_error (PROFILE ("{\"names\": null, \"action\": \"SCMP_ACT_ALLOW\"}"),
                "syscalls[0].names must be an array of strings");
  expect_error (PROFILE ("{\"names\": [], \"action\": \"SCMP_ACT_ALLOW\"}"),
                "syscalls[0] has no syscall names");
  expect_error (PROFILE ("\"read\""), "syscalls[0] must be an object");
  expect_error (PROFILE ("{\"names\": [\"read\"]}"), "syscalls[0].action is missing");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": [\"SCMP_ACT_ALLOW\"]}"),
                "syscalls[0].action must be a string");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", "
                         "\"errnoRet\": -1}"),
                "syscalls[0].errnoRet must be a non-negative integer");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": {}}"),
                "syscalls[0].args must be an array");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [1]}"),
                "syscalls[0].args[0] must be an object");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": "
                         "[{\"index\": 0, \"value\": 1}]}"),
                "syscalls[0].args[0] needs \"index\", \"value\" and \"op\"");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": "
                         "[{\"index\": 6, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}"),
                "syscalls[0].args[0].index must be 0-5");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": "
                         "[{\"index\": 0, \"value\": 1.5, \"op\": \"SCMP_CMP_EQ\"}]}"),
                "syscalls[0].args[0].value must be a non-negative integer");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": "
                         "[{\"index\": 0, \"value\": -1, \"op\": \"SCMP_CMP_EQ\"}]}"),
                "syscalls[0].args[0].value must be a non-negative integer");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": "
                         "[{\"index\": 0, \"value\": 18446744073709551616, \"op\": "
                         "\"SCMP_CMP_EQ\"}]}"),
                "syscalls[0].args[0].value is larger than 2^64-1");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": "
                         "[{\"index\": 0, \"value\": 1, \"op\": 7}]}"),
                "syscalls[0].args[0].op must be a string");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"includes\": "
                         "{\"caps\": \"CAP_SYS_ADMIN\"}}"),
                "syscalls[0].includes.caps must be an array of strings");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"includes\": "
                         "{\"minKernel\": 4}}"),
                "syscalls[0].includes.minKernel must be a string like \"4.8\"");
  /* The largest value is fine. */
  csr_seccomp_free (compile_ok (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\","
                                         " \"args\": [{\"index\": 0, \"value\": "
                                         "18446744073709551615, \"op\": \"SCMP_CMP_LE\"}]}")));
}

Test (parse, unknown_names)
{
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\"},"
                         "{\"names\": [\"write\", \"not_a_syscall\"], \"action\": "
                         "\"SCMP_ACT_ALLOW\"}"),
                "syscalls[1]: unknown syscall \"not_a_syscall\"");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": "
                         "[{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_FOO\"}]}"),
                "syscalls[0].args[0]: unknown op \"SCMP_CMP_FOO\"");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"agrs\": []}"),
                "syscalls[0]: unknown field \"agrs\"");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": "
                         "[{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_EQ\", \"vaule2\": 1}]}"),
                "syscalls[0].args[0]: unknown field \"vaule2\"");
  expect_error (PROFILE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"includes\": "
                         "{\"arches\": [\"vax\"]}}"),
                "syscalls[0].includes.arches: unknown architecture \"vax\"");
  /* Known to libseccomp, absent on this architecture: skipped. */
  csr_seccomp_free (
      compile_ok (PROFILE ("{\"names\": [\"read\", \"socketcall\", \"_llseek\", "
                           "\"arm_fadvise64_64\", \"s390_runtime_instr\"], \"action\": "
                           "\"SCMP_ACT_ALLOW\", \"comment\": \"ignored\"}")));
}

Test (parse, repeated_argument_is_one_rule_per_comparison)
{
  /* runtime-tools' default profile: one entry, arg 0 compared three times.
   * runc and crun add one rule per comparison (ORed); so does csrun. */
  csr_seccomp_free (compile_ok (
      PROFILE ("{\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": ["
               "{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"},"
               "{\"index\": 0, \"value\": 8, \"op\": \"SCMP_CMP_EQ\"},"
               "{\"index\": 0, \"value\": 4294967295, \"op\": \"SCMP_CMP_EQ\"}]}")));
  csr_seccomp_free (
      compile_ok (PROFILE ("{\"names\": [\"ioctl\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": ["
                           "{\"index\": 1, \"value\": 21522, \"op\": \"SCMP_CMP_NE\"},"
                           "{\"index\": 1, \"value\": 21532, \"op\": \"SCMP_CMP_NE\"},"
                           "{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}")));
}

Test (parse, conflicting_rules)
{
  /* libseccomp would silently drop the exception to the unconditional rule. */
  expect_error (PROFILE ("{\"names\": [\"ioctl\"], \"action\": \"SCMP_ACT_ALLOW\"},"
                         "{\"names\": [\"ioctl\"], \"action\": \"SCMP_ACT_KILL\", \"args\": "
                         "[{\"index\": 1, \"value\": 21522, \"op\": \"SCMP_CMP_EQ\"}]}"),
                "syscalls[1]: ioctl: SCMP_ACT_KILL conflicts with SCMP_ACT_ALLOW in syscalls[0]");
  expect_error (PROFILE ("{\"names\": [\"getpid\"], \"action\": \"SCMP_ACT_ALLOW\"},"
                         "{\"names\": [\"getpid\"], \"action\": \"SCMP_ACT_ERRNO\", "
                         "\"errnoRet\": 2}"),
                "SCMP_ACT_ERRNO(2) conflicts with SCMP_ACT_ALLOW");
  /* The same action twice, or disjoint conditional rules, are fine. */
  csr_seccomp_free (
      compile_ok (PROFILE ("{\"names\": [\"getpid\"], \"action\": \"SCMP_ACT_ALLOW\"},"
                           "{\"names\": [\"getpid\", \"getppid\"], \"action\": \"SCMP_ACT_ALLOW\"},"
                           "{\"names\": [\"socket\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": "
                           "[{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]},"
                           "{\"names\": [\"socket\"], \"action\": \"SCMP_ACT_KILL\", \"args\": "
                           "[{\"index\": 0, \"value\": 40, \"op\": \"SCMP_CMP_EQ\"}]},"
                           "{\"names\": [\"getuid\"], \"action\": \"SCMP_ACT_ERRNO\"}")));
}

Test (parse, load_errors)
{
  struct csr_seccomp *s = NULL;
  csr_error *err = NULL;
  cr_assert_lt (csr_seccomp_load ("/nonexistent/csrun.json", NULL, &s, &err), 0);
  cr_expect_eq (err->status, ENOENT); /* before csr_error_text (), which folds it in */
  cr_expect (strstr (csr_error_text (err), "/nonexistent/csrun.json"), "%s", csr_error_text (err));
  csr_error_free (err);
}

Test (parse, flags_and_docker_fields)
{
  /* Docker-style profile fields are understood. */
  struct csr_seccomp *s = compile_ok (
      "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 1,"
      " \"flags\": [\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"],"
      " \"archMap\": [{\"architecture\": \"SCMP_ARCH_AARCH64\", \"subArchitectures\": "
      "[\"SCMP_ARCH_ARM\"]}],"
      " \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"comment\": \"x\","
      " \"includes\": {\"minKernel\": \"3.0\"}, \"excludes\": {}},"
      " {\"names\": [\"riscv_flush_icache\"], \"action\": \"SCMP_ACT_ALLOW\", \"includes\":"
      " {\"arches\": [\"riscv64\", \"loong64\", \"sheb\", \"m68k\"]}}]}");
  csr_seccomp_free (s);
}

Test (parse, foreign_architectures_are_skipped)
{
  /* aarch64 cannot run on x86_64 (and vice versa): listing it changes nothing. */
  const char *base = "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [{\"names\": "
                     "[\"read\"], \"action\": \"SCMP_ACT_ALLOW\"}]}";
  const char *more = "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"architectures\": "
                     "[\"SCMP_ARCH_AARCH64\", \"SCMP_ARCH_X86_64\", \"SCMP_ARCH_PPC64LE\"], "
                     "\"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\"}]}";
#if defined(__x86_64__)
  struct csr_seccomp *a = compile_ok (base), *b = compile_ok (more);
  cr_assert_eq (a->bpf_len, b->bpf_len);
  cr_assert_eq (memcmp (a->bpf, b->bpf, a->bpf_len), 0);
  csr_seccomp_free (a);
  csr_seccomp_free (b);
#else
  (void)base;
  (void)more;
  cr_skip_test ("x86_64 only");
#endif
}

Test (compile, default_profile)
{
  struct csr_seccomp *s = default_filter ();
  cr_assert_gt (s->prog.len, 10);
  cr_assert_eq (s->bpf_len, s->prog.len * sizeof (struct sock_filter));
  cr_assert_eq ((void *)s->prog.filter, s->bpf);
  cr_assert_eq (strlen (s->digest), 64);
  /* The digest is the profile text's. */
  char *path = default_profile_path (), *text = NULL;
  size_t len = 0;
  cr_assert_eq (csr_read_file (path, 1 << 22, &text, &len, NULL), 0);
  struct csr_seccomp *t = NULL;
  cr_assert_eq (csr_seccomp_compile (text, len, &t, NULL), 0);
  cr_assert_str_eq (t->digest, s->digest);
  cr_assert_eq (t->bpf_len, s->bpf_len);
  cr_assert_eq (memcmp (t->bpf, s->bpf, s->bpf_len), 0, "compiling is deterministic");
  csr_seccomp_free (t);
  csr_seccomp_free (s);
  free (text);
  free (path);
}

/* ------------------------------------------------------------- probes */

static long
p_getpid (void)
{
  return syscall (SYS_getpid);
}
static long
p_getppid (void)
{
  return syscall (SYS_getppid);
}
static long
p_keyctl (void)
{
  return syscall (SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0);
}
static long
p_add_key (void)
{
  return syscall (SYS_add_key, "user", "csrun", "x", 1, -3);
}
static long
p_request_key (void)
{
  return syscall (SYS_request_key, "user", "csrun", NULL, 0);
}
static long
p_bpf (void)
{
  return syscall (SYS_bpf, 0, NULL, 0);
}
static long
p_userfaultfd (void)
{
  return syscall (SYS_userfaultfd, 0);
}
static long
p_unshare_user (void)
{
  return unshare (CLONE_NEWUSER);
}
static long
p_unshare_net (void)
{
  return unshare (CLONE_NEWNET);
}
static long
p_setns (void)
{
  return setns (-1, 0);
}
/* Every probe is harmless if the filter let it through (nonexistent paths,
 * invalid arguments): a broken filter must not damage the host. */
static long
p_mount (void)
{
  return mount ("none", "/nonexistent-csrun", "tmpfs", 0, NULL);
}
static long
p_umount2 (void)
{
  return umount2 ("/nonexistent-csrun", 0);
}
static long
p_fsopen (void)
{
  return syscall (SYS_fsopen, "csrun-no-such-fs", 0);
}
static long
p_fsmount (void)
{
  return syscall (SYS_fsmount, -1, 0, 0);
}
static long
p_move_mount (void)
{
  return syscall (SYS_move_mount, -1, "", -1, "", 0);
}
static long
p_open_tree (void)
{
  return syscall (SYS_open_tree, -1, "/nonexistent-csrun", 0);
}
static long
p_mount_setattr (void)
{
  return syscall (SYS_mount_setattr, -1, "", 0, NULL, 0);
}
static long
p_pivot_root (void)
{
  return syscall (SYS_pivot_root, "/nonexistent-csrun-a", "/nonexistent-csrun-b");
}
static long
p_chroot (void)
{
  return chroot ("/nonexistent-csrun");
}
static long
p_ptrace (void)
{
  return syscall (SYS_ptrace, 2 /* PTRACE_PEEKDATA */, getppid (), NULL, NULL);
}
static long
p_process_vm_readv (void)
{
  return syscall (SYS_process_vm_readv, getppid (), NULL, 0, NULL, 0, 0);
}
static long
p_pidfd_getfd (void)
{
  return syscall (SYS_pidfd_getfd, -1, 0, 0);
}
static long
p_io_uring_setup (void)
{
  return syscall (SYS_io_uring_setup, 1, NULL);
}
static long
p_perf_event_open (void)
{
  return syscall (SYS_perf_event_open, NULL, 0, -1, -1, 0);
}
static long
p_open_by_handle_at (void)
{
  return syscall (SYS_open_by_handle_at, -1, NULL, 0);
}
static long
p_name_to_handle_at (void)
{
  return syscall (SYS_name_to_handle_at, AT_FDCWD, "/", NULL, NULL, 0);
}
static long
p_kexec_load (void)
{
  return syscall (SYS_kexec_load, 0, 0, NULL, 0xdead0000UL);
}
static long
p_init_module (void)
{
  return syscall (SYS_init_module, NULL, 0, "");
}
static long
p_finit_module (void)
{
  return syscall (SYS_finit_module, -1, "", 0);
}
static long
p_delete_module (void)
{
  return syscall (SYS_delete_module, "csrun_no_such_module", O_NONBLOCK);
}
static long
p_reboot (void)
{
  return syscall (SYS_reboot, 0, 0, 0, NULL);
}
static long
p_swapon (void)
{
  return syscall (SYS_swapon, "/nonexistent-csrun", 0);
}
static long
p_acct (void)
{
  return syscall (SYS_acct, "/nonexistent-csrun/acct");
}
static long
p_quotactl (void)
{
  return syscall (SYS_quotactl, 0, NULL, 0, NULL);
}
static long
p_syslog (void)
{
  return syscall (SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
}
static long
p_clock_settime (void)
{
  return syscall (SYS_clock_settime, CLOCK_REALTIME, NULL);
}
static long
p_adjtimex (void)
{
  return syscall (SYS_adjtimex, NULL);
}
static long
p_sethostname (void)
{
  return syscall (SYS_sethostname, NULL, 100000);
}
static long
p_mknod_chr (void)
{
  return mknodat (AT_FDCWD, "/nonexistent-csrun/null", S_IFCHR | 0600, makedev (1, 3));
}
static long
p_mknod_chr_high_bits (void)
{
  /* mode is an unsigned int: the high bits must not hide S_IFCHR. */
  return syscall (SYS_mknodat, AT_FDCWD, "/nonexistent-csrun/null", 0x100000000UL | S_IFCHR | 0600,
                  makedev (1, 3));
}
static char fifo_path[64];
static long
p_mkfifo (void)
{
  long r = mkfifo (fifo_path, 0600);
  unlink (fifo_path);
  return r;
}
#if defined(__x86_64__)
static long
p_iopl (void)
{
  return syscall (SYS_iopl, 0);
}
static long
p_modify_ldt (void)
{
  return syscall (SYS_modify_ldt, 0, NULL, 0);
}
#endif
static long
p_personality_bsd (void)
{
  return syscall (SYS_personality, PER_BSD);
}
static long
p_personality_linux32 (void)
{
  return syscall (SYS_personality, PER_LINUX32);
}
static long
p_personality_query (void)
{
  return syscall (SYS_personality, 0xffffffffUL);
}
static long
p_personality_linux (void)
{
  return syscall (SYS_personality, PER_LINUX);
}
static long
p_personality_norandom (void)
{
  return syscall (SYS_personality, PER_LINUX | ADDR_NO_RANDOMIZE);
}
static long
p_clone3 (void)
{
  return syscall (SYS_clone3, NULL, 0);
}
static long
clone_flags (unsigned long flags)
{
  long r = syscall (SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (r == 0)
    _exit (0);
  if (r > 0)
    waitpid ((pid_t)r, NULL, 0);
  return r;
}
static long
p_clone_newuser (void)
{
  return clone_flags (CLONE_NEWUSER);
}
static long
p_clone_newns_newpid (void)
{
  return clone_flags (CLONE_NEWNS | CLONE_NEWPID);
}
static long
p_clone_newnet_high_bits (void)
{
  return clone_flags (0x100000000UL | CLONE_NEWNET);
}
static long
p_clone_plain (void)
{
  return clone_flags (0);
}
static long
p_fork (void)
{
  pid_t pid = fork ();
  if (pid == 0)
    _exit (7);
  int st = 0;
  if (pid < 0 || waitpid (pid, &st, 0) != pid || !WIFEXITED (st) || WEXITSTATUS (st) != 7)
    return -1;
  return pid;
}
static void *
thread_main (void *arg)
{
  return arg;
}
static long
p_thread (void)
{
  /* glibc tries clone3 first: ENOSYS makes it fall back to clone. */
  pthread_t t;
  int r = pthread_create (&t, NULL, thread_main, (void *)42);
  if (r != 0)
    {
      errno = r;
      return -1;
    }
  void *ret = NULL;
  pthread_join (t, &ret);
  return (long)ret == 42 ? 0 : -1;
}
static long
sock (long family, int type, int proto)
{
  long fd = syscall (SYS_socket, family, type, proto);
  if (fd >= 0)
    close ((int)fd);
  return fd;
}
static long
p_socket_packet (void)
{
  return sock (AF_PACKET, SOCK_RAW, 0);
}
static long
p_socket_alg (void)
{
  return sock (AF_ALG, SOCK_SEQPACKET, 0);
}
static long
p_socket_vsock (void)
{
  return sock (AF_VSOCK, SOCK_STREAM, 0);
}
static long
p_socket_netlink_netfilter (void)
{
  return sock (AF_NETLINK, SOCK_RAW, 12 /* NETLINK_NETFILTER */);
}
static long
p_socket_inet_high_bits (void)
{
  return sock (0x100000000L | AF_INET, SOCK_STREAM, 0);
}
static long
p_socket_inet (void)
{
  return sock (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
}
static long
p_socket_inet_udp (void)
{
  return sock (AF_INET, SOCK_DGRAM, 0);
}
static long
p_socket_inet6 (void)
{
  return sock (AF_INET6, SOCK_STREAM, 0);
}
static long
p_socket_unix (void)
{
  return sock (AF_UNIX, SOCK_STREAM, 0);
}
static long
p_socket_netlink_route (void)
{
  return sock (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0 /* NETLINK_ROUTE */);
}
static long
p_socketpair_unix (void)
{
  int sv[2];
  return socketpair (AF_UNIX, SOCK_STREAM, 0, sv);
}
static long
p_socketpair_inet (void)
{
  int sv[2];
  return socketpair (AF_INET, SOCK_STREAM, 0, sv);
}
static long
pipe_ioctl (unsigned long request)
{
  int p[2];
  if (pipe (p) < 0)
    return -2;
  int n = 0;
  char c = 'x';
  void *arg = (request & 0xffffffffUL) == FIONREAD ? (void *)&n : (void *)&c;
  return syscall (SYS_ioctl, p[0], request, arg);
}
static long
p_ioctl_tiocsti (void)
{
  return pipe_ioctl (TIOCSTI);
}
static long
p_ioctl_tiocsti_high_bits (void)
{
  return pipe_ioctl (0x100000000UL | TIOCSTI);
}
static long
p_ioctl_tiocsti_sign_extended (void)
{
  return pipe_ioctl (0xffffffff00000000UL | TIOCSTI);
}
static long
p_ioctl_tioclinux (void)
{
  return pipe_ioctl (TIOCLINUX);
}
static long
p_ioctl_tioclinux_high_bits (void)
{
  return pipe_ioctl (0x800000000UL | TIOCLINUX);
}
static long
p_ioctl_fionread (void)
{
  return pipe_ioctl (FIONREAD);
}
static long
p_ioctl_fionread_high_bits (void)
{
  return pipe_ioctl (0x100000000UL | FIONREAD);
}
static long
p_ioctl_tcgets (void)
{
  return pipe_ioctl (TCGETS); /* ENOTTY from the kernel, not EPERM */
}
#if defined(__x86_64__)
static long
p_x32_getpid (void)
{
  return syscall (0x40000000L | SYS_getpid);
}
static long
p_int80_getpid (void)
{
  long ret;
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "r8", "r9", "r10", "r11");
  return ret;
}
#endif

/* ------------------------------------------------------------- behaviour */

Test (filter, basics_work)
{
  struct csr_seccomp *s = default_filter ();
  WORKS (s, p_getpid);
  WORKS (s, p_getppid);
  WORKS (s, p_fork);
  WORKS (s, p_thread);
  snprintf (fifo_path, sizeof fifo_path, "/tmp/csrun-seccomp-fifo-%d", (int)getpid ());
  WORKS (s, p_mkfifo);
  csr_seccomp_free (s);
}

Test (filter, escape_syscalls_are_eperm)
{
  struct csr_seccomp *s = default_filter ();
  ERRNO (s, p_keyctl, EPERM);
  ERRNO (s, p_add_key, EPERM);
  ERRNO (s, p_request_key, EPERM);
  ERRNO (s, p_bpf, EPERM);
  ERRNO (s, p_userfaultfd, EPERM);
  ERRNO (s, p_unshare_user, EPERM);
  ERRNO (s, p_unshare_net, EPERM);
  ERRNO (s, p_setns, EPERM);
  ERRNO (s, p_mount, EPERM);
  ERRNO (s, p_umount2, EPERM);
  ERRNO (s, p_fsopen, EPERM);
  ERRNO (s, p_fsmount, EPERM);
  ERRNO (s, p_move_mount, EPERM);
  ERRNO (s, p_open_tree, EPERM);
  ERRNO (s, p_mount_setattr, EPERM);
  ERRNO (s, p_pivot_root, EPERM);
  ERRNO (s, p_chroot, EPERM);
  ERRNO (s, p_ptrace, EPERM);
  ERRNO (s, p_process_vm_readv, EPERM);
  ERRNO (s, p_pidfd_getfd, EPERM);
  ERRNO (s, p_io_uring_setup, EPERM);
  ERRNO (s, p_perf_event_open, EPERM);
  ERRNO (s, p_open_by_handle_at, EPERM);
  ERRNO (s, p_name_to_handle_at, EPERM);
  ERRNO (s, p_kexec_load, EPERM);
  ERRNO (s, p_init_module, EPERM);
  ERRNO (s, p_finit_module, EPERM);
  ERRNO (s, p_delete_module, EPERM);
  ERRNO (s, p_reboot, EPERM);
  ERRNO (s, p_swapon, EPERM);
  ERRNO (s, p_acct, EPERM);
  ERRNO (s, p_quotactl, EPERM);
  ERRNO (s, p_syslog, EPERM);
  ERRNO (s, p_clock_settime, EPERM);
  ERRNO (s, p_adjtimex, EPERM);
  ERRNO (s, p_sethostname, EPERM);
  ERRNO (s, p_mknod_chr, EPERM);
  ERRNO (s, p_mknod_chr_high_bits, EPERM);
#if defined(__x86_64__)
  ERRNO (s, p_iopl, EPERM);
  ERRNO (s, p_modify_ldt, EPERM);
#endif
  csr_seccomp_free (s);
}

Test (filter, personality)
{
  struct csr_seccomp *s = default_filter ();
  ERRNO (s, p_personality_bsd, EPERM);
  ERRNO (s, p_personality_linux32, EPERM);
  WORKS (s, p_personality_query);
  WORKS (s, p_personality_linux);
  WORKS (s, p_personality_norandom);
  csr_seccomp_free (s);
}

/* An entry comparing arg 0 twice matches when either comparison holds. */
Test (filter, repeated_argument_ors)
{
  struct csr_seccomp *s = compile_ok (
      "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"personality\"], "
      "\"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 22, \"args\": ["
      "{\"index\": 0, \"value\": 6, \"op\": \"SCMP_CMP_EQ\"},"      /* PER_BSD */
      "{\"index\": 0, \"value\": 8, \"op\": \"SCMP_CMP_EQ\"}]}]}"); /* PER_LINUX32 */
  ERRNO (s, p_personality_bsd, EINVAL);
  ERRNO (s, p_personality_linux32, EINVAL);
  WORKS (s, p_personality_query);
  WORKS (s, p_personality_linux);
  csr_seccomp_free (s);
}

static long
p_syscall_1000 (void)
{
  return syscall (1000, 0, 0, 0);
}

/* runc's ENOSYS stub for OCI profiles: a call numbered above every one the
 * profile names returns ENOSYS, one below is the default action. */
Test (filter, oci_profiles_answer_enosys_above_their_newest_call)
{
  const char *p = "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"architectures\": "
                  "[\"SCMP_ARCH_X86_64\", \"SCMP_ARCH_X86\", \"SCMP_ARCH_X32\"], \"syscalls\": ["
                  "{\"names\": [\"write\", \"exit\", \"exit_group\", \"getpid\", "
                  /* what the ASan runtime calls in the probe's child (all below
                   * exit_group's number, so the newest call stays exit_group) */
                  "\"sigaltstack\", \"gettid\", \"mmap\", \"munmap\"], "
                  "\"action\": \"SCMP_ACT_ALLOW\"}]}";
  struct csr_seccomp *s = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_seccomp_compile_oci (p, strlen (p), &s, &err), 0, "%s",
                err ? csr_error_text (err) : "");
  ERRNO (s, p_syscall_1000, ENOSYS);
  ERRNO (s, p_getppid, EPERM); /* 110 < exit_group's 231: the profile's default */
  WORKS (s, p_getpid);
  csr_seccomp_free (s);
  /* csrun's own profiles (csrun run) keep the default action. */
  struct csr_seccomp *t = compile_ok (p);
  ERRNO (t, p_syscall_1000, EPERM);
  csr_seccomp_free (t);
  /* A default allow needs no stub. */
  const char *a = "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": "
                  "[\"getppid\"], \"action\": \"SCMP_ACT_ERRNO\"}]}";
  cr_assert_eq (csr_seccomp_compile_oci (a, strlen (a), &s, NULL), 0);
  ERRNO (s, p_syscall_1000, ENOSYS); /* the kernel's own answer */
  ERRNO (s, p_getppid, EPERM);
  csr_seccomp_free (s);
}

Test (filter, clone)
{
  struct csr_seccomp *s = default_filter ();
  ERRNO (s, p_clone3, ENOSYS);
  ERRNO (s, p_clone_newuser, EPERM);
  ERRNO (s, p_clone_newns_newpid, EPERM);
  ERRNO (s, p_clone_newnet_high_bits, EPERM);
  WORKS (s, p_clone_plain);
  WORKS (s, p_fork);
  WORKS (s, p_thread);
  csr_seccomp_free (s);
}

Test (filter, socket_families)
{
  struct csr_seccomp *s = default_filter ();
  ERRNO (s, p_socket_packet, EPERM);
  ERRNO (s, p_socket_alg, EPERM);
  ERRNO (s, p_socket_vsock, EPERM);
  ERRNO (s, p_socket_netlink_netfilter, EPERM);
  ERRNO (s, p_socket_inet_high_bits, EPERM);
  ERRNO (s, p_socketpair_inet, EPERM);
  WORKS (s, p_socket_inet);
  WORKS (s, p_socket_inet_udp);
  WORKS (s, p_socket_unix);
  WORKS (s, p_socket_netlink_route);
  WORKS (s, p_socketpair_unix);
  NOT_EPERM (s, p_socket_inet6);
  csr_seccomp_free (s);
}

Test (filter, ioctl)
{
  struct csr_seccomp *s = default_filter ();
  ERRNO (s, p_ioctl_tiocsti, EPERM);
  ERRNO (s, p_ioctl_tiocsti_high_bits, EPERM);
  ERRNO (s, p_ioctl_tiocsti_sign_extended, EPERM);
  ERRNO (s, p_ioctl_tioclinux, EPERM);
  ERRNO (s, p_ioctl_tioclinux_high_bits, EPERM);
  WORKS (s, p_ioctl_fionread);
  WORKS (s, p_ioctl_fionread_high_bits);
  ERRNO (s, p_ioctl_tcgets, ENOTTY);
  /* Without the filter TIOCSTI on a pipe is ENOTTY: the EPERM above is the filter's. */
  ERRNO (NULL, p_ioctl_tiocsti, ENOTTY);
  csr_seccomp_free (s);
}

Test (filter, foreign_architectures_kill)
{
#if defined(__x86_64__)
  struct csr_seccomp *s = default_filter ();
  SIGSYS_ (s, p_x32_getpid);
  /* int 0x80 needs the kernel's i386 emulation; without it the CPU
   * faults before seccomp sees anything. */
  struct outcome o = run_probe (NULL, p_int80_getpid);
  if (!(WIFEXITED (o.status) && o.reported && o.ret > 0))
    {
      csr_seccomp_free (s);
      cr_skip_test ("int 0x80 does not work here without a filter (no IA32 emulation)");
    }
  SIGSYS_ (s, p_int80_getpid);
  csr_seccomp_free (s);
#else
  cr_skip_test ("x86_64 only");
#endif
}

/* includes/excludes are judged for a jail without capabilities. */
Test (filter, includes_and_excludes)
{
  struct csr_seccomp *s
      = compile_ok ("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
                    "{\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 5, "
                    "\"includes\": {\"caps\": [\"CAP_SYS_ADMIN\"]}},"
                    "{\"names\": [\"getpid\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 6, "
                    "\"excludes\": {\"caps\": [\"CAP_SYS_ADMIN\"]}},"
                    "{\"names\": [\"keyctl\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 7, "
                    "\"includes\": {\"arches\": [\"s390x\"]}},"
                    "{\"names\": [\"bpf\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 8, "
                    "\"includes\": {\"minKernel\": \"999.0\"}},"
                    "{\"names\": [\"clone3\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 9, "
                    "\"includes\": {\"arches\": [\"amd64\", \"arm64\"], \"minKernel\": \"3.10\"}}"
                    "]}");
  WORKS (s, p_getppid);
  ERRNO (s, p_getpid, 6);
  ERRNO (s, p_clone3, 9);
  struct outcome o = run_probe (s, p_keyctl);
  cr_expect (o.ret >= 0 || o.err != 7, "keyctl: the s390x-only rule applied");
  o = run_probe (s, p_bpf);
  cr_expect (o.err != 8, "bpf: the minKernel 999.0 rule applied");
  csr_seccomp_free (s);
}

/* ------------------------------------------------------------- the cache */

static char *
make_tmpdir (void)
{
  return test_tmpdir ("seccomp");
}

static char *
cache_file (const char *dir)
{
  char *pattern = NULL;
  cr_assert_geq (asprintf (&pattern, "%s/seccomp/*.bpf", dir), 0);
  glob_t g;
  cr_assert_eq (glob (pattern, 0, NULL, &g), 0, "no cache file in %s", dir);
  cr_assert_eq (g.gl_pathc, 1);
  char *path = strdup (g.gl_pathv[0]);
  globfree (&g);
  free (pattern);
  return path;
}

Test (cache, second_load_is_identical)
{
  char *dir = make_tmpdir (), *profile = default_profile_path ();
  struct csr_seccomp *a = NULL, *b = NULL, *c = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_seccomp_load (profile, dir, &a, &err), 0, "%s",
                err ? csr_error_text (err) : "");
  char *file = cache_file (dir);
  struct stat st;
  cr_assert_eq (stat (file, &st), 0);
  /* A header (magic, key, the program's sha256) and the program. */
  cr_expect_eq ((size_t)st.st_size, CACHE_HEADER + a->bpf_len);
  cr_expect_eq (st.st_mode & 0777, 0600);
  cr_expect_eq (st.st_uid, geteuid ());
  cr_assert_eq (csr_seccomp_load (profile, dir, &b, &err), 0);
  cr_assert_eq (b->bpf_len, a->bpf_len);
  cr_assert_eq (memcmp (a->bpf, b->bpf, a->bpf_len), 0);
  cr_assert_str_eq (a->digest, b->digest);
  cr_assert_eq (b->prog.len, a->prog.len);
  cr_assert_eq ((void *)b->prog.filter, b->bpf);
  /* Without a cache the same program. */
  cr_assert_eq (csr_seccomp_load (profile, NULL, &c, &err), 0);
  cr_assert_eq (memcmp (a->bpf, c->bpf, a->bpf_len), 0);
  /* The cached copy works. */
  WORKS (b, p_getpid);
  ERRNO (b, p_keyctl, EPERM);
  ERRNO (b, p_clone3, ENOSYS);
  csr_seccomp_free (a);
  csr_seccomp_free (b);
  csr_seccomp_free (c);
  cr_assert_eq (csr_rm_rf (dir, NULL), 0);
  free (file);
  free (dir);
  free (profile);
}

/* A cache entry as csrun writes it for the program BPF. */
static void
write_entry (const char *file, const void *bpf, size_t len)
{
  char *data = NULL, *hdr = NULL, bpfhex[65];
  size_t n = 0;
  cr_assert_eq (csr_read_file (file, 1 << 20, &data, &n, NULL), 0);
  cr_assert_gt (n, CACHE_HEADER);
  cr_assert_eq (csr_sha256_buf (bpf, len, bpfhex, NULL), 0);
  /* Keep the magic and the key line, replace the program and its digest. */
  cr_assert_geq (asprintf (&hdr, "%.*sbpf %s\n", (int)(CACHE_HEADER - 69), data, bpfhex), 0);
  cr_assert_eq (strlen (hdr), CACHE_HEADER);
  char *out = malloc (CACHE_HEADER + len);
  memcpy (out, hdr, CACHE_HEADER);
  memcpy (out + CACHE_HEADER, bpf, len);
  cr_assert_eq (csr_write_file_atomic (file, out, CACHE_HEADER + len, 0600, NULL), 0);
  free (out);
  free (hdr);
  free (data);
}

Test (cache, bad_entries_are_replaced_and_a_good_one_skips_the_compiler)
{
  char *dir = make_tmpdir (), *profile = default_profile_path ();
  struct csr_seccomp *a = NULL, *b = NULL, *c = NULL;
  cr_assert_eq (csr_seccomp_load (profile, dir, &a, NULL), 0);
  char *file = cache_file (dir);
  struct sock_filter allow_all[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 4),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };

  /* A bare program (the old format, or one planted there), a truncated or
   * foreign file, a header for another program: all ignored and rewritten. */
  char *good = NULL;
  size_t good_len = 0;
  cr_assert_eq (csr_read_file (file, 1 << 20, &good, &good_len, NULL), 0);
  char wrong_sha[4096];
  memcpy (wrong_sha, good, CACHE_HEADER);
  memcpy (wrong_sha + CACHE_HEADER, allow_all, sizeof allow_all);
  struct
  {
    const void *data;
    size_t len;
  } bad[] = { { allow_all, sizeof allow_all },
              { "", 0 },
              { "1234567", 7 },
              { "12345678", 8 },
              { good, CACHE_HEADER },
              { wrong_sha, CACHE_HEADER + sizeof allow_all } };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      cr_assert_eq (csr_write_file_atomic (file, bad[i].data, bad[i].len, 0600, NULL), 0);
      cr_assert_eq (csr_seccomp_load (profile, dir, &c, NULL), 0);
      cr_assert_eq (c->bpf_len, a->bpf_len, "bad cache file %zu", i);
      cr_assert_eq (memcmp (a->bpf, c->bpf, a->bpf_len), 0);
      csr_seccomp_free (c);
      c = NULL;
      char *again = NULL;
      size_t len = 0;
      cr_assert_eq (csr_read_file (file, 1 << 20, &again, &len, NULL), 0);
      cr_assert_eq (len, good_len, "bad cache file %zu was not rewritten", i);
      cr_assert_eq (memcmp (again, good, len), 0);
      free (again);
    }

  /* A group/other-writable entry is not used either. */
  write_entry (file, allow_all, sizeof allow_all);
  cr_assert_eq (chmod (file, 0620), 0);
  cr_assert_eq (csr_seccomp_load (profile, dir, &c, NULL), 0);
  cr_assert_eq (c->bpf_len, a->bpf_len, "a group-writable entry was used");
  csr_seccomp_free (c);

  /* A well-formed entry is a hit, used without compiling: the cache is the
   * caller's own (the trust check), so only the caller can have written it. */
  write_entry (file, allow_all, sizeof allow_all);
  cr_assert_eq (csr_seccomp_load (profile, dir, &b, NULL), 0);
  cr_assert_eq (b->bpf_len, sizeof allow_all);
  cr_assert_eq (memcmp (b->bpf, allow_all, sizeof allow_all), 0);

  csr_seccomp_free (a);
  csr_seccomp_free (b);
  cr_assert_eq (csr_rm_rf (dir, NULL), 0);
  free (good);
  free (file);
  free (dir);
  free (profile);
}

/* An entry written by an older csrun (cache version 2, whose compiler
 * refused or translated some profiles differently: a repeated argument)
 * is another key, never used.  The program planted there allows all. */
Test (cache, entries_of_an_older_compiler_are_not_used)
{
  char *dir = make_tmpdir (), *profile = default_profile_path ();
  char *text = NULL, digest[65], keyhex[65], bpfhex[65];
  size_t len = 0;
  cr_assert_eq (csr_read_file (profile, 1 << 22, &text, &len, NULL), 0);
  cr_assert_eq (csr_sha256_buf (text, len, digest, NULL), 0);
  const struct scmp_version *v = seccomp_version ();
  char *key = NULL, *sub = NULL, *file = NULL, *hdr = NULL;
  cr_assert_geq (asprintf (&key, "csrun-seccomp-cache 2\n%s\nlibseccomp %u.%u.%u\narch %u\n",
                           digest, v->major, v->minor, v->micro, seccomp_arch_native ()),
                 0);
  cr_assert_eq (csr_sha256_buf (key, strlen (key), keyhex, NULL), 0);
  struct sock_filter allow_all[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 4),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  cr_assert_eq (csr_sha256_buf (allow_all, sizeof allow_all, bpfhex, NULL), 0);
  cr_assert_geq (asprintf (&sub, "%s/seccomp", dir), 0);
  cr_assert_eq (mkdir (sub, 0700), 0);
  cr_assert_geq (asprintf (&file, "%s/%s.bpf", sub, keyhex), 0);
  cr_assert_geq (asprintf (&hdr, "csrun-seccomp-cache 2\nkey %s\nbpf %s\n", keyhex, bpfhex), 0);
  cr_assert_eq (strlen (hdr), CACHE_HEADER);
  char out[CACHE_HEADER + sizeof allow_all];
  memcpy (out, hdr, CACHE_HEADER);
  memcpy (out + CACHE_HEADER, allow_all, sizeof allow_all);
  cr_assert_eq (csr_write_file_atomic (file, out, sizeof out, 0600, NULL), 0);
  struct csr_seccomp *a = NULL;
  cr_assert_eq (csr_seccomp_load (profile, dir, &a, NULL), 0);
  cr_expect_gt (a->bpf_len, sizeof allow_all, "the old entry was used");
  ERRNO (a, p_keyctl, EPERM);
  csr_seccomp_free (a);
  cr_assert_eq (csr_rm_rf (dir, NULL), 0);
  free (text);
  free (key);
  free (sub);
  free (file);
  free (hdr);
  free (dir);
  free (profile);
}

Test (cache, an_untrusted_cache_directory_is_refused)
{
  char *dir = make_tmpdir (), *profile = default_profile_path ();
  struct csr_seccomp *a = NULL;
  csr_error *err = NULL;
  cr_assert_eq (chmod (dir, 0777), 0);
  cr_assert_eq (csr_seccomp_load (profile, dir, &a, &err), CSR_TRUST_REFUSED);
  cr_assert_null (a);
  cr_assert_not_null (strstr (csr_error_text (err), "writable by group or others"), "%s",
                      csr_error_text (err));
  csr_error_free (err);
  err = NULL;
  cr_assert_eq (
      csr_seccomp_compile_oci_cached ("{\"defaultAction\": \"SCMP_ACT_ALLOW\"}", 35, dir, &a, &err),
      CSR_TRUST_REFUSED);
  csr_error_free (err);
  cr_assert_eq (csr_rm_rf (dir, NULL), 0);
  free (dir);
  free (profile);
}

Test (cache, unwritable_cache_is_not_an_error)
{
  char *profile = default_profile_path ();
  struct csr_seccomp *a = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_seccomp_load (profile, "/proc/csrun-no-cache", &a, &err), 0, "%s",
                err ? csr_error_text (err) : "");
  cr_assert_gt (a->prog.len, 0);
  csr_seccomp_free (a);
  free (profile);
}

/* ------------------------------------------------------------- CPython */

static const char python_script[]
    = "import decimal, hashlib, sqlite3, ssl, ctypes, json, uuid, subprocess, multiprocessing\n"
      "import asyncio, socket, threading, tempfile, shutil, os, sys, time, select, signal, mmap\n"
      "import fcntl, resource, random, secrets, zlib, bz2, lzma, tarfile, zipfile, locale\n"
      "import platform, pathlib, concurrent.futures, multiprocessing.shared_memory, pty, termios\n"
      "decimal.Decimal(1) / decimal.Decimal(7); hashlib.sha256(b'x').hexdigest()\n"
      "db = sqlite3.connect(':memory:'); db.execute('create table t(x)'); db.commit()\n"
      "ssl.create_default_context(); json.dumps({'a': 1}); uuid.uuid4(); uuid.uuid1()\n"
      "ctypes.CDLL(None).getpid()\n"
      "subprocess.run(['/usr/bin/true'], check=True)\n"
      "subprocess.run(['/bin/sh', '-c', 'echo hi | cat >/dev/null'], check=True)\n"
      "assert subprocess.check_output([sys.executable, '-c', 'print(1)']) == b'1\\n'\n"
      "with multiprocessing.Pool(2) as p: assert p.map(abs, [1, -2]) == [1, 2]\n"
      "q = multiprocessing.Queue(); q.put(1); assert q.get() == 1\n"
      "sm = multiprocessing.shared_memory.SharedMemory(create=True, size=64); sm.close(); "
      "sm.unlink()\n"
      "with concurrent.futures.ThreadPoolExecutor(4) as ex: list(ex.map(abs, range(8)))\n"
      "socket.socket(socket.AF_INET).close()\n"
      "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()\n"
      "c = socket.create_connection(srv.getsockname()); a, _ = srv.accept(); c.sendall(b'x')\n"
      "assert a.recv(1) == b'x'; c.close(); a.close(); srv.close()\n"
      "x, y = socket.socketpair(); x.send(b'1'); y.recv(1); x.close(); y.close()\n"
      "socket.if_nameindex(); socket.gethostname()\n"
      "t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()\n"
      "async def amain():\n"
      "    await asyncio.sleep(0)\n"
      "    p = await asyncio.create_subprocess_exec('/usr/bin/true'); await p.wait()\n"
      "    await asyncio.to_thread(abs, 1)\n"
      "asyncio.run(amain())\n"
      "with tempfile.TemporaryDirectory() as d:\n"
      "    p = pathlib.Path(d, 'a'); p.write_text('hi'); shutil.copy2(p, pathlib.Path(d, 'b'))\n"
      "    shutil.copytree(d, d + '-c'); shutil.rmtree(d + '-c'); os.mkfifo(pathlib.Path(d, 'f'))\n"
      "    os.symlink('a', pathlib.Path(d, 'l')); os.chmod(p, 0o600); shutil.disk_usage(d)\n"
      "    fd = os.open(p, os.O_RDWR); m = mmap.mmap(fd, 2); m.close(); "
      "fcntl.flock(fd, fcntl.LOCK_EX); os.close(fd)\n"
      "    with tarfile.open(pathlib.Path(d, 't.tgz'), 'w:gz') as tf: tf.add(p)\n"
      "os.listdir('/proc/self/fd'); time.sleep(0.01); select.select([], [], [], 0.01)\n"
      "ep = select.epoll(); ep.poll(0.001); ep.close(); select.poll().poll(1)\n"
      "got = []; signal.signal(signal.SIGUSR1, lambda *a: got.append(1))\n"
      "os.kill(os.getpid(), signal.SIGUSR1); assert got\n"
      "signal.setitimer(signal.ITIMER_REAL, 0.01); signal.signal(signal.SIGALRM, lambda *a: 0)\n"
      "time.sleep(0.03)\n"
      "resource.getrlimit(resource.RLIMIT_NOFILE); resource.setrlimit(resource.RLIMIT_CORE, (0, "
      "0))\n"
      "os.sched_getaffinity(0); os.cpu_count(); os.getloadavg(); os.uname(); os.times()\n"
      "os.getpriority(os.PRIO_PROCESS, 0); os.nice(0); os.urandom(8); secrets.token_hex(4)\n"
      "zlib.compress(b'x'); bz2.compress(b'x'); lzma.compress(b'x'); platform.platform()\n"
      "os.eventfd(0); os.memfd_create('x'); os.pipe2(os.O_CLOEXEC); os.pidfd_open(os.getpid())\n"
      "mfd, sfd = pty.openpty(); termios.tcgetattr(sfd); os.close(mfd); os.close(sfd)\n"
      "pid = os.fork()\n"
      "if pid == 0: os._exit(3)\n"
      "assert os.waitpid(pid, 0)[1] >> 8 == 3\n"
      "if platform.machine() == 'x86_64':\n"
      "    libc = ctypes.CDLL(None, use_errno=True)\n"
      "    assert libc.syscall(321, 0, 0, 0) == -1 and ctypes.get_errno() == 1  # bpf\n"
      "    assert libc.syscall(272, 0x10000000) == -1 and ctypes.get_errno() == 1  # unshare\n"
      "print('ok')\n";

Test (python, stdlib_under_the_default_filter, .timeout = 120)
{
  const char *python = "/usr/bin/python3";
  if (access (python, X_OK) != 0)
    cr_skip_test ("%s is not installed", python);
  struct csr_seccomp *s = default_filter ();
  char *dir = make_tmpdir ();
  int out[2];
  cr_assert_eq (pipe (out), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      dup2 (out[1], 1);
      dup2 (out[1], 2);
      close (out[0]);
      close (out[1]);
      if (chdir (dir) < 0)
        _exit (126);
      char *argv[] = { (char *)"python3", (char *)"-I", (char *)"-c", (char *)python_script, NULL };
      char *envp[]
          = { (char *)"PATH=/usr/bin:/bin", (char *)"HOME=/tmp", (char *)"LANG=C.UTF-8", NULL };
      /* The jail's order: no_new_privs, the filter, then execve at once. */
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
          || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &s->prog) < 0)
        _exit (125);
      execve (python, argv, envp);
      _exit (127);
    }
  close (out[1]);
  char *text = NULL;
  size_t len = 0;
  cr_assert_eq (csr_read_fd (out[0], 1 << 20, &text, &len, NULL), 0);
  close (out[0]);
  int st = 0;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  const char *tail = len > 3000 ? text + len - 3000 : text;
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "python: status 0x%x\n%s", st, tail);
  cr_expect (strstr (text, "ok\n") != NULL, "%s", tail);
  free (text);
  csr_rm_rf (dir, NULL);
  free (dir);
  csr_seccomp_free (s);
}
