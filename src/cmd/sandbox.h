/* csrun sandbox: the subcommands' shared helpers (sandbox.c). */
#ifndef CSRUN_CMD_SANDBOX_H
#define CSRUN_CMD_SANDBOX_H

#include <argp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "util/error.h"

/* Exit codes of csrun sandbox (csrun-sandbox(1) EXIT STATUS). */
enum
{
  SBX_EXIT_REFUSED = 1, /* rm of a running sandbox, exec into a stopped one, ... */
  SBX_EXIT_DAMAGED = 4, /* restore: the checkpoint is damaged or forged */
};

/* Print "csrun sandbox CMD: message" (frees E) and return CODE. */
int sbx_fail (const char *cmd, csr_error *e, int code);
/* The sandbox directory (its fd), after collecting dead sandboxes; on an
 * error prints it and returns -1 with *CODE the exit code. */
int sbx_root (const char *cmd, int *code);
/* ID_OR_NAME's state directory fd (*ID its id); -1 printed, *CODE set. */
int sbx_open (const char *cmd, int rootfd, const char *id_or_name, char *id, int *code);
/* Both: sbx_root, then ID_OR_NAME's state directory fd. */
int sbx_enter (const char *cmd, const char *id_or_name, char *id, int *code);

/* T (unix seconds) as 2026-12-01T10:00:00Z into BUF. */
void sbx_fmt_time (int64_t t, char *buf, size_t n);

/* The arguments of the sandbox commands, in their argp parsers (usage
 * errors, exit 2).  sbx_arg_id: ARG is the one ID (or name) a command takes
 * into *ID, unless it has one already or TAKES_ID is false ("unexpected
 * argument"); sbx_arg_extra: ARG is one too many; sbx_need_id: at the end,
 * "missing the sandbox's ID (or name)" when ID is NULL; sbx_check_name: a
 * valid --name. */
void sbx_arg_id (struct argp_state *state, char *arg, const char **id, bool takes_id);
void sbx_arg_extra (struct argp_state *state, const char *arg);
void sbx_need_id (struct argp_state *state, const char *id);
void sbx_check_name (struct argp_state *state, const char *name);

/* Print ID, or with JSON {"id": ID, "ok": true}, and flush: 0 or the exit
 * code. */
int sbx_print_done (const char *id, bool json);

/* --env ARG (KEY=VALUE) appended to ENV (*N_ENV of at most
 * CSR_SANDBOX_MAX_ENV); a usage error otherwise (exit 2). */
void sbx_parse_env (struct argp_state *state, char *arg, const char **env, size_t *n_env);

/* Print the JSON document of W (rendered inert on a terminal) and a
 * newline; 0 or the exit code (printed). */
struct csr_jgen;
int sbx_print_doc (struct csr_jgen *w, const char *cmd);
/* The same as it is, even on a terminal (a document that only holds what
 * the keeper reported): WHAT names it in an error. */
int sbx_print_json (struct csr_jgen *w, const char *cmd, const char *what);
/* The sandboxes, as `csrun sandbox ls` lists them (without an ID). */
int sbx_list_sandboxes (bool json);

int cmd_sandbox_exec (int argc, char **argv);
/* sandbox-files.c */
int cmd_sandbox_cp (int argc, char **argv);
int cmd_sandbox_read (int argc, char **argv);
int cmd_sandbox_write (int argc, char **argv);
int cmd_sandbox_ls (int argc, char **argv);
int cmd_sandbox_find (int argc, char **argv);
int cmd_sandbox_run (int argc, char **argv);     /* issue 15: sandbox-run.c */
int cmd_sandbox_session (int argc, char **argv); /* issue 15: sandbox-run.c */

/* sandbox-ports.c: --publish (UPSTREAM false) or --upstream ARG added to
 * S; a usage error otherwise. */
struct csr_sandbox_spec;
void sbx_parse_port (struct argp_state *state, const char *arg, bool upstream,
                     struct csr_sandbox_spec *s);
/* At the end of create's options: --net host, a wildcard address. */
void sbx_check_ports (struct argp_state *state, const struct csr_sandbox_spec *s,
                      bool allow_all_interfaces);
int cmd_sandbox_port (int argc, char **argv);
int cmd_sandbox_checkpoint (int argc, char **argv);
int cmd_sandbox_restore (int argc, char **argv);
/* Remove the expired checkpoints (sandbox-checkpoint.c), warning on stderr
 * under CMD; their ids in *REMOVED when not NULL. */
void sbx_ckpt_collect (const char *cmd, char ***removed, size_t *n);

/* The end of an exec, from the keeper's REPLY (exit_code, signal,
 * timed_out, ...), reported as exec (and wait) do: with JSON one document
 * ({returncode, stdout, stderr, ...}); else OUT and ERR written to our
 * stdout and stderr when PRINT_OUTPUT, and the notes.  Returns the exit
 * code. */
struct sbx_exec_end
{
  yajl_val reply;
  const char *id;      /* the sandbox's */
  const char *exec_id; /* a detached exec's (wait), or NULL */
  bool json, sh, print_output;
  const char *out, *err;
  size_t out_len, err_len;
  uint64_t out_dropped, err_dropped;
};
int sbx_exec_report (const struct sbx_exec_end *x);

/* sandbox-wait.c: wait ID EXEC, exec ls ID. */
int cmd_sandbox_wait (int argc, char **argv);
int cmd_sandbox_exec_ls (int argc, char **argv);

/* inspect (sandbox-wait.c): into the open map of its "spec", S's --with
 * and --disk; into the sandbox's map, what its keeper (in DIRFD) says of
 * its detached execs ("execs") and of its --disk's use ("disk"). */
void sbx_gen_spec_layers (struct csr_jgen *w, const struct csr_sandbox_spec *s);
void sbx_gen_live (struct csr_jgen *w, int dirfd, const struct csr_sandbox_spec *s);

#endif
