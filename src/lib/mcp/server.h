/* csrun — the Model Context Protocol server (csrun-mcp(1)): JSON-RPC 2.0
 * over a pair of descriptors, one message per line (jsonrpc.h); the
 * lifecycle (initialize with version negotiation, ping), tools/list and
 * tools/call of the tool table (tools.h), cancellation, progress.  Tool
 * calls run in worker processes, at most JOBS at a time, each in its own
 * jail: a cancelled call stops its own jail only.  Nothing but protocol is
 * written to OUT_FD; what the server has to say goes to the log (stderr). */
#ifndef CSRUN_MCP_SERVER_H
#define CSRUN_MCP_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "../supervisor/snippet.h"
#include "../util/error.h"
#include "tools.h"

/* The protocol versions the server speaks, the latest first. */
extern const char *const csr_mcp_protocol_versions[];

struct csr_mcp_config
{
  /* execute_python_code: every call's request (csrun mcp's run options)
   * and what csr_snippet_preload made of it once. */
  const struct csr_snippet_request *base;
  const struct csr_snippet_result *preloaded;
  struct csr_mcp_limits limits;
  /* The command tools run csrun itself: SELF_EXE with SELF_ARGS (global
   * options, e.g. "--debug"; NULL-terminated, may be NULL) before the
   * command. */
  const char *self_exe;
  const char *const *self_args;
  size_t max_frame;       /* the largest message sent (bytes) */
  size_t max_request;     /* the largest message read (bytes) */
  unsigned jobs;          /* tool calls that run at once; more wait */
  unsigned max_queue;     /* calls running or waiting; more are refused */
  unsigned max_sandboxes; /* sandboxes this session may have at once */
  bool keep_sandboxes;    /* leave them when the session ends */
  double progress_interval_s;
  const char *version; /* serverInfo.version */
};

/* Serve one session on IN_FD/OUT_FD until the input ends (or SIGINT,
 * SIGTERM, SIGHUP: *SIGNAL is set): running calls are stopped, the
 * session's sandboxes removed (unless KEEP_SANDBOXES).  -1 only when the
 * server could not start. */
int csr_mcp_serve (const struct csr_mcp_config *cfg, int in_fd, int out_fd, int *signal,
                   csr_error **err);

/* For the tools' AFTER hooks: the session made (CREATED) or removed the
 * sandbox ID. */
struct csr_mcp_session;
void csr_mcp_session_sandbox (struct csr_mcp_session *s, const char *id, bool created);

#endif
