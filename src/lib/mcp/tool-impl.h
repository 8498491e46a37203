/* csrun — the tools' own rules and texts, for the table in tools.c:
 * tool-python.c (execute_python_code) and tool-sandbox.c (the sandbox
 * commands). */
#ifndef CSRUN_MCP_TOOL_IMPL_H
#define CSRUN_MCP_TOOL_IMPL_H

#include "tools.h"

/* execute_python_code: the code is a snippet csrun accepts, the files'
 * paths and contents are valid. */
int csr_mcp_python_check (yajl_val args, const struct csr_mcp_limits *lim, struct csr_jpath *x);

void csr_mcp_sandbox_create_args (yajl_val args, const struct csr_mcp_limits *lim,
                                  struct csr_mcp_argv *av);
char *csr_mcp_sandbox_create_text (const struct csr_mcp_output *o, bool *is_error);
void csr_mcp_sandbox_created (yajl_val out, struct csr_mcp_session *s);

int csr_mcp_sandbox_exec_check (yajl_val args, const struct csr_mcp_limits *lim,
                                struct csr_jpath *x);
void csr_mcp_sandbox_exec_args (yajl_val args, const struct csr_mcp_limits *lim,
                                struct csr_mcp_argv *av);
char *csr_mcp_sandbox_exec_text (const struct csr_mcp_output *o, bool *is_error);

char *csr_mcp_sandbox_terminate_text (const struct csr_mcp_output *o, bool *is_error);
void csr_mcp_sandbox_removed (yajl_val out, struct csr_mcp_session *s);

/* The text of a command that printed no document: why it failed (its exit
 * status and the end of its stderr). */
char *csr_mcp_command_failure_text (const char *what, const struct csr_mcp_output *o);

#endif
