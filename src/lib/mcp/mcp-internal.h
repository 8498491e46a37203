/* csrun — the MCP server's inside: a session (server.c) and its tool calls
 * ("jobs"), each in a worker process: job-python.c for the snippet
 * pipeline, job-command.c for csrun's own commands. */
#ifndef CSRUN_MCP_INTERNAL_H
#define CSRUN_MCP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jsonrpc.h"
#include "server.h"

/* Bytes read from a worker, bounded. */
struct mcp_buf
{
  char *data;
  size_t len, cap, max;
  bool overflow; /* more than MAX came: the rest was dropped */
};
void mcp_buf_add (struct mcp_buf *b, const char *data, size_t len);
void mcp_buf_release (struct mcp_buf *b);

struct mcp_job
{
  struct mcp_job *next;
  char *id;    /* the request's id (JSON text) */
  char *token; /* its progress token (JSON text), or NULL */
  const struct csr_mcp_tool *tool;
  yajl_val tree; /* the request (owned); ARGS points into it */
  yajl_val args;
  bool started, cancelled, done;
  pid_t pid;   /* the worker (its own process group for a command) */
  int fd_main; /* the record pipe (pipeline) or the command's stdout */
  int fd_err;  /* the command's stderr; -1 */
  int fd_intr; /* the pipeline worker's interrupt pipe; -1 */
  int fd_pid;  /* a pidfd of the worker (readable when it ends), or -1 */
  struct mcp_buf main, err;
  int64_t t0_ms, next_tick_ms, kill_at_ms;
  double last_progress;
  char phase[200]; /* what progress notifications say */
  int status;      /* the worker's wait status */
};

struct csr_mcp_session
{
  const struct csr_mcp_config *cfg;
  int in_fd, out_fd;
  struct csr_rpc_reader rd;
  struct csr_rpc_outq out;
  bool out_broken; /* the reader of OUT_FD is gone */
  bool initialized;
  char protocol[16];
  bool eof; /* no more input: finishing */
  int stop_signal;
  int64_t stop_deadline_ms;
  struct mcp_job *jobs; /* running and waiting, oldest first */
  unsigned n_running, n_jobs;
  char **sandboxes; /* made in this session and not removed */
  size_t n_sandboxes;
  unsigned creating; /* sandbox_create calls in progress */
  unsigned long lines;
};

/* Queue a message for the client (LINE malloc'ed, ends with "\n"). */
void mcp_send (struct csr_mcp_session *s, char *line, size_t len);
/* The result of J's call: RESULT (JSON text), or an error CODE/MESSAGE. */
void mcp_send_result (struct csr_mcp_session *s, const struct mcp_job *j, const char *result);
/* A tool result with only a text and isError (for failures of the server
 * itself and refused calls). */
void mcp_send_text_result (struct csr_mcp_session *s, const char *id, const char *text,
                           bool is_error);
/* A progress notification for J (when it has a token): MESSAGE, and the
 * time it has run as the progress. */
void mcp_progress (struct csr_mcp_session *s, struct mcp_job *j, const char *message);
/* In a freshly forked worker: close what belongs to the server and to the
 * other calls (standard input becomes /dev/null; KEEP stays open). */
void mcp_child_close (struct csr_mcp_session *s, const struct mcp_job *self);
/* Whether the negotiated protocol has structured tool results (2025-06-18). */
bool mcp_structured (const struct csr_mcp_session *s);

/* ---- job-python.c: execute_python_code */
int mcp_python_start (struct csr_mcp_session *s, struct mcp_job *j, csr_error **err);
/* Bytes on the record pipe: progress records become notifications. */
void mcp_python_records (struct csr_mcp_session *s, struct mcp_job *j);
/* The worker ended: its result record, as the call's response. */
void mcp_python_finish (struct csr_mcp_session *s, struct mcp_job *j);
void mcp_python_cancel (struct mcp_job *j);

/* ---- job-command.c: csrun's commands */
int mcp_command_start (struct csr_mcp_session *s, struct mcp_job *j, csr_error **err);
void mcp_command_finish (struct csr_mcp_session *s, struct mcp_job *j);
void mcp_command_cancel (struct mcp_job *j);
/* A cancelled call's command ended: what the session must remember of it
 * all the same (a sandbox made just before the cancellation came). */
void mcp_command_adopt (struct csr_mcp_session *s, struct mcp_job *j);
/* Run csrun with ARGV (after the binary) to its end, at most TIMEOUT_MS (a
 * session's clean-up: removing its sandboxes).  Its wait status, -1. */
int mcp_command_run_sync (const struct csr_mcp_config *cfg, const char *const *argv,
                          int timeout_ms);

/* ---- the pipeline worker (job-python.c), for the unit tests too */
/* The tool result for the result document DOC: the text (stdout, or
 * CodeShield's report), structuredContent when STRUCTURED, isError; cut
 * so that the whole is at most MAX bytes.  malloc'ed JSON text. */
char *mcp_python_tool_result (yajl_val doc, bool structured, size_t max, size_t *len);
/* The same for a run document DOC whose text TEXT (malloc'ed, taken) was
 * made already (sandbox_run's), with IS_ERROR. */
char *mcp_run_result_fit (char *text, yajl_val doc, bool structured, bool is_error, size_t max,
                          size_t *len);
/* {"content":[{"type":"text","text":TEXT}],"structuredContent":DOC,"isError":..}
 * (DOC only when STRUCTURED and not NULL).  malloc'ed. */
char *mcp_tool_result (const char *text, yajl_val doc, bool structured, bool is_error, size_t *len);
/* CodeShield's text for the result document DOC. */
char *mcp_python_text (yajl_val doc, bool *is_error);

#endif
