/* csrun — the tools' own rules and texts, for the table in tools.c:
 * job-python.c (execute_python_code), tool-sandbox.c (the sandbox
 * commands), tool-files.c (the sandbox's files), tool-run.c (Python in a
 * sandbox) and tool-checkpoint.c (checkpoints). */
#ifndef CSRUN_MCP_TOOL_IMPL_H
#define CSRUN_MCP_TOOL_IMPL_H

#include "tools.h"

/* execute_python_code: the code is a snippet csrun accepts, the files'
 * paths and contents are valid. */
int csr_mcp_python_check (yajl_val args, const struct csr_mcp_limits *lim, struct csr_jpath *x);

int csr_mcp_sandbox_create_check (yajl_val args, const struct csr_mcp_limits *lim,
                                  struct csr_jpath *x);
void csr_mcp_sandbox_create_args (yajl_val args, const struct csr_mcp_limits *lim,
                                  struct csr_mcp_argv *av);
char *csr_mcp_sandbox_create_text (struct csr_mcp_output *o, bool *is_error);
void csr_mcp_sandbox_created (yajl_val out, struct csr_mcp_session *s);

int csr_mcp_sandbox_exec_check (yajl_val args, const struct csr_mcp_limits *lim,
                                struct csr_jpath *x);
void csr_mcp_sandbox_exec_args (yajl_val args, const struct csr_mcp_limits *lim,
                                struct csr_mcp_argv *av);
char *csr_mcp_sandbox_exec_text (struct csr_mcp_output *o, bool *is_error);

char *csr_mcp_sandbox_terminate_text (struct csr_mcp_output *o, bool *is_error);
void csr_mcp_sandbox_removed (yajl_val out, struct csr_mcp_session *s);

/* tool-files.c */
int csr_mcp_sandbox_write_check (yajl_val args, const struct csr_mcp_limits *lim,
                                 struct csr_jpath *x);
char *csr_mcp_sandbox_write_text (struct csr_mcp_output *o, bool *is_error);
/* The largest max_bytes of sandbox_read_file (and its default). */
double csr_mcp_read_max (const struct csr_mcp_limits *lim);
void csr_mcp_sandbox_read_args (yajl_val args, const struct csr_mcp_limits *lim,
                                struct csr_mcp_argv *av);
char *csr_mcp_sandbox_read_text (struct csr_mcp_output *o, bool *is_error);
/* The largest max_entries of sandbox_list_files. */
double csr_mcp_list_max (const struct csr_mcp_limits *lim);
/* find --json with a pattern (else the entry's ls --json). */
const char *const *csr_mcp_sandbox_list_find (yajl_val args);
int csr_mcp_sandbox_list_check (yajl_val args, const struct csr_mcp_limits *lim,
                                struct csr_jpath *x);
void csr_mcp_sandbox_list_args (yajl_val args, const struct csr_mcp_limits *lim,
                                struct csr_mcp_argv *av);
char *csr_mcp_sandbox_list_text (struct csr_mcp_output *o, bool *is_error);

/* The code is one csrun accepts (size, encoding, not empty):
 * execute_python_code's and sandbox_run's. */
int csr_mcp_code_check (yajl_val args, const struct csr_mcp_limits *lim, struct csr_jpath *x);

/* tool-run.c */
void csr_mcp_sandbox_run_args (yajl_val args, const struct csr_mcp_limits *lim,
                               struct csr_mcp_argv *av);
char *csr_mcp_sandbox_run_text (struct csr_mcp_output *o, bool *is_error);

/* tool-checkpoint.c (a restored sandbox is remembered as a created one:
 * csr_mcp_sandbox_created) */
char *csr_mcp_sandbox_checkpoint_text (struct csr_mcp_output *o, bool *is_error);
char *csr_mcp_sandbox_restore_text (struct csr_mcp_output *o, bool *is_error);

/* The text of a command that printed no document: why it failed (its exit
 * status and the end of its stderr). */
char *csr_mcp_command_failure_text (const char *what, const struct csr_mcp_output *o);

#endif
