/* csrun — helpers shared by the front ends that run snippets. */
#ifndef CSRUN_COMMON_H
#define CSRUN_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "jail/seccomp.h"
#include "llm/llm.h"
#include "rootfs/rootfs.h"
#include "supervisor/limits.h"
#include "run-opts.h"
#include "supervisor/loop.h"
#include "supervisor/result.h"
#include "util/error.h"

/* Everything one `csrun run` / `csrun check` owns. Zero-initialise. */
struct csr_snippet_run
{
  char *code;
  size_t code_len;
  struct csr_gate_policy policy;
  struct csr_scan scan;
  struct csr_heal_conf heal;
  struct csr_rootfs *rootfs;
  struct csr_seccomp *seccomp;
  struct csr_limits_request limits;
  char mechanism[32];
  int gate_code_fd; /* > 0 when open (0 is never a memfd of ours: fds 0-2 are kept open) */
  char *envp[CSR_MAX_ENV + 16];
  char *owned_env[CSR_MAX_ENV + 1];
  struct csr_loop loop;
  struct csr_llm_config llm;
  struct csr_llm_budget llm_budget;
  char *rootfs_repaired_first; /* the rootfs tree was repaired: its first damage */
  char no_heal_why[160];       /* non-empty: why the snippet is not healed (not UTF-8) */
};

/* Read the snippet, load the policies, resolve the rootfs, run the loop.
 * Returns 0 (the outcome is in S->loop.result) or an exit code with *ERR set:
 * CSR_EXIT_USAGE for bad input, CSR_EXIT_INTERNAL when csrun failed. */
int csr_execute (struct run_opts *o, bool check_only, struct csr_snippet_run *s, csr_error **err);
void csr_snippet_run_release (struct csr_snippet_run *s);
/* Print "PROG: message" (and, with --json and CODE 125, a status "error"
 * document); frees nothing; returns CODE. */
int csr_report_failure (const char *prog, const struct run_opts *o, struct csr_run_result *r,
                        csr_error *e, int code);

/* The default rootfs: $CSRUN_ROOTFS, next to the binary, ../share/csrun, $(pkgdatadir). */
char *csr_find_rootfs (void);
/* A policy file: $CSRUN_POLICY_DIR/NAME, else policies/NAME next to the binary,
 * ../share/csrun/policies, $(pkgdatadir)/policies. */
char *csr_find_policy (const char *name);
/* Read and check the snippet: a problem is a usage error (exit 2). */
int csr_read_snippet (const struct run_opts *o, char **code, size_t *len, csr_error **err);
/* The jail's environment: the allowlist, then --env. OWNED collects strings to free. */
size_t csr_build_env (const struct run_opts *o, char **envp, char **owned, size_t cap);
/* csrun's own lines on stderr: "PROG: TEXT\n" (printf-style).  When stderr is
 * a terminal, TEXT is rendered by csr_termsafe (it may quote the snippet) and
 * PROG is shown in reverse video, which no rendered snippet output can
 * contain (TERM=dumb: no mark).  Starts a new line first when the snippet's
 * output left the line open (see csr_say_after). */
#define CSR_SAY_MARK_ON "\x1b[7m"
#define CSR_SAY_MARK_OFF "\x1b[27m"
void csr_say (const char *prog, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* After printing the snippet's output: the last byte csr_capture_print wrote
 * to stdout and to stderr (-1: none). */
void csr_say_after (int out_last, int err_last);
/* isatty (FD): output to FD is neutralised unless --raw-output. */
bool csr_stream_is_terminal (int fd);
int csr_exit_code_for (const struct csr_run_result *r);
void csr_print_json (const struct csr_run_result *r);

#endif
