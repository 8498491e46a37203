/* csrun — the snippet pipeline as one library call: a typed request (the
 * code, the policies, the limits, the LLM selection, where the caches are)
 * in, the result of the healing loop out.  `csrun run`, `csrun check` and
 * `csrun hook` call it; so will sandboxes, batch and the MCP server.  Nothing
 * here prints (but through log.c) or knows about command lines. */
#ifndef CSRUN_SNIPPET_H
#define CSRUN_SNIPPET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../jail/seccomp.h"
#include "../jail/spec.h"
#include "../llm/llm.h"
#include "../rootfs/layer.h"
#include "../rootfs/rootfs.h"
#include "../util/error.h"
#include "../util/filearg.h"
#include "files.h"
#include "gate.h"
#include "heal.h"
#include "launcher.h"
#include "limits.h"
#include "loop.h"
#include "result.h"
#include "scan.h"

#define CSR_SNIPPET_MAX_ENV 256

/* csr_snippet_run's failures (negative, *ERR says what): the request or
 * a file it names is wrong, or csrun itself failed. */
enum
{
  CSR_SNIPPET_INTERNAL = -1,
  CSR_SNIPPET_BAD_INPUT = -2,
};

/* What to run and how.  csr_snippet_request_init gives the defaults of
 * `csrun run`; every pointer is borrowed for the duration of the call. */
struct csr_snippet_request
{
  const char *name; /* the snippet in messages ("standard input", a path) */
  const char *code; /* checked: not blank, no NUL, UTF-8 or a PEP 263 coding */
  size_t code_len;
  char **args; /* sys.argv[1:] */
  int n_args;
  bool check_only; /* the gate's verdict only (csrun check): no scan, heal, LLM */

  /* The jail's environment: the default allowlist, then these "KEY=VALUE"
   * or "KEY" (the process's value) entries; a later KEY replaces one before. */
  const char *const *env;
  size_t n_env;

  /* Policies: NULL is the default file (csr_find_policy).  A file named
   * here that is broken is CSR_SNIPPET_BAD_INPUT, a broken default one
   * CSR_SNIPPET_INTERNAL. */
  const char *gate_conf;
  const char *const *allow; /* gate rules switched off, call:NAME allowed */
  size_t n_allow;
  bool no_silent_scan;
  const char *silent_conf;
  const char *const *silent_patterns;
  size_t n_silent_patterns;
  bool no_heal;
  const char *heal_conf;
  const struct csr_llm_select *llm; /* which model heals; NULL: none */
  const char *patch_cmd;            /* NULL: none */
  double patch_timeout_s;
  uint64_t max_code; /* a patch is at most this (0: no bound) */
  int max_attempts;  /* 1..CSR_MAX_ATTEMPTS */

  /* --with: Debian packages in a layer above the rootfs (rootfs/layer.h),
   * built on a cache miss; a package apt can't get is CSR_SNIPPET_BAD_INPUT. */
  const char *const *with;
  size_t n_with;

  /* The jail. */
  const char *rootfs;          /* a tarball or a directory; NULL: csr_find_rootfs */
  const char *cache_dir;       /* NULL: csr_rootfs_cache_dir_from */
  const char *seccomp;         /* an OCI profile, "unconfined", NULL: the default */
  bool host_net;               /* the host's network (the caller decided it means it) */
  uint32_t user_uid, user_gid; /* ids inside, mapped to subordinate ids; 0: not asked */
  double timeout_s;            /* per attempt */
  uint64_t max_output;         /* per stream */
  uint64_t tmp_size;
  struct csr_limits_request limits;

  /* issue 14.  STDIN_FD (borrowed; -1 by default: /dev/null) is read lazily
   * and kept (at most STDIN_MAX bytes) so that every attempt reads the same
   * input.  LIVE_OUT/LIVE_ERR (-1 by default): stream each attempt's
   * stdout/stderr there as it comes (rendered by csr_termsafe when
   * LIVE_TERMSAFE_*); ON_NEXT_ATTEMPT is called before a healed attempt.
   * INTERRUPT_FD (-1: none): readable = stop the jail, heal nothing (see
   * csr_capture_opts). */
  int stdin_fd;
  uint64_t stdin_max;
  int live_out, live_err;
  bool live_termsafe_out, live_termsafe_err;
  void (*on_next_attempt) (void *data, const struct csr_attempt *failed, int next);
  void *on_next_attempt_data;
  int interrupt_fd;
  /* Files in and out (csrun-run(1), FILES IN AND OUT): --in copies, packed
   * once; --mount binds; --out DIR gets the final attempt's /work (or what
   * OUT_GLOBS select), at most OUT_MAX bytes. */
  const struct csr_in_arg *inputs;
  size_t n_inputs;
  uint64_t in_max;
  const struct csr_mount_arg *mounts;
  size_t n_mounts;
  const char *out_dir; /* NULL: nothing is copied out */
  const char *const *out_globs;
  size_t n_out_globs;
  uint64_t out_max;
  /* issue 17 (csrun batch): what csr_snippet_preload made once for many
   * runs (NULL: everything is loaded by this call).  The policies, the
   * model, the cache directory, the rootfs, the seccomp program and the
   * compiled gate are then taken from it, so the fields that decide them
   * (gate_conf, allow, silent_*, heal_conf, llm, cache_dir, rootfs,
   * seccomp, check_only, no_heal, no_silent_scan) must be the ones it was
   * made with. */
  const struct csr_snippet_result *preloaded;
  /* issue 15: how each attempt is started (launcher.h); NULL: a one-shot
   * jail.  A launcher that is not one-shot brings its own limits, seccomp
   * and environment (a sandbox's): ROOTFS is then the directory of its tree
   * (the healer looks for modules there), and unless it takes the
   * precompiled gate nothing is prepared for a jail (no seccomp program, no
   * cgroup clean-up). */
  const struct csr_launcher *launcher;
};

/* What one call owns: the outcome is RES->loop.result, which points into
 * the rest (the policies, the rootfs, the LLM configuration). */
struct csr_snippet_result
{
  struct csr_loop loop;
  /* The cached rootfs tree was found damaged after a jail failed before
   * the gate's verdict (damaged_files > 0): unpacked again and the run
   * started over (repaired), or not (repair_error says why). */
  size_t damaged_files;
  char *damaged_first; /* "PATH: what differed", or NULL */
  bool repaired;
  char *repair_error;
  const char *rootfs_dir; /* for the message: the tree's directory */
  char *cache_dir;        /* the cache directory used (checked), or NULL */

  /* Private to snippet.c. */
  struct csr_gate_policy policy;
  struct csr_scan scan;
  struct csr_heal_conf heal;
  struct csr_rootfs *rootfs;
  struct csr_layer *layer; /* --with's, or NULL */
  struct csr_seccomp *seccomp;
  const char *seccomp_shown; /* its digest, "unconfined", NULL: not decided yet */
  struct csr_llm_config llm;
  struct csr_llm_budget llm_budget;
  char mechanism[32];
  int gate_code_fd; /* > 0 when open */
  char *envp[CSR_SNIPPET_MAX_ENV + 16];
  char *owned_env[CSR_SNIPPET_MAX_ENV + 1];
  char no_heal_why[160];
  char limits_warning[200];
  struct csr_stdin stdin_store; /* when the request has a stdin_fd */
  bool has_stdin;
  /* Files in and out: the report (the result points to it), the packs. */
  struct csr_files_report files;
  bool has_inputs_fd, has_outputs_fd;
  int inputs_fd, outputs_fd;
  struct csr_jail_bind binds[16];
  char *outputs_error;
  char **out_globs; /* the request's, copied (NULL-terminated) */
  bool borrowed;    /* issue 17: the policies, rootfs, seccomp are the preloaded result's */
  /* issue 17: the jail every attempt starts from, as csr_snippet_preload
   * made it (a warm pool's zygotes start from it, pool.h). */
  struct jail_snippet base;
};

/* The defaults of `csrun run`: 60 s, 512 MiB, 128 pids, one CPU, 1 MiB of
 * output per stream, 64 MiB tmpfs, 1 MiB of code, 3 attempts. */
void csr_snippet_request_init (struct csr_snippet_request *req);

/* Check REQ's code, load the policies, resolve the rootfs, run the loop.
 * 0: the outcome (whatever it is) is in RES->loop.result.  Negative
 * (CSR_SNIPPET_BAD_INPUT, CSR_SNIPPET_INTERNAL) with *ERR set: nothing ran
 * to a verdict; RES->loop.result still holds what was known (the limits).
 * RES must be zeroed before; release it with csr_snippet_result_release
 * either way. */
int csr_snippet_run (const struct csr_snippet_request *req, struct csr_snippet_result *res,
                     csr_error **err);
void csr_snippet_result_release (struct csr_snippet_result *res);

/* issue 15: the default environment of every jail (PATH, HOME=/work, LANG,
 * TMPDIR, PYTHONUNBUFFERED, PYTHONDONTWRITEBYTECODE): *N entries. */
const char *const *csr_snippet_default_env (size_t *n);
/* issue 17: load once what every run of REQ shares (see the request's
 * PRELOADED): the policies, the model, the cache directory, the rootfs (unpacked
 * when needed), the seccomp program, the compiled gate.  For a process that
 * then forks one worker per snippet: each worker's csr_snippet_run reopens
 * the gate (its own file offset) and must not release what it borrowed (a
 * worker's result is released by exiting).  Errors as csr_snippet_run's;
 * release RES with csr_snippet_result_release. */
int csr_snippet_preload (const struct csr_snippet_request *req, struct csr_snippet_result *res,
                         csr_error **err);

/* The rules a snippet's bytes follow (NAME in messages): not blank, no
 * NUL, UTF-8 or the encoding a PEP 263 declaration names. */
int csr_snippet_check_code (const char *name, const char *code, size_t len, csr_error **err);

#endif
