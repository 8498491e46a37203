/* csrun — the self-healing loop: gate + run, scan, diagnose, heal, retry. */
#ifndef CSRUN_LOOP_H
#define CSRUN_LOOP_H

#include <stdbool.h>
#include <stddef.h>

#include "../jail/spec.h"
#include "../llm/llm.h"
#include "../util/error.h"
#include "capture.h"
#include "classify.h"
#include "gate.h"
#include "heal.h"
#include "result.h"
#include "scan.h"

#define CSR_MAX_ATTEMPTS 10

struct csr_loop_opts
{
  const struct jail_snippet *base; /* rootfs, environment, sizes; argv and files are the loop's */
  char **args;                     /* the snippet's sys.argv[1:] */
  int n_args;
  struct csr_capture_opts capture; /* per attempt; nothing is streamed */
  const struct csr_gate_policy *policy;
  int gate_code_fd;                  /* csr_gate_code_fd(), or -1: the gate compiles itself */
  bool check_only;                   /* csrun check: gate only, one attempt */
  const struct csr_scan *scan;       /* NULL: no silent-failure scan */
  const struct csr_heal_conf *heal;  /* NULL: no local healing */
  const struct csr_llm_config *llm;  /* NULL or no provider: no LLM */
  struct csr_llm_budget *llm_budget; /* the run's call count (required with llm) */
  const char *patch_cmd;             /* NULL: none */
  double patch_timeout_s;
  size_t max_code; /* --max-code-size: a model's or --patch-cmd's patch is at most this (0: none) */
  int max_attempts; /* 1..CSR_MAX_ATTEMPTS */

  /* Non-NULL: heal nothing and say this (the code is not UTF-8). */
  const char *no_heal_why;

  /* issue 14: called before attempt NEXT (2, 3, ...) runs, after attempt
   * FAILED (its patch, or NULL when the same code runs again): a front end
   * streaming the output live prints a separator.  NULL: nothing. */
  void (*on_next_attempt) (void *data, const struct csr_attempt *failed, int next);
  void *on_next_attempt_data;

  /* issue 17: set by csr_loop_run (callers leave it NULL): where the jail
   * the last attempt left waiting is (capture.h, csr_capture_run_kept). */
  struct csr_gated_jail **kept;
};

struct csr_loop
{
  struct csr_run_result result; /* attempts point into the arrays below */
  struct csr_attempt attempts[CSR_MAX_ATTEMPTS];
  struct csr_gate_verdict verdicts[CSR_MAX_ATTEMPTS];
  struct csr_diagnosis diagnoses[CSR_MAX_ATTEMPTS];
  struct csr_patch patches[CSR_MAX_ATTEMPTS];
  char *silent_lines[CSR_MAX_ATTEMPTS];
  char *codes[CSR_MAX_ATTEMPTS]; /* the code each attempt ran */
  char *hints[CSR_MAX_ATTEMPTS]; /* ModuleNotFoundError hints (pkghint.c) a diagnosis points to */
  char *error;
  bool patched; /* some attempt ran healed code */
};

/* Run CODE through the loop; fills L->result (status, attempts, diagnosis).
 * Returns -1 only when csrun itself failed before any verdict (L->result is
 * then status "error" with the reason). */
int csr_loop_run (struct csr_loop *l, const char *code, size_t len, const struct csr_loop_opts *o,
                  csr_error **err);
void csr_loop_release (struct csr_loop *l);

#endif
