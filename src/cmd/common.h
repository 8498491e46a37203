/* csrun — helpers shared by the front ends that run snippets. */
#ifndef CSRUN_COMMON_H
#define CSRUN_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "run-opts.h"
#include "supervisor/result.h"
#include "supervisor/snippet.h"
#include "util/datadir.h"
#include "util/error.h"

/* Read FILE (O->file), check the options that only the command line has
 * (--net host needs --allow-host-net), and run the snippet pipeline with
 * O->req (csr_snippet_run).  PROG ("csrun run", "csrun check") starts the
 * lines about a damaged cached rootfs, printed here.  Returns 0 (the outcome
 * is in RES->loop.result) or an exit code with *ERR set: CSR_EXIT_USAGE for
 * bad input, CSR_EXIT_INTERNAL when csrun failed.  Release RES either way. */
int csr_run_snippet_file (const char *prog, struct run_opts *o, struct csr_snippet_result *res,
                          csr_error **err);
/* csrun run after its options were parsed into O (issue 15: csrun sandbox
 * run, PROG in messages, shares it with O's hooks): standard input, live
 * output, signals, the pipeline, the output and the exit code. */
int csr_run_main (const char *prog, struct run_opts *o);
/* What csr_snippet_run found about the cached rootfs (RES->damaged_files),
 * in one line on stderr: "PROG: the cached rootfs DIR was damaged (...)". */
void csr_say_rootfs_damage (const char *prog, const struct csr_snippet_result *res);
/* Print "PROG: message" (and, with --json and CODE 125, a status "error"
 * document); frees nothing; returns CODE. */
int csr_report_failure (const char *prog, const struct run_opts *o, struct csr_run_result *r,
                        csr_error *e, int code);

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
/* Print the result document with one write(2); -1 (reported on stderr) when
 * it could not be written. */
int csr_print_json (const struct csr_run_result *r);

#endif
