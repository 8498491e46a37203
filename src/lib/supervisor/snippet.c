/* csrun — the snippet pipeline as one library call (see snippet.h): check
 * the code, load the policies, choose the model, resolve the rootfs, build
 * the jail's base spec, run the healing loop, and repair a damaged cached
 * rootfs once when the jail could not even give the gate's verdict. */
#include "config.h"
#include "snippet.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../cgroup/cgroup.h"
#include "../jail/idmap.h"
#include "../jail/jail.h"
#include "../util/cleanup.h"
#include "../util/datadir.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/pycoding.h"
#include "../util/trust.h"
#include "../util/utf8.h"
#include "gatecode.h"

static const char *const default_env[] = {
  "PATH=/usr/local/bin:/usr/bin:/bin",
  "HOME=/work",
  "LANG=C.UTF-8",
  "TMPDIR=/tmp",
  "PYTHONUNBUFFERED=1",
  "PYTHONDONTWRITEBYTECODE=1",
};

/* issue 15: sandboxes start from the same environment. */
const char *const *
csr_snippet_default_env (size_t *n)
{
  *n = sizeof default_env / sizeof default_env[0];
  return default_env;
}

void
csr_snippet_request_init (struct csr_snippet_request *req)
{
  memset (req, 0, sizeof *req);
  req->timeout_s = 60;
  req->max_output = 1ULL << 20;
  req->tmp_size = 64ULL << 20;
  req->max_code = 1ULL << 20;
  req->max_attempts = 3;
  req->patch_timeout_s = 60;
  req->limits.memory = 512ULL << 20;
  req->limits.pids = 128;
  req->limits.cpu_millis = 1000;
  req->stdin_fd = -1;
  req->stdin_max = CSR_STDIN_DEFAULT_MAX;
  req->live_out = req->live_err = -1;
  req->interrupt_fd = -1;
  req->in_max = 256ULL << 20;
  req->out_max = 256ULL << 20;
}

int
csr_snippet_check_code (const char *name, const char *code, size_t len, csr_error **err)
{
  size_t i = 0;
  while (i < len && strchr (" \t\r\n\f\v", code[i]))
    i++;
  if (i == len)
    return csr_error_set (err, 0, "the snippet '%s' is empty", name);
  if (memchr (code, '\0', len))
    return csr_error_set (err, 0, "the snippet '%s' contains a NUL byte", name);
  /* UTF-8, or another encoding declared as PEP 263 says (Python reads the
   * bytes in the jail, so it is the one to know the codec). */
  char enc[64];
  csr_error *why = NULL;
  if (csr_pycoding_check (code, len, enc, sizeof enc, &why) < 0)
    {
      csr_error_set (err, 0, "the snippet '%s' %s", name, csr_error_text (why));
      csr_error_free (why);
      return -1;
    }
  return 0;
}

/* Default environment, then REQ's entries (a later KEY replaces an earlier one). */
static void
build_env (const struct csr_snippet_request *req, struct csr_snippet_result *res)
{
  char **envp = res->envp, **owned = res->owned_env;
  const size_t cap = sizeof res->envp / sizeof res->envp[0];
  size_t n = 0, nowned = 0;
  const size_t ndef = sizeof default_env / sizeof default_env[0];
  size_t n_extra = req->n_env < CSR_SNIPPET_MAX_ENV ? req->n_env : CSR_SNIPPET_MAX_ENV;
  for (size_t i = 0; i < ndef + n_extra && n < cap - 1; i++)
    {
      const char *kv = i < ndef ? default_env[i] : req->env[i - ndef];
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
}

/* A policy file: the request's, else the default one found by name. */
static int
policy_path (const char *given, const char *name, char **path, csr_error **err)
{
  *path = given ? strdup (given) : csr_find_policy (name);
  if (*path == NULL)
    return csr_error_set (err, ENOMEM, "find %s", name);
  return 0;
}

/* The gate policy, the silent-failure patterns, the import table: a broken
 * file the request named is bad input, a broken default one csrun's fault. */
static int
load_policies (const struct csr_snippet_request *req, struct csr_snippet_result *res,
               csr_error **err)
{
  cleanup_free char *gate_path = NULL;
  if (policy_path (req->gate_conf, "gate.conf", &gate_path, err) < 0)
    return CSR_SNIPPET_INTERNAL;
  if (csr_gate_policy_load (gate_path, &res->policy, err) < 0)
    return req->gate_conf ? CSR_SNIPPET_BAD_INPUT : CSR_SNIPPET_INTERNAL;
  for (size_t i = 0; i < req->n_allow; i++)
    if (csr_gate_policy_allow (&res->policy, req->allow[i], err) < 0)
      return CSR_SNIPPET_BAD_INPUT;
  if (!req->check_only && !req->no_silent_scan)
    {
      cleanup_free char *p = NULL;
      if (policy_path (req->silent_conf, "silent-failure.conf", &p, err) < 0)
        return CSR_SNIPPET_INTERNAL;
      if (csr_scan_load (p, &res->scan, err) < 0)
        return req->silent_conf ? CSR_SNIPPET_BAD_INPUT : CSR_SNIPPET_INTERNAL;
      for (size_t i = 0; i < req->n_silent_patterns; i++)
        if (csr_scan_add (&res->scan, req->silent_patterns[i], err) < 0)
          {
            csr_error_wrap (err, "--silent-pattern");
            return CSR_SNIPPET_BAD_INPUT;
          }
    }
  if (!req->check_only && !req->no_heal)
    {
      cleanup_free char *p = NULL;
      if (policy_path (req->heal_conf, "heal.conf", &p, err) < 0)
        return CSR_SNIPPET_INTERNAL;
      if (csr_heal_conf_load (p, &res->heal, err) < 0)
        return req->heal_conf ? CSR_SNIPPET_BAD_INPUT : CSR_SNIPPET_INTERNAL;
    }
  /* Which model heals, if any (checking a snippet heals nothing). */
  if (!req->check_only && req->llm && csr_llm_config_resolve (req->llm, &res->llm, err) < 0)
    return CSR_SNIPPET_BAD_INPUT;
  return 0;
}

/* The cache directory (the request's, else csr_rootfs_cache_dir_from),
 * checked and created once for everything kept in it (rootfs trees, seccomp
 * programs, the compiled gate): *OUT is its canonical path, or NULL when it
 * can't be made here (then nothing is cached, or the rootfs names why).  A
 * directory that fails the trust check is refused: CSR_SNIPPET_INTERNAL. */
static int
trusted_cache_dir (const char *given, char **out, csr_error **err)
{
  *out = NULL;
  cleanup_free char *dflt = NULL;
  const char *dir = given, *source = NULL;
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
      return CSR_SNIPPET_INTERNAL;
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

/* --user: the ids inside map to the invoking user's subordinate ids. */
static int
map_user (const struct csr_snippet_request *req, struct jail_snippet *spec, csr_error **err)
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
  return csr_idmap_subordinate (spec, pw ? pw->pw_name : NULL, geteuid (), getegid (), subuid,
                                subgid, (uid_t)req->user_uid, (gid_t)req->user_gid, err);
}

/* The jail every attempt starts from: the rootfs, the environment, the
 * network, the id maps, the seccomp program. */
static int
base_spec (const struct csr_snippet_request *req, struct csr_snippet_result *res,
           const char *cache_dir, struct jail_snippet *spec, csr_error **err)
{
  cleanup_free char *rootfs_src = req->rootfs ? strdup (req->rootfs) : csr_find_rootfs ();
  if (rootfs_src == NULL)
    return csr_error_set (err, ENOMEM, "find the rootfs"), CSR_SNIPPET_INTERNAL;
  if (res->rootfs == NULL /* issue 17: preloaded */
      && csr_rootfs_resolve (rootfs_src, cache_dir, &res->rootfs, err) < 0)
    return CSR_SNIPPET_INTERNAL;
  /* --with: the package layer above the rootfs (built on a cache miss). */
  if (req->n_with > 0 && res->layer == NULL /* issue 17: preloaded */)
    {
      if (cache_dir == NULL)
        return csr_error_set (err, 0, "--with: no cache directory to keep the layer in"),
               CSR_SNIPPET_INTERNAL;
      int lr = csr_layer_ensure (res->rootfs->dir, res->rootfs->sha256, cache_dir, req->with,
                                 req->n_with, &res->layer, err);
      if (lr < 0)
        return lr == CSR_LAYER_BAD_PACKAGE ? CSR_SNIPPET_BAD_INPUT : CSR_SNIPPET_INTERNAL;
    }
  build_env (req, res);
  jail_snippet_init (spec);
  spec->jail.rootfs_dir = res->rootfs->dir;
  spec->jail.layer_dir = res->layer ? res->layer->dir : NULL;
  spec->envp = res->envp;
  spec->tmp_size = req->tmp_size;
  spec->host_net = req->host_net;
  if (req->user_uid && map_user (req, spec, err) < 0)
    return CSR_SNIPPET_INTERNAL;

  /* Seccomp: the default allowlist unless told otherwise; compiled BPF is cached. */
  if (res->seccomp) /* issue 17: preloaded */
    {
      spec->jail.seccomp_bpf = &res->seccomp->prog;
      res->seccomp_shown = res->seccomp->digest;
    }
  else if (req->seccomp == NULL || strcmp (req->seccomp, "unconfined") != 0)
    {
      cleanup_free char *sp = NULL;
      if (policy_path (req->seccomp, "seccomp/default.json", &sp, err) < 0)
        return CSR_SNIPPET_INTERNAL;
      int sr = csr_seccomp_load (sp, cache_dir, &res->seccomp, err);
      if (sr < 0)
        return req->seccomp && sr != CSR_TRUST_REFUSED ? CSR_SNIPPET_BAD_INPUT
                                                       : CSR_SNIPPET_INTERNAL;
      spec->jail.seccomp_bpf = &res->seccomp->prog;
      res->seccomp_shown = res->seccomp->digest;
    }
  else
    res->seccomp_shown = "unconfined";
  return 0;
}

/* issue 15: the spec of a launcher that brings its own jail and does not
 * take the precompiled gate (a sandbox's session): only what the loop reads
 * of it (the rootfs tree, for the healer; the environment). */
static int
light_spec (const struct csr_snippet_request *req, struct csr_snippet_result *res,
            struct jail_snippet *spec)
{
  build_env (req, res);
  jail_snippet_init (spec);
  spec->jail.rootfs_dir = req->rootfs;
  spec->envp = res->envp;
  return 0;
}

/* What the result says about the run as a whole, besides the loop's
 * attempts: what was asked (REQ) and what this run owns (the rootfs, the
 * seccomp program, the model).  Set before the loop, and again on the
 * fresh loop after a repair. */
static void
describe_run (const struct csr_snippet_request *req, struct csr_snippet_result *res)
{
  struct csr_run_result *r = &res->loop.result;
  r->limits = (struct csr_limits){
    .mechanism = "none",
    .memory_bytes = req->limits.memory,
    .timeout_s = req->timeout_s,
    .max_output = req->max_output,
    .tmp_size = req->tmp_size,
    .nofile = 1024,
    .pids = req->limits.pids,
    .cpu_millis = req->limits.cpu_millis,
    .seccomp = res->seccomp_shown,
  };
  if (res->rootfs)
    {
      r->rootfs_dir = res->rootfs->dir;
      r->rootfs_sha256 = res->rootfs->sha256;
      r->rootfs_unpacked = res->rootfs->unpacked_now;
    }
  r->layer = res->layer;
  if (res->repaired)
    {
      r->rootfs_repaired_files = res->damaged_files;
      r->rootfs_repaired_first = res->damaged_first;
    }
}

/* After the loop: the model it could use, how the limits were enforced
 * (the first attempt's), the wall time from T0. */
static void
describe_outcome (struct csr_snippet_result *res, const struct timespec *t0)
{
  struct csr_run_result *r = &res->loop.result;
  if (res->llm.provider)
    {
      r->llm_provider = res->llm.provider->name;
      r->llm_model = res->llm.model;
      r->llm_calls = res->llm_budget.calls;
      r->llm_max_calls = res->llm.max_calls;
    }
  if (r->n_attempts > 0)
    {
      const struct csr_limits_applied *ap = &r->attempts[0].limits;
      snprintf (res->mechanism, sizeof res->mechanism, "%s", ap->mechanism);
      r->limits.mechanism = res->mechanism;
      r->limits.memory_enforced = ap->memory;
      r->limits.memory_by_rlimit = ap->memory_by_rlimit;
      r->limits.pids_enforced = ap->pids;
      r->limits.cpu_enforced = ap->cpu;
      r->limits.warning
          = csr_limits_warning (&r->limits, res->limits_warning, sizeof res->limits_warning);
    }
  struct timespec t1;
  clock_gettime (CLOCK_MONOTONIC, &t1);
  r->duration_ms
      = (uint64_t)((t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000);
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
 * damaged, unpack it again and run everything once more on a fresh loop.
 * *RC and *ERR are the loop's; they are replaced by the new run's.  What was
 * found is in RES (damaged_files, repaired, repair_error) for the caller to
 * tell. */
static void
repair_and_rerun (const struct csr_snippet_request *req, struct csr_snippet_result *res,
                  const struct jail_snippet *spec, struct csr_loop_opts *lo, const char *cache_dir,
                  int *rc, csr_error **err)
{
  struct csr_tree_damage d;
  bool repaired = false;
  csr_error *e = NULL;
  int crc = csr_rootfs_check_repair (res->rootfs, &d, &repaired, &e);
  res->damaged_files = d.n;
  res->rootfs_dir = res->rootfs->dir;
  if (d.n > 0 && d.n_shown > 0 && (crc < 0 || repaired))
    res->damaged_first = strdup (d.shown[0]);
  csr_tree_damage_release (&d);
  if (crc < 0)
    {
      /* The original failure stays the result; the caller says why nothing
       * was fixed. */
      if (res->damaged_files > 0)
        res->repair_error = strdup (csr_error_text (e));
      csr_error_free (e);
      return;
    }
  if (!repaired)
    {
      res->damaged_files = 0;
      return;
    }
  res->repaired = true;

  /* Start over: a fresh loop, the gate compiled again by the repaired
   * interpreter. */
  csr_loop_release (&res->loop);
  memset (&res->loop, 0, sizeof res->loop);
  describe_run (req, res);
  csr_error_freep (err);
  if (res->gate_code_fd > 0)
    close (res->gate_code_fd);
  res->gate_code_fd = -1;
  if (csr_gate_code_fd (spec, cache_dir, &res->gate_code_fd, err) < 0)
    {
      *rc = -1;
      return;
    }
  lo->gate_code_fd = res->gate_code_fd;
  *rc = csr_loop_run (&res->loop, req->code, req->code_len, lo, err);
}

/* --in, --mount, --out: check what the request names, pack the inputs once,
 * give every attempt (*ATT, a copy of the base spec) the packs and binds. */
static int
files_setup (const struct csr_snippet_request *req, struct csr_snippet_result *res,
             struct jail_snippet *att, csr_error **err)
{
  if (req->n_mounts > sizeof res->binds / sizeof res->binds[0])
    return csr_error_set (err, E2BIG, "at most %zu --mount",
                          sizeof res->binds / sizeof res->binds[0]),
           CSR_SNIPPET_BAD_INPUT;
  if (csr_files_args_check (req->inputs, req->n_inputs, req->mounts, req->n_mounts, err) < 0)
    return CSR_SNIPPET_BAD_INPUT;
  for (size_t i = 0; i < req->n_mounts; i++)
    {
      const struct csr_mount_arg *m = &req->mounts[i];
      struct stat st;
      if (stat (m->src, &st) < 0)
        return csr_error_errno (err, "--mount %s", m->src), CSR_SNIPPET_BAD_INPUT;
      if (!S_ISDIR (st.st_mode))
        return csr_error_set (err, ENOTDIR, "--mount %s: not a directory", m->src),
               CSR_SNIPPET_BAD_INPUT;
      /* /data and /mnt must exist in the read-only rootfs to be mounted on. */
      const char *top = csr_path_under (m->dst, "/data")  ? "data"
                        : csr_path_under (m->dst, "/mnt") ? "mnt"
                                                          : NULL;
      if (top)
        {
          cleanup_free char *p = NULL;
          if (asprintf (&p, "%s/%s", res->rootfs->dir, top) < 0)
            return csr_error_set (err, ENOMEM, "--mount"), CSR_SNIPPET_INTERNAL;
          if (lstat (p, &st) < 0 || !S_ISDIR (st.st_mode))
            return csr_error_set (err, 0,
                                  "--mount %s:%s: this rootfs has no /%s directory to mount on: "
                                  "use a DST below /work",
                                  m->src, m->dst, top),
                   CSR_SNIPPET_BAD_INPUT;
        }
      res->binds[i] = (struct csr_jail_bind){ m->src, m->dst, m->rw };
    }
  att->binds = res->binds;
  att->n_binds = req->n_mounts;
  if (req->n_inputs > 0)
    {
      bool bad = false;
      if (csr_inputs_pack (req->inputs, req->n_inputs, req->in_max, req->tmp_size, att->tmp_inodes,
                           &res->files, &res->inputs_fd, &bad, err)
          < 0)
        return bad ? CSR_SNIPPET_BAD_INPUT : CSR_SNIPPET_INTERNAL;
      res->has_inputs_fd = true;
      att->has_inputs = true;
      att->in_fd = res->inputs_fd;
    }
  if (req->out_dir)
    {
      /* DIR, or its parent, must be there before anything runs. */
      struct stat st;
      if (stat (req->out_dir, &st) == 0 && !S_ISDIR (st.st_mode))
        return csr_error_set (err, 0, "--out %s: not a directory", req->out_dir),
               CSR_SNIPPET_BAD_INPUT;
      if (stat (req->out_dir, &st) < 0)
        {
          cleanup_free char *parent = strdup (req->out_dir);
          if (parent == NULL)
            return csr_error_set (err, ENOMEM, "--out"), CSR_SNIPPET_INTERNAL;
          char *slash = strrchr (parent, '/');
          while (slash && slash > parent && slash[1] == '\0')
            {
              *slash = '\0';
              slash = strrchr (parent, '/');
            }
          const char *pdir = slash == NULL ? "." : slash == parent ? "/" : (*slash = '\0', parent);
          if (stat (pdir, &st) < 0 || !S_ISDIR (st.st_mode))
            return csr_error_set (err, 0, "--out %s: its parent directory %s does not exist",
                                  req->out_dir, pdir),
                   CSR_SNIPPET_BAD_INPUT;
        }
      res->outputs_fd = memfd_create ("csrun-outputs", MFD_CLOEXEC);
      if (res->outputs_fd < 0)
        return csr_error_errno (err, "memfd_create"), CSR_SNIPPET_INTERNAL;
      res->has_outputs_fd = true;
      att->has_outputs = true;
      att->out_fd = res->outputs_fd;
      /* Copied: the jail's init reads them after it wiped its command
       * line (init.c), where the caller's strings may live. */
      res->out_globs = calloc (req->n_out_globs + 1, sizeof *res->out_globs);
      if (res->out_globs == NULL)
        return csr_error_set (err, ENOMEM, "copy --out-path"), CSR_SNIPPET_INTERNAL;
      for (size_t i = 0; i < req->n_out_globs; i++)
        if ((res->out_globs[i] = strdup (req->out_globs[i])) == NULL)
          return csr_error_set (err, ENOMEM, "copy --out-path"), CSR_SNIPPET_INTERNAL;
      att->out_globs = (const char *const *)res->out_globs;
      att->n_out_globs = req->n_out_globs;
      att->out_max = req->out_max;
    }
  return 0;
}

/* After the loop: the final attempt's files to --out DIR.  A DIR that can't
 * be written makes the run an error (status "error", exit 125). */
static void
files_deliver (const struct csr_snippet_request *req, struct csr_snippet_result *res)
{
  struct csr_run_result *r = &res->loop.result;
  if (!res->has_outputs_fd || r->n_attempts == 0 || r->status == CSR_STATUS_ERROR)
    {
      if (req->out_dir)
        res->files.out_dir = req->out_dir;
      return;
    }
  csr_error *e = NULL;
  if (csr_outputs_deliver (res->outputs_fd, req->out_dir, req->out_max, &res->files, &e) < 0)
    {
      res->outputs_error = strdup (csr_error_text (e));
      csr_error_free (e);
      r->status = CSR_STATUS_ERROR;
      r->error = res->outputs_error;
      return;
    }
  size_t over = 0;
  for (size_t i = 0; i < res->files.n_skipped; i++)
    if (strstr (res->files.skipped[i].reason, "--out-max"))
      over++;
  if (over > 0)
    csr_warn ("--out: %zu file%s over --out-max (%llu bytes) not delivered (see outputs_skipped "
              "in --json)",
              over, over == 1 ? "" : "s", (unsigned long long)req->out_max);
}

/* ---- issue 17: load once, run many (csrun batch) */
int
csr_snippet_preload (const struct csr_snippet_request *req, struct csr_snippet_result *res,
                     csr_error **err)
{
  int rc = load_policies (req, res, err);
  if (rc < 0)
    return rc;
  cleanup_free char *cache_dir = NULL;
  rc = trusted_cache_dir (req->cache_dir, &cache_dir, err);
  if (rc < 0)
    return rc;
  struct jail_snippet spec;
  rc = base_spec (req, res, cache_dir, &spec, err);
  if (rc < 0)
    return rc;
  if (csr_gate_code_fd (&spec, cache_dir, &res->gate_code_fd, err) < 0)
    return CSR_SNIPPET_INTERNAL;
  res->base = spec;
  res->cache_dir = steal_pointer (&cache_dir);
  /* Once for the whole batch; it also finds the cgroup hierarchies once
   * (mountinfo), which the forked workers inherit. */
  csr_cgroup_cleanup_stale ();
  return 0;
}

/* RES borrows P's policies, model, rootfs and seccomp program; the gate is
 * reopened (a file offset of its own: attempts seek it). */
static int
adopt_preloaded (const struct csr_snippet_result *p, struct csr_snippet_result *res,
                 char **cache_dir, csr_error **err)
{
  res->borrowed = true;
  res->policy = p->policy;
  res->scan = p->scan;
  res->heal = p->heal;
  res->llm = p->llm;
  res->rootfs = p->rootfs;
  res->seccomp = p->seccomp;
  res->layer = p->layer;
  if (p->cache_dir && (*cache_dir = strdup (p->cache_dir)) == NULL)
    return csr_error_set (err, ENOMEM, "out of memory"), CSR_SNIPPET_INTERNAL;
  if (p->gate_code_fd > 0)
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/self/fd/%d", p->gate_code_fd);
      res->gate_code_fd = open (path, O_RDONLY | O_CLOEXEC);
      if (res->gate_code_fd < 0)
        res->gate_code_fd = 0; /* compiled again by this run */
    }
  return 0;
}

int
csr_snippet_run (const struct csr_snippet_request *req, struct csr_snippet_result *res,
                 csr_error **err)
{
  struct timespec t0;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  describe_run (req, res);
  if (csr_snippet_check_code (req->name, req->code, req->code_len, err) < 0)
    return CSR_SNIPPET_BAD_INPUT;
  cleanup_free char *cache_dir = NULL;
  int rc = req->preloaded ? adopt_preloaded (req->preloaded, res, &cache_dir, err)
                          : load_policies (req, res, err);
  if (rc < 0)
    return rc;
  if (!req->preloaded)
    rc = trusted_cache_dir (req->cache_dir, &cache_dir, err);
  if (rc < 0)
    return rc;
  struct jail_snippet spec;
  const struct csr_launcher *L = req->launcher;
  bool for_jail = L == NULL || L->one_shot || L->gate_code;
  rc = for_jail ? base_spec (req, res, cache_dir, &spec, err) : light_spec (req, res, &spec);
  describe_run (req, res);
  if (rc < 0)
    return rc;

  /* The gate, precompiled for this rootfs (cached next to the rootfs trees). */
  if (for_jail && res->gate_code_fd <= 0
      && csr_gate_code_fd (&spec, cache_dir, &res->gate_code_fd, err) < 0)
    return CSR_SNIPPET_INTERNAL;

  /* The healers edit text and show it as UTF-8 (diffs, prompts, JSON): a
   * snippet in another encoding runs as it is. */
  if (!csr_utf8_valid (req->code, req->code_len))
    {
      char enc[64] = "";
      csr_pycoding_find (req->code, req->code_len, enc, sizeof enc);
      snprintf (res->no_heal_why, sizeof res->no_heal_why,
                "the snippet is not UTF-8 (coding: %s): csrun heals UTF-8 source only", enc);
    }
  /* Every attempt's jail: the base one with the files in and out. */
  struct jail_snippet att = spec;
  if (!req->check_only)
    {
      rc = files_setup (req, res, &att, err);
      res->loop.result.files = &res->files;
      if (rc < 0)
        return rc;
    }
  bool check = req->check_only;
  struct csr_loop_opts lo = {
    .base = &att,
    .args = req->args,
    .n_args = req->n_args,
    .capture = { .timeout_s = req->timeout_s,
                 .max_output = req->max_output,
                 .passthrough_out = check ? -1 : req->live_out,
                 .passthrough_err = check ? -1 : req->live_err,
                 .passthrough_termsafe_out = req->live_termsafe_out,
                 .passthrough_termsafe_err = req->live_termsafe_err,
                 .stdin_store = NULL,
                 .interrupt_fd = req->interrupt_fd,
                 .limits = &req->limits,
                 .launcher = L },
    .on_next_attempt = req->on_next_attempt,
    .on_next_attempt_data = req->on_next_attempt_data,
    .policy = &res->policy,
    .gate_code_fd = for_jail ? res->gate_code_fd : -1,
    .check_only = check,
    .scan = !check && !req->no_silent_scan ? &res->scan : NULL,
    .heal = !check && !req->no_heal && !res->no_heal_why[0] ? &res->heal : NULL,
    .llm = res->llm.provider ? &res->llm : NULL,
    .llm_budget = &res->llm_budget,
    .patch_cmd = check ? NULL : req->patch_cmd,
    .patch_timeout_s = req->patch_timeout_s,
    .max_code = req->max_code,
    .max_attempts = req->max_attempts,
    .no_heal_why = res->no_heal_why[0] ? res->no_heal_why : NULL,
  };
  if (req->stdin_fd >= 0 && !check)
    {
      csr_stdin_init (&res->stdin_store, req->stdin_fd, req->stdin_max);
      res->has_stdin = true;
      lo.capture.stdin_store = &res->stdin_store;
    }
  if (!req->preloaded && (L == NULL || L->one_shot)) /* issue 17: preload did it once */
    csr_cgroup_cleanup_stale ();
  rc = csr_loop_run (&res->loop, req->code, req->code_len, &lo, err);
  if (res->rootfs && res->rootfs->sha256 != NULL && failed_before_verdict (&res->loop.result, rc))
    repair_and_rerun (req, res, &spec, &lo, cache_dir, &rc, err);
  if (rc >= 0 && !check)
    {
      files_deliver (req, res);
      res->loop.result.files = &res->files;
    }
  describe_outcome (res, &t0);
  res->cache_dir = steal_pointer (&cache_dir);
  if (res->has_stdin)
    res->loop.result.stdin_store = &res->stdin_store;
  return rc < 0 ? CSR_SNIPPET_INTERNAL : 0;
}

void
csr_snippet_result_release (struct csr_snippet_result *res)
{
  csr_loop_release (&res->loop);
  if (!res->borrowed) /* issue 17: the preloaded result owns them */
    {
      csr_gate_policy_release (&res->policy);
      csr_scan_release (&res->scan);
      csr_heal_conf_release (&res->heal);
      csr_llm_config_release (&res->llm);
      csr_rootfs_free (res->rootfs);
      csr_layer_free (res->layer);
      csr_seccomp_free (res->seccomp);
    }
  if (res->gate_code_fd > 0)
    close (res->gate_code_fd);
  for (char **p = res->owned_env; *p; p++)
    free (*p);
  free (res->damaged_first);
  free (res->repair_error);
  free (res->cache_dir);
  if (res->has_stdin)
    csr_stdin_release (&res->stdin_store);
  if (res->has_inputs_fd)
    close (res->inputs_fd);
  if (res->has_outputs_fd)
    close (res->outputs_fd);
  csr_files_report_release (&res->files);
  free (res->outputs_error);
  for (char **g = res->out_globs; g && *g; g++)
    free (*g);
  free (res->out_globs);
}
