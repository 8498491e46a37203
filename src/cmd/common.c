/* csrun — what the front ends that run snippets share: finding the rootfs and
 * the policies, reading the snippet, the jail's environment, printing results. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "jail/idmap.h"
#include "jail/jail.h"
#include "cgroup/cgroup.h"
#include "jail/seccomp.h"
#include "supervisor/gatecode.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/termsafe.h"
#include "util/pycoding.h"
#include "util/log.h"
#include "util/trust.h"
#include "util/utf8.h"

#define ROOTFS_NAME "python-rootfs.tar.zst"

static const char *const default_env[] = {
  "PATH=/usr/local/bin:/usr/bin:/bin",
  "HOME=/work",
  "LANG=C.UTF-8",
  "TMPDIR=/tmp",
  "PYTHONUNBUFFERED=1",
  "PYTHONDONTWRITEBYTECODE=1",
};

/* A data file: next to the binary (build tree: DIR_REL is relative to the
 * binary's directory), in ../share/csrun beside the binary (a relocated
 * install), or under the configured $(pkgdatadir). */
static char *
find_data (const char *name)
{
  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0)
    {
      exe[n] = '\0';
      const char *dir = dirname (exe);
      static const char *const rel[] = { "/", "/../share/csrun/" };
      for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
        {
          char *p = NULL;
          if (asprintf (&p, "%s%s%s", dir, rel[i], name) >= 0 && access (p, R_OK) == 0)
            return p;
          free (p);
        }
    }
  char *p = NULL;
  if (asprintf (&p, "%s/%s", PKGDATADIR, name) < 0)
    return NULL;
  return p;
}

char *
csr_find_rootfs (void)
{
  const char *env = getenv ("CSRUN_ROOTFS");
  if (env && *env)
    return strdup (env);
  return find_data (ROOTFS_NAME);
}

char *
csr_find_policy (const char *name)
{
  const char *env = getenv ("CSRUN_POLICY_DIR");
  char *p = NULL;
  if (env && *env)
    {
      if (asprintf (&p, "%s/%s", env, name) < 0)
        return NULL;
      return p;
    }
  if (asprintf (&p, "policies/%s", name) < 0)
    return NULL;
  char *found = find_data (p);
  free (p);
  return found;
}

/* Read the snippet; any problem with it is a usage error (exit 2). */
int
csr_read_snippet (const struct run_opts *o, char **code, size_t *len, csr_error **err)
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
  if (memchr (*code, '\0', *len))
    return csr_error_set (err, 0, "the snippet '%s' contains a NUL byte", name);
  /* UTF-8, or another encoding declared as PEP 263 says (Python reads the
   * bytes in the jail, so it is the one to know the codec). */
  char enc[64];
  csr_error *why = NULL;
  if (csr_pycoding_check (*code, *len, enc, sizeof enc, &why) < 0)
    {
      csr_error_set (err, 0, "the snippet '%s' %s", name, csr_error_text (why));
      csr_error_free (why);
      return -1;
    }
  return 0;
}

/* Default environment, then --env (a later KEY replaces an earlier one). */
size_t
csr_build_env (const struct run_opts *o, char **envp, char **owned, size_t cap)
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

int
csr_exit_code_for (const struct csr_run_result *r)
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

void
csr_print_json (const struct csr_run_result *r)
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
  /* yajl escapes the C0 controls; on a terminal escape the C1 and bidi
   * controls too (the same document: only how it is spelled changes). */
  cleanup_free char *safe = NULL;
  if (csr_stream_is_terminal (STDOUT_FILENO))
    safe = csr_termsafe_json (json, len, &len);
  fwrite (safe ? safe : json, 1, len, stdout);
  fflush (stdout);
}

/* Load a policy file: the option's file, else the default one found by name. */
static int
policy_path (const char *opt, const char *name, char **path, csr_error **err)
{
  *path = opt ? strdup (opt) : csr_find_policy (name);
  if (*path == NULL)
    return csr_error_set (err, ENOMEM, "find %s", name);
  return 0;
}

static const char *
lookup_env (const char *name, void *data)
{
  (void)data;
  return getenv (name);
}

/* Which model heals, if any (only `csrun run` heals). */
static int
heal_llm_config (const struct run_opts *o, bool check_only, struct csr_snippet_run *s,
                 csr_error **err)
{
  if (check_only)
    return 0;
  struct csr_llm_select sel = {
    .no_llm = o->no_llm,
    .llm = o->llm,
    .base_url = o->llm_base_url,
    .ca_file = o->llm_ca_file,
    .env_file = o->env_file,
    .retries = (int)o->llm_retries,
    .max_calls = o->llm_max_calls_set ? (int)o->llm_max_calls : -1,
    .timeout_s = o->llm_timeout_s,
    .getenv_fn = lookup_env,
  };
  return csr_llm_config_resolve (&sel, &s->llm, err);
}

/* The jail failed before the gate gave a verdict: it could not start, or
 * the interpreter died before it wrote one. */
static bool
failed_before_verdict (const struct csr_run_result *r, int rc)
{
  if (rc < 0)
    return true;
  if (r->status != CSR_STATUS_ERROR || r->n_attempts == 0)
    return false;
  const struct csr_attempt *a = &r->attempts[r->n_attempts - 1];
  return a->gate != NULL && a->gate->outcome == CSR_GATE_FAILED;
}

/* After a failure before the verdict: verify the cached tree and, when it is
 * damaged, unpack it again and run everything once more.  *RC and *ERR are
 * the loop's; they are replaced by the new run's. */
static void
repair_and_rerun (const char *prog, struct csr_snippet_run *s, const struct jail_spec *spec,
                  struct csr_loop_opts *lo, const char *cache_dir, int *rc, csr_error **err)
{
  struct csr_tree_damage d;
  bool repaired = false;
  csr_error *e = NULL;
  if (csr_rootfs_check_repair (s->rootfs, &d, &repaired, &e) < 0)
    {
      /* The original failure stays the result; say why nothing was fixed. */
      if (d.n > 0)
        fprintf (stderr, "%s: the cached rootfs %s is damaged (%zu %s: first %s): %s\n", prog,
                 s->rootfs->dir, d.n, d.n == 1 ? "file" : "files", d.shown[0], csr_error_text (e));
      csr_error_free (e);
      csr_tree_damage_release (&d);
      return;
    }
  if (!repaired)
    {
      csr_tree_damage_release (&d);
      return;
    }
  fprintf (stderr, "%s: the cached rootfs %s was damaged (%zu %s: first %s); unpacked it again\n",
           prog, s->rootfs->dir, d.n, d.n == 1 ? "file" : "files", d.n_shown ? d.shown[0] : "?");
  free (s->rootfs_repaired_first);
  s->rootfs_repaired_first = d.n_shown ? strdup (d.shown[0]) : NULL;
  size_t nfiles = d.n;
  csr_tree_damage_release (&d);

  /* Start over: a fresh loop (keeping what was set before it ran), the gate
   * compiled again by the repaired interpreter. */
  struct csr_run_result keep = s->loop.result;
  csr_loop_release (&s->loop);
  memset (&s->loop, 0, sizeof s->loop);
  struct csr_run_result *r = &s->loop.result;
  r->limits = keep.limits;
  r->rootfs_dir = keep.rootfs_dir;
  r->rootfs_sha256 = keep.rootfs_sha256;
  r->rootfs_unpacked = keep.rootfs_unpacked;
  r->rootfs_repaired_files = nfiles;
  r->rootfs_repaired_first = s->rootfs_repaired_first;
  csr_error_freep (err);
  if (s->gate_code_fd > 0)
    close (s->gate_code_fd);
  s->gate_code_fd = -1;
  if (csr_gate_code_fd (spec, cache_dir, &s->gate_code_fd, err) < 0)
    {
      *rc = -1;
      return;
    }
  lo->gate_code_fd = s->gate_code_fd;
  *rc = csr_loop_run (&s->loop, s->code, s->code_len, lo, err);
}

/* The cache directory (--cache-dir, else csr_rootfs_cache_dir), checked and
 * created once for everything kept in it (rootfs trees, seccomp programs,
 * the compiled gate): *OUT is its canonical path, or NULL when it can't be
 * made here (then nothing is cached, or the rootfs names why).  A directory
 * that fails the trust check is refused: CSR_EXIT_INTERNAL, like podman. */
static int
trusted_cache_dir (const struct run_opts *o, char **out, csr_error **err)
{
  *out = NULL;
  cleanup_free char *dflt = NULL;
  const char *dir = o->cache_dir, *source = NULL;
  if (dir == NULL)
    {
      csr_error *ignored = NULL;
      if (csr_rootfs_cache_dir_from (&dflt, &source, &ignored) < 0)
        csr_error_free (ignored);
      dir = dflt;
    }
  if (dir == NULL)
    return 0;
  char what[64];
  if (source && strcmp (source, "default") != 0)
    snprintf (what, sizeof what, "cache directory (%s)", source);
  else
    snprintf (what, sizeof what, "cache directory");
  csr_error *e = NULL;
  int fd = csr_trust_open_dir (what, dir, 0700, out, &e);
  if (fd == CSR_TRUST_REFUSED)
    {
      csr_error_set (err, 0, "%s", e->msg);
      csr_error_free (e);
      return CSR_EXIT_INTERNAL;
    }
  if (fd < 0)
    {
      csr_debug ("%s", csr_error_text (e));
      csr_error_free (e);
      *out = strdup (dir); /* the rootfs cache reports what is wrong, if it needs it */
      return 0;
    }
  close (fd);
  return 0;
}

int
csr_execute (struct run_opts *o, bool check_only, struct csr_snippet_run *s, csr_error **err)
{
  struct timespec t0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  struct csr_run_result *r = &s->loop.result;
  r->limits.mechanism = "none";
  r->limits.memory_bytes = o->memory;
  r->limits.timeout_s = o->timeout_s;
  r->limits.max_output = o->max_output;
  r->limits.tmp_size = o->tmp_size;
  r->limits.nofile = 1024;
  r->limits.pids = o->pids;
  r->limits.cpu_millis = o->cpu_millis;
  if (!check_only && strcmp (o->net, "host") == 0 && !o->allow_host_net)
    {
      csr_error_set (err, 0,
                     "--net host gives the snippet the host's network (no isolation): add "
                     "--allow-host-net to mean it");
      return CSR_EXIT_USAGE;
    }

  if (csr_read_snippet (o, &s->code, &s->code_len, err) < 0)
    return CSR_EXIT_USAGE;

  /* Policies: a broken policy file is a usage error. */
  cleanup_free char *gate_path = NULL;
  if (policy_path (o->policy, "gate.conf", &gate_path, err) < 0)
    return CSR_EXIT_INTERNAL;
  if (csr_gate_policy_load (gate_path, &s->policy, err) < 0)
    return o->policy ? CSR_EXIT_USAGE : CSR_EXIT_INTERNAL;
  for (size_t i = 0; i < o->n_allow; i++)
    if (csr_gate_policy_allow (&s->policy, o->allow[i], err) < 0)
      return CSR_EXIT_USAGE;
  bool scan = !check_only && !o->no_silent_scan;
  if (scan)
    {
      cleanup_free char *p = NULL;
      if (policy_path (o->silent_conf, "silent-failure.conf", &p, err) < 0)
        return CSR_EXIT_INTERNAL;
      if (csr_scan_load (p, &s->scan, err) < 0)
        return o->silent_conf ? CSR_EXIT_USAGE : CSR_EXIT_INTERNAL;
      for (size_t i = 0; i < o->n_silent_patterns; i++)
        if (csr_scan_add (&s->scan, o->silent_patterns[i], err) < 0)
          {
            csr_error_wrap (err, "--silent-pattern");
            return CSR_EXIT_USAGE;
          }
    }
  bool heal = !check_only && !o->no_heal;
  if (heal)
    {
      cleanup_free char *p = NULL;
      if (policy_path (o->heal_conf, "heal.conf", &p, err) < 0)
        return CSR_EXIT_INTERNAL;
      if (csr_heal_conf_load (p, &s->heal, err) < 0)
        return o->heal_conf ? CSR_EXIT_USAGE : CSR_EXIT_INTERNAL;
    }

  if (heal_llm_config (o, check_only, s, err) < 0)
    return CSR_EXIT_USAGE;

  cleanup_free char *rootfs_src = o->rootfs ? strdup (o->rootfs) : csr_find_rootfs ();
  if (rootfs_src == NULL)
    return csr_error_set (err, ENOMEM, "find the rootfs"), CSR_EXIT_INTERNAL;
  cleanup_free char *cache_dir = NULL;
  int trc = trusted_cache_dir (o, &cache_dir, err);
  if (trc != 0)
    return trc;
  if (csr_rootfs_resolve (rootfs_src, cache_dir, &s->rootfs, err) < 0)
    return CSR_EXIT_INTERNAL;
  r->rootfs_dir = s->rootfs->dir;
  r->rootfs_sha256 = s->rootfs->sha256;
  r->rootfs_unpacked = s->rootfs->unpacked_now;

  csr_build_env (o, s->envp, s->owned_env, sizeof s->envp / sizeof s->envp[0]);
  struct jail_spec spec;
  jail_spec_init (&spec);
  spec.rootfs_dir = s->rootfs->dir;
  spec.envp = s->envp;
  spec.tmp_size = o->tmp_size;
  spec.host_net = strcmp (o->net, "host") == 0;
  if (o->user_uid)
    {
      cleanup_free char *subuid = NULL;
      cleanup_free char *subgid = NULL;
      size_t n;
      csr_error *ignored = NULL;
      if (csr_read_file ("/etc/subuid", 1 << 20, &subuid, &n, &ignored) < 0)
        csr_error_freep (&ignored);
      if (csr_read_file ("/etc/subgid", 1 << 20, &subgid, &n, &ignored) < 0)
        csr_error_freep (&ignored);
      struct passwd *pw = getpwuid (geteuid ());
      if (csr_idmap_subordinate (&spec, pw ? pw->pw_name : NULL, geteuid (), getegid (), subuid,
                                 subgid, (uid_t)o->user_uid, (gid_t)o->user_gid, err)
          < 0)
        return CSR_EXIT_INTERNAL;
    }

  /* Seccomp: the default allowlist unless told otherwise; compiled BPF is cached. */
  if (o->seccomp == NULL || strcmp (o->seccomp, "unconfined") != 0)
    {
      cleanup_free char *sp = NULL;
      if (policy_path (o->seccomp, "seccomp/default.json", &sp, err) < 0)
        return CSR_EXIT_INTERNAL;
      int sr = csr_seccomp_load (sp, cache_dir, &s->seccomp, err);
      if (sr < 0)
        return o->seccomp && sr != CSR_TRUST_REFUSED ? CSR_EXIT_USAGE : CSR_EXIT_INTERNAL;
      spec.seccomp_bpf = &s->seccomp->prog;
      r->limits.seccomp = s->seccomp->digest;
    }
  else
    r->limits.seccomp = "unconfined";
  s->limits = (struct csr_limits_request){
    .memory = o->memory,
    .pids = o->pids,
    .cpu_millis = o->cpu_millis,
    .explicit_mask = o->explicit_limits,
    .best_effort = o->best_effort_limits,
  };

  /* The gate, precompiled for this rootfs (cached next to the rootfs trees). */
  if (csr_gate_code_fd (&spec, cache_dir, &s->gate_code_fd, err) < 0)
    return CSR_EXIT_INTERNAL;

  /* The healers edit text and show it as UTF-8 (diffs, prompts, JSON): a
   * snippet in another encoding runs as it is. */
  if (!csr_utf8_valid (s->code, s->code_len))
    {
      char enc[64] = "";
      csr_pycoding_find (s->code, s->code_len, enc, sizeof enc);
      snprintf (s->no_heal_why, sizeof s->no_heal_why,
                "the snippet is not UTF-8 (coding: %s): csrun heals UTF-8 source only", enc);
    }
  struct csr_loop_opts lo = {
    .base = &spec,
    .args = o->args,
    .n_args = o->n_args,
    .capture = { .timeout_s = o->timeout_s,
                 .max_output = o->max_output,
                 .passthrough_out = -1,
                 .passthrough_err = -1,
                 .limits = &s->limits },
    .policy = &s->policy,
    .gate_code_fd = s->gate_code_fd,
    .check_only = check_only,
    .scan = scan ? &s->scan : NULL,
    .heal = heal && !s->no_heal_why[0] ? &s->heal : NULL,
    .llm = s->llm.provider ? &s->llm : NULL,
    .llm_budget = &s->llm_budget,
    .patch_cmd = check_only ? NULL : o->patch_cmd,
    .patch_timeout_s = o->patch_timeout_s,
    .max_code = o->max_code,
    .max_attempts = (int)o->max_attempts,
    .no_heal_why = s->no_heal_why[0] ? s->no_heal_why : NULL,
  };
  csr_cgroup_cleanup_stale ();
  int rc = csr_loop_run (&s->loop, s->code, s->code_len, &lo, err);
  if (s->rootfs->sha256 != NULL && failed_before_verdict (r, rc))
    repair_and_rerun (check_only ? "csrun check" : "csrun run", s, &spec, &lo, cache_dir, &rc, err);
  if (s->llm.provider)
    {
      r->llm_provider = s->llm.provider->name;
      r->llm_model = s->llm.model;
      r->llm_calls = s->llm_budget.calls;
      r->llm_max_calls = s->llm.max_calls;
    }
  if (r->n_attempts > 0)
    {
      const struct csr_limits_applied *ap = &r->attempts[0].limits;
      snprintf (s->mechanism, sizeof s->mechanism, "%s", ap->mechanism);
      r->limits.mechanism = s->mechanism;
      r->limits.memory_enforced = ap->memory;
      r->limits.memory_by_rlimit = ap->memory_by_rlimit;
      r->limits.pids_enforced = ap->pids;
      r->limits.cpu_enforced = ap->cpu;
    }
  struct timespec t1;
  clock_gettime (CLOCK_MONOTONIC, &t1);
  r->duration_ms = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
  return rc < 0 ? CSR_EXIT_INTERNAL : 0;
}

void
csr_snippet_run_release (struct csr_snippet_run *s)
{
  csr_loop_release (&s->loop);
  csr_gate_policy_release (&s->policy);
  csr_scan_release (&s->scan);
  csr_heal_conf_release (&s->heal);
  csr_llm_config_release (&s->llm);
  csr_rootfs_free (s->rootfs);
  free (s->rootfs_repaired_first);
  csr_seccomp_free (s->seccomp);
  if (s->gate_code_fd > 0)
    close (s->gate_code_fd);
  for (char **p = s->owned_env; *p; p++)
    free (*p);
  free (s->code);
}

/* Does csrun's next line on stderr start in the middle of a line? */
static bool say_midline;

void
csr_say_after (int out_last, int err_last)
{
  say_midline = false;
  if (err_last >= 0)
    {
      say_midline = err_last != '\n';
      return;
    }
  /* Nothing went to stderr: what stdout printed matters when both are the
   * same file or terminal (2>&1). */
  struct stat so, se;
  if (out_last >= 0 && out_last != '\n' && fstat (STDOUT_FILENO, &so) == 0
      && fstat (STDERR_FILENO, &se) == 0
      && (S_ISCHR (so.st_mode) && S_ISCHR (se.st_mode)
              ? so.st_rdev == se.st_rdev
              : so.st_dev == se.st_dev && so.st_ino == se.st_ino))
    say_midline = true;
}

bool
csr_stream_is_terminal (int fd)
{
  return isatty (fd) == 1;
}

void
csr_say (const char *prog, const char *fmt, ...)
{
  cleanup_free char *text = NULL;
  va_list ap;
  va_start (ap, fmt);
  int n = vasprintf (&text, fmt, ap);
  va_end (ap);
  if (n < 0)
    text = NULL;
  const char *nl = say_midline ? "\n" : "";
  say_midline = false;
  if (!csr_stream_is_terminal (STDERR_FILENO))
    {
      fprintf (stderr, "%s%s: %s\n", nl, prog, text ? text : fmt);
      fflush (stderr);
      return;
    }
  /* Reverse video around PROG: csr_termsafe never lets the snippet's output
   * (nor TEXT, which may quote it) carry an ESC, so only csrun can print this. */
  cleanup_free char *safe = csr_termsafe_str (text ? text : fmt);
  const char *term = getenv ("TERM");
  bool dumb = term && strcmp (term, "dumb") == 0;
  fprintf (stderr, "%s%s%s%s: %s\n", nl, dumb ? "" : CSR_SAY_MARK_ON, prog,
           dumb ? "" : CSR_SAY_MARK_OFF, safe ? safe : "(out of memory)");
  fflush (stderr);
}

/* A failure of csrun itself (or bad input): one line on stderr, and with
 * --json a result document with status "error" so an agent never loses the
 * outcome (bad input gives no document: nothing ran). */
int
csr_report_failure (const char *prog, const struct run_opts *o, struct csr_run_result *r,
                    csr_error *e, int code)
{
  const char *msg = csr_error_text (e);
  csr_say (prog, "%s", msg);
  if (o->json && code == CSR_EXIT_INTERNAL)
    {
      r->status = CSR_STATUS_ERROR;
      r->error = msg;
      csr_print_json (r);
    }
  return code;
}
