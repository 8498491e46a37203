/* csrun — the result of a run, and its stable JSON form (version 1). */
#ifndef CSRUN_RESULT_H
#define CSRUN_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "bbuf.h"
#include "classify.h"
#include "files.h"
#include "gate.h"
#include "heal.h"
#include "limits.h"
#include "outseq.h"
#include "stdin.h"

enum csr_status
{
  CSR_STATUS_OK,
  CSR_STATUS_HEALED,
  CSR_STATUS_FAILED,
  CSR_STATUS_BLOCKED,
  CSR_STATUS_TIMEOUT,
  CSR_STATUS_ERROR,
  CSR_STATUS_INTERRUPTED, /* csrun got SIGINT, SIGTERM or SIGHUP: the jail was stopped */
};
const char *csr_status_name (enum csr_status s);

struct csr_attempt
{
  int number;           /* 1-based */
  char code_sha256[65]; /* digest of the code this attempt ran */
  bool exited;          /* exit_code valid */
  int exit_code;
  int signal; /* 0 if none */
  bool timed_out;
  struct csr_bbuf out, err;
  uint64_t duration_ms;
  uint64_t cpu_ms;
  uint64_t peak_memory_kib;         /* largest resident set of a jail process (rusage), or the
                                       cgroup's peak when it has one */
  bool oom_killed;                  /* the kernel killed something in the jail for memory */
  struct csr_limits_applied limits; /* how this attempt's limits were enforced */

  /* Filled by the healing loop; a NULL pointer is left out of the JSON. */
  const struct csr_gate_verdict *gate; /* the gate's verdict on this code */
  bool scanned;                        /* the silent-failure scan ran (exit status 0) */
  bool silent_failure;
  const char *silent_pattern;
  const char *silent_line;
  const struct csr_diagnosis *diagnosis; /* why this attempt failed */
  const struct csr_patch *patch;         /* the fix made after it, run by the next attempt */
  const char *patch_none;                /* why no fix was made, when none was */
  bool healing;     /* a healing step ran after this attempt (heal_ms is set) */
  uint64_t heal_ms; /* its wall time: local rules, model requests, --patch-cmd, the gate's
                       check of a model's patch, the diff (not part of duration_ms) */

  /* issue 14: standard input, interruption, the order of the output. */
  bool stdin_given;        /* the payload read a kept stdin (not /dev/null) */
  uint64_t stdin_consumed; /* bytes of it the payload read */
  int interrupted;         /* the signal that stopped this attempt; 0: none */
  struct csr_outseq seq;   /* stdout and stderr chunks in arrival order */

  /* issue 17: this attempt ran in the jail and interpreter of the one before,
   * whose code the gate stopped before it ran ("reused_jail"). */
  bool reused_jail;
  /* issue 17, the warm pool (pool.h): this attempt ran in a warm jail
   * ("warm_jail"); or one was refused, why ("warm_refused"), and it ran in a
   * one-shot jail. */
  bool warm_jail;
  char warm_refused[200];
};

struct csr_limits
{
  const char *mechanism; /* how the first attempt's limits were enforced */
  uint64_t memory_bytes; /* requested */
  bool memory_enforced;
  bool memory_by_rlimit;
  uint64_t pids;
  bool pids_enforced;
  uint64_t cpu_millis;
  bool cpu_enforced;
  const char *seccomp; /* profile digest, "unconfined", or NULL (not reported) */
  double timeout_s;
  uint64_t max_output; /* per stream */
  uint64_t tmp_size;
  uint64_t nofile;
  /* Limits weaker than a cgroup, or not enforced: what `csrun run` warns
   * about (limits.warning in the JSON, always); NULL: none. */
  const char *warning;
};

struct csr_layer;

struct csr_run_result
{
  enum csr_status status;
  struct csr_attempt *attempts;
  size_t n_attempts;
  struct csr_limits limits;
  uint64_t duration_ms;
  const char *rootfs_sha256; /* may be NULL (directory rootfs) */
  const char *rootfs_dir;
  bool rootfs_unpacked; /* cold cache: this run unpacked the tarball */
  /* The tree was found damaged after a jail failed before the gate's
   * verdict, and unpacked again (then the run started over). */
  size_t rootfs_repaired_files;      /* damaged entries; 0: no repair */
  const char *rootfs_repaired_first; /* "PATH: what differed" */
  const struct csr_layer *layer;     /* --with's package layer, or NULL: "layer" */
  const char *error;                 /* status "error": what failed in csrun itself */
  int max_attempts;
  const struct csr_diagnosis *diagnosis; /* the final attempt's, when it failed */
  const char *final_code;                /* the program that ran last, when it was healed */
  /* The LLM healing could use (NULL: none configured): "llm" in the JSON. */
  const char *llm_provider;
  const char *llm_model;
  int llm_calls; /* HTTP requests made in this run */
  int llm_max_calls;
  /* What was run, for a reader of many results (one.jsonl): "file" (the
   * snippet's path or "-"), "args" (its sys.argv[1:]) and "label" (--label;
   * NULL: the field is left out).  NULL file: none of the three is written. */
  const char *file;
  char *const *args;
  size_t n_args;
  const char *label;
  /* issue 14: the kept standard input (NULL: the snippet had /dev/null),
   * and the signal that interrupted the run (status "interrupted"). */
  const struct csr_stdin *stdin_store;
  int interrupt_signal;
  /* --in, --out: "inputs", "outputs", "outputs_skipped" (NULL: none asked). */
  const struct csr_files_report *files;
  /* issue 15: csrun sandbox run: "sandbox", "session", "write_back" (NULL: none). */
  const struct csr_sandbox_report *sandbox;
};

/* issue 15: where `csrun sandbox run` ran (csrun-sandbox(1), RUN). */
struct csr_sandbox_report
{
  const char *id;         /* "sandbox": the sandbox's id */
  const char *session;    /* "session": {"name", "cell", "started", "lost"}; NULL: none */
  long long cell;         /* the session's count of cells after this run */
  bool session_started;   /* this run started the session's interpreter */
  bool session_lost;      /* the session died during this run */
  const char *path;       /* "write_back": the snippet was this file of the sandbox; NULL: no */
  bool written;           /* its healed version replaced it */
  const char *write_note; /* why it was not (or what failed); NULL when written */
};

/* Serialise to JSON (one object, newline-terminated).  Output bytes that are
 * not valid UTF-8 are replaced by U+FFFD so the document is always valid JSON. */
int csr_result_to_json (const struct csr_run_result *r, char **out, size_t *len, csr_error **err);

#endif
