/* csrun run: one snippet, one jail, one result. */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "jail/jail.h"
#include "rootfs/rootfs.h"
#include "run-opts.h"
#include "supervisor/capture.h"
#include "supervisor/launch.h"
#include "supervisor/result.h"
#include "util/cleanup.h"
#include "util/digest.h"
#include "util/fs.h"
#include "util/utf8.h"

#define ROOTFS_NAME "python-rootfs.tar.zst"
#define JAIL_PYTHON "/usr/bin/python3"

static const char *const default_env[] = {
  "PATH=/usr/local/bin:/usr/bin:/bin",
  "HOME=/work",
  "LANG=C.UTF-8",
  "TMPDIR=/tmp",
  "PYTHONUNBUFFERED=1",
  "PYTHONDONTWRITEBYTECODE=1",
};

/* The default rootfs: $CSRUN_ROOTFS; next to the binary (build tree); in
 * ../share/csrun beside the binary (a relocated install); the configured
 * $(pkgdatadir). */
static char *
find_rootfs (void)
{
  const char *env = getenv ("CSRUN_ROOTFS");
  if (env && *env)
    return strdup (env);
  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0)
    {
      exe[n] = '\0';
      const char *dir = dirname (exe);
      static const char *const rel[] = { "/" ROOTFS_NAME, "/../share/csrun/" ROOTFS_NAME };
      for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
        {
          char *p = NULL;
          if (asprintf (&p, "%s%s", dir, rel[i]) >= 0 && access (p, R_OK) == 0)
            return p;
          free (p);
        }
    }
  return strdup (PKGDATADIR "/" ROOTFS_NAME);
}

/* Read the snippet; any problem with it is a usage error (exit 2). */
static int
read_snippet (const struct run_opts *o, char **code, size_t *len, csr_error **err)
{
  const char *name = strcmp (o->file, "-") == 0 ? "standard input" : o->file;
  int rc = strcmp (o->file, "-") == 0 ? csr_read_fd (0, o->max_code, code, len, err)
                                      : csr_read_file (o->file, o->max_code, code, len, err);
  if (rc < 0)
    return csr_error_wrap (err, "cannot read the snippet '%s'", name);
  size_t i = 0;
  while (i < *len && strchr (" \t\r\n\f\v", (*code)[i]))
    i++;
  if (i == *len)
    return csr_error_set (err, 0, "the snippet '%s' is empty", name);
  if (!csr_utf8_valid (*code, *len))
    return csr_error_set (err, 0, "the snippet '%s' is not valid UTF-8", name);
  if (memchr (*code, '\0', *len))
    return csr_error_set (err, 0, "the snippet '%s' contains a NUL byte", name);
  return 0;
}

/* Default environment, then --env (a later KEY replaces an earlier one). */
static size_t
build_env (const struct run_opts *o, char **envp, char **owned, size_t cap)
{
  size_t n = 0, nowned = 0;
  const size_t ndef = sizeof default_env / sizeof default_env[0];
  for (size_t i = 0; i < ndef + o->n_env && n < cap - 1; i++)
    {
      const char *kv = i < ndef ? default_env[i] : o->env[i - ndef];
      if (strchr (kv, '=') == NULL)
        {
          const char *v = getenv (kv);
          if (v == NULL)
            continue;
          char *joined = NULL;
          if (asprintf (&joined, "%s=%s", kv, v) < 0)
            continue;
          owned[nowned++] = joined;
          kv = joined;
        }
      size_t klen = (size_t)(strchr (kv, '=') - kv);
      size_t j;
      for (j = 0; j < n; j++)
        if (strncmp (envp[j], kv, klen + 1) == 0)
          break;
      envp[j] = (char *)kv;
      if (j == n)
        n++;
    }
  envp[n] = NULL;
  owned[nowned] = NULL;
  return n;
}

static int
exit_code_for (const struct csr_run_result *r)
{
  switch (r->status)
    {
    case CSR_STATUS_OK:
    case CSR_STATUS_HEALED:
      return CSR_EXIT_OK;
    case CSR_STATUS_BLOCKED:
      return CSR_EXIT_BLOCKED;
    case CSR_STATUS_TIMEOUT:
      return CSR_EXIT_TIMEOUT;
    case CSR_STATUS_ERROR:
      return CSR_EXIT_INTERNAL;
    case CSR_STATUS_FAILED:
    default:
      return CSR_EXIT_FAILED;
    }
}

static void
print_json (const struct csr_run_result *r)
{
  cleanup_free char *json = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  if (csr_result_to_json (r, &json, &len, &e) < 0)
    {
      fprintf (stderr, "csrun run: cannot serialise the result: %s\n", csr_error_text (e));
      csr_error_free (e);
      return;
    }
  fwrite (json, 1, len, stdout);
  fflush (stdout);
}

/* csrun failed before or around the jail: one line on stderr, and with --json
 * a result with status "error" so an agent never loses the outcome. */
static int
fail_internal (const struct run_opts *o, struct csr_run_result *r, csr_error *e, int code)
{
  const char *msg = csr_error_text (e);
  fprintf (stderr, "csrun run: %s\n", msg);
  if (o->json)
    {
      r->status = CSR_STATUS_ERROR;
      r->error = msg;
      print_json (r);
    }
  csr_error_free (e);
  return code;
}

int
cmd_run (struct csr_global *g, int argc, char **argv)
{
  (void)g;
  struct timespec t0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  struct run_opts o;
  run_opts_parse (argc, argv, &o);

  struct csr_run_result r;
  memset (&r, 0, sizeof r);
  r.limits.mechanism = "none";
  r.limits.memory_bytes = o.memory;
  r.limits.memory_enforced = false;
  r.limits.timeout_s = o.timeout_s;
  r.limits.max_output = o.max_output;
  r.limits.tmp_size = o.tmp_size;
  r.limits.nofile = 1024;

  csr_error *e = NULL;
  cleanup_free char *code = NULL;
  size_t code_len = 0;
  if (read_snippet (&o, &code, &code_len, &e) < 0)
    {
      fprintf (stderr, "csrun run: %s\n", csr_error_text (e));
      csr_error_free (e);
      return CSR_EXIT_USAGE;
    }

  cleanup_free char *rootfs_src = o.rootfs ? strdup (o.rootfs) : find_rootfs ();
  struct csr_rootfs *rootfs = NULL;
  if (csr_rootfs_resolve (rootfs_src, o.cache_dir, &rootfs, &e) < 0)
    return fail_internal (&o, &r, e, CSR_EXIT_INTERNAL);
  r.rootfs_dir = rootfs->dir;
  r.rootfs_sha256 = rootfs->sha256;
  r.rootfs_unpacked = rootfs->unpacked_now;

  char *envp[CSR_MAX_ENV + 16];
  char *owned[CSR_MAX_ENV + 1];
  build_env (&o, envp, owned, sizeof envp / sizeof envp[0]);

  /* python3 -I -S -u -c LAUNCHER [ARGS...] */
  char **pargv = calloc ((size_t)o.n_args + 7, sizeof *pargv);
  if (pargv == NULL)
    return fail_internal (&o, &r, (csr_error_set (&e, ENOMEM, "allocate argv"), e),
                          CSR_EXIT_INTERNAL);
  size_t a = 0;
  pargv[a++] = (char *)JAIL_PYTHON;
  pargv[a++] = (char *)"-I";
  pargv[a++] = (char *)"-S";
  pargv[a++] = (char *)"-u";
  pargv[a++] = (char *)"-c";
  pargv[a++] = (char *)csr_launch_py;
  for (int i = 0; i < o.n_args; i++)
    pargv[a++] = o.args[i];
  pargv[a] = NULL;

  struct csr_file snippet = { "snippet.py", code, code_len, 0444 };
  struct jail_spec spec;
  jail_spec_init (&spec);
  spec.rootfs_dir = rootfs->dir;
  spec.argv = pargv;
  spec.envp = envp;
  spec.tmp_size = o.tmp_size;
  spec.files = &snippet;
  spec.n_files = 1;

  struct csr_attempt att;
  memset (&att, 0, sizeof att);
  att.number = 1;
  if (csr_sha256_buf (code, code_len, att.code_sha256, &e) < 0)
    return fail_internal (&o, &r, e, CSR_EXIT_INTERNAL);

  struct csr_capture_opts co = {
    .timeout_s = o.timeout_s,
    .max_output = o.max_output,
    .passthrough_out = o.json ? -1 : 1,
    .passthrough_err = o.json ? -1 : 2,
  };
  int rc = csr_capture_run (&spec, &co, &att, &e);
  free (pargv);
  for (char **p = owned; *p; p++)
    free (*p);
  if (rc < 0)
    {
      csr_bbuf_release (&att.out);
      csr_bbuf_release (&att.err);
      rc = fail_internal (&o, &r, e, CSR_EXIT_INTERNAL);
      csr_rootfs_free (rootfs);
      return rc;
    }
  r.attempts = &att;
  r.n_attempts = 1;
  struct timespec t1;
  clock_gettime (CLOCK_MONOTONIC, &t1);
  r.duration_ms = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
  if (att.timed_out)
    r.status = CSR_STATUS_TIMEOUT;
  else if (att.exited && att.exit_code == 0)
    r.status = CSR_STATUS_OK;
  else
    r.status = CSR_STATUS_FAILED;

  if (o.json)
    print_json (&r);
  else if (att.timed_out)
    fprintf (stderr, "csrun run: timed out after %g s: the jail was killed\n", o.timeout_s);
  else if (att.signal)
    fprintf (stderr, "csrun run: the snippet was killed by signal %d (%s)\n", att.signal,
             strsignal (att.signal));

  rc = exit_code_for (&r);
  csr_bbuf_release (&att.out);
  csr_bbuf_release (&att.err);
  csr_rootfs_free (rootfs);
  return rc;
}
