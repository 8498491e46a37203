/* csrun — options of `csrun run` and `csrun check`. */
#ifndef CSRUN_RUN_OPTS_H
#define CSRUN_RUN_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llm/llm.h"
#include "supervisor/snippet.h"

#define CSR_MAX_ENV CSR_SNIPPET_MAX_ENV
#define CSR_MAX_LIST 64

/* What `csrun run` and `csrun check` were asked: the snippet pipeline's
 * request, filled in place by the parser (its defaults are the library's),
 * and what only the command line has. */
struct run_opts
{
  struct csr_snippet_request req;  /* name and code: the front end reads FILE */
  struct csr_llm_select llm;       /* req.llm points here (see csrun-run(1), LLM HEALING) */
  const char *env[CSR_MAX_ENV];    /* req.env: "KEY=VALUE" or "KEY" (copy from the host) */
  const char *allow[CSR_MAX_LIST]; /* req.allow */
  const char *silent_patterns[CSR_MAX_LIST]; /* req.silent_patterns */
  const char *with[CSR_MAX_LIST];            /* req.with: package layers */
  bool json;
  bool quiet;
  bool raw_output; /* the snippet's output to a terminal as it is (not neutralised) */
  const char *net; /* "none" (default) or "host" (req.host_net) */
  bool allow_host_net;
  const char *file; /* FILE or "-" */
  /* --label TEXT: copied into the result document (at most 256 bytes of
   * UTF-8, no control characters). */
  const char *label;
  /* issue 14: standard input and live output. */
  const char *stdin_file; /* --stdin FILE or "-" (-i) */
  bool live, no_live;
  void (*after_read) (void); /* called once FILE was read (csr_run_snippet_file) */
  /* issue 15: csrun sandbox run shares csrun run's body (csr_run_main) with
   * these (NULL: csrun run's own behaviour).  READ_CODE reads the snippet
   * (0, or an exit code with *ERR); FAILED gives the exit code of a failure
   * of the run (*ERR; CODE the default); AFTER_RUN runs before the result
   * is printed (0, or the exit code to use), AFTER_PRINT at the end of the
   * output; SANDBOX goes into the result. */
  int (*read_code) (struct run_opts *o, const char *name, char **code, size_t *len,
                    csr_error **err);
  int (*failed) (struct run_opts *o, csr_error *err, int code);
  int (*after_run) (struct run_opts *o, struct csr_snippet_result *res);
  void (*after_print) (struct run_opts *o, const struct csr_run_result *r); /* not --json */
  const struct csr_sandbox_report *sandbox;
  void *hook_data;
  /* issue 18: with NOTE set, run_opts_batch_argp also keeps every option
   * it parses as "--name=value" (or "--name") in NOTED (malloc'ed, N_NOTED
   * of them): csrun mcp hands the pipeline's to csrun sandbox run. */
  bool note;
  char **noted;
  size_t n_noted;
};

/* Parse ARGV (ARGV[0] is "csrun run" or "csrun check").  Prints --help and
 * exits 0; prints a one-line error and exits 2 on bad usage.  CHECK selects
 * the smaller option set of `csrun check`. */
void run_opts_parse (int argc, char **argv, struct run_opts *o);
void check_opts_parse (int argc, char **argv, struct run_opts *o);

/* issue 17: csrun batch.  The defaults (what the parsers start from), and
 * the options of `csrun run` but FILE, --json and --label as an argp child
 * whose input is a struct run_opts. */
void run_opts_defaults (struct run_opts *o);
struct argp;
/* A usage error "invalid --OPT: E's message" (E freed), as these options
 * report a bad value; for the options of the commands that take them
 * (batch, mcp) too. */
struct argp_state;
void run_opts_bad_value (struct argp_state *state, const char *opt, csr_error *e);
extern const struct argp run_opts_batch_argp;

/* issue 15: csrun sandbox run: the options of `csrun run` that apply to an
 * attempt in a sandbox (not those of the jail it brings: its rootfs,
 * limits, seccomp, network, ids, files), without FILE, as an argp child
 * whose input is a struct run_opts. */
const struct argp *run_opts_sandbox_argp (void);

/* issue 18: the options noted (NOTE) that csrun sandbox run takes too
 * (those of the pipeline, not of the jail), but those named in SKIP
 * ("timeout", ...; NULL-terminated): a NULL-terminated array of O's
 * strings (free the array, not them), NULL when out of memory. */
const char **run_opts_sandbox_args (const struct run_opts *o, const char *const *skip);
/* Free what NOTE kept. */
void run_opts_release_noted (struct run_opts *o);

#define CSR_LABEL_MAX 256
/* Why TEXT is not a valid --label, or NULL. */
const char *csr_label_problem (const char *text);

#endif
