/* csrun mcp (issue 18): the Model Context Protocol server on standard input
 * and output (src/lib/mcp/server.h); and csrun tool-schema: the same tools'
 * schemas for the SDKs. */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "mcp/server.h"
#include "sandbox/ports.h"
#include "supervisor/pool.h"
#include "util/cleanup.h"
#include "util/json-gen.h"
#include "util/log.h"
#include "util/parse.h"

#define MAX_UPSTREAMS 16

struct mcp_opts
{
  struct run_opts run; /* every call of execute_python_code */
  struct csr_mcp_config cfg;
  /* --sandbox-upstream: checked, then given to every sandbox_create */
  char *sandbox_args[MAX_UPSTREAMS + 1];
  unsigned upstream_ports[MAX_UPSTREAMS];
  size_t n_upstreams;
  bool no_warm; /* issue 17: every call in a one-shot jail */
};

enum
{
  OPT_JOBS = 'j',
  OPT_MAX_QUEUE = 3000,
  OPT_MAX_FRAME,
  OPT_MAX_REQUEST,
  OPT_MAX_SANDBOXES,
  OPT_KEEP_SANDBOXES,
  OPT_PROGRESS_INTERVAL,
  OPT_SANDBOX_UPSTREAM,
  OPT_NO_WARM,
};

static struct argp_option mcp_options[] = {
  { "jobs", OPT_JOBS, "N", 0, "Run at most N tool calls at once; more wait (default 8)", 0 },
  { "max-queue", OPT_MAX_QUEUE, "N", 0,
    "Refuse a call while N calls are running or waiting (default 64)", 0 },
  { "max-frame", OPT_MAX_FRAME, "SIZE", 0,
    "The largest message sent to the client: a longer result is cut, head and tail kept "
    "(default 1M)",
    0 },
  { "max-request", OPT_MAX_REQUEST, "SIZE", 0,
    "The largest message read from the client; a longer one is refused (default 16M)", 0 },
  { "max-sandboxes", OPT_MAX_SANDBOXES, "N", 0,
    "At most N sandboxes made by sandbox_create and sandbox_restore at once in this session "
    "(default 4)",
    0 },
  { "keep-sandboxes", OPT_KEEP_SANDBOXES, NULL, 0,
    "Leave the session's sandboxes when it ends (by default they are removed)", 0 },
  { "progress-interval", OPT_PROGRESS_INTERVAL, "DURATION", 0,
    "How often a long call tells its progress, when the client asked (default 1s; 0: only at "
    "a new attempt)",
    0 },
  { "sandbox-upstream", OPT_SANDBOX_UPSTREAM, "PORT:HOST:HOSTPORT", 0,
    "Every sandbox made by sandbox_create reaches HOST:HOSTPORT at its own 127.0.0.1:PORT (as "
    "csrun sandbox create --upstream; repeatable)",
    0 },
  { "no-warm", OPT_NO_WARM, NULL, 0,
    "Run every execute_python_code call in a one-shot jail of its own, not in a warm jail "
    "forked by a zygote",
    0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static const char mcp_doc[]
    = "Serve the Model Context Protocol on standard input and output: the tools "
      "execute_python_code, sandbox_create, sandbox_exec, sandbox_write_file, "
      "sandbox_read_file, sandbox_list_files, sandbox_run, sandbox_checkpoint, sandbox_restore "
      "and sandbox_terminate.\v"
      "JSON-RPC 2.0, one message per line; standard output carries the protocol only, "
      "messages go to standard error; the server ends when its input does. Every option of "
      "csrun run but --json, --label, --stdin, --live and --out applies to every call of "
      "execute_python_code (--timeout is also the longest a call may ask; --max-output "
      "defaults to 64K here); those of the pipeline (policy, healing, LLM, silent-failure "
      "scan) apply to sandbox_run too.\n\n"
      "Exit status: 0 the input ended, 2 usage error, 125 csrun itself failed (the rootfs, "
      "the policies), 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM. See csrun-mcp(1).";

/* --sandbox-upstream ARG: parsed as create parses it, not twice the same
 * port in the sandbox. */
static void
add_upstream (struct argp_state *state, struct mcp_opts *o, const char *arg)
{
  struct csr_sandbox_port p;
  csr_error *e = NULL;
  if (csr_sandbox_port_parse_upstream (arg, &p, &e) < 0)
    {
      run_opts_bad_value (state, "sandbox-upstream", e);
      return;
    }
  if (o->n_upstreams == MAX_UPSTREAMS)
    argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --sandbox-upstream: at most %d",
                  MAX_UPSTREAMS);
  for (size_t i = 0; i < o->n_upstreams; i++)
    if (o->upstream_ports[i] == p.port)
      argp_failure (state, CSR_EXIT_USAGE, 0,
                    "invalid --sandbox-upstream: the sandbox's port %u is used twice", p.port);
  if (asprintf (&o->sandbox_args[o->n_upstreams], "--upstream=%s", arg) < 0)
    argp_failure (state, CSR_EXIT_INTERNAL, ENOMEM, "--sandbox-upstream");
  o->upstream_ports[o->n_upstreams++] = p.port;
}

static error_t
parse_mcp (int key, char *arg, struct argp_state *state)
{
  struct mcp_opts *o = state->input;
  struct csr_mcp_config *c = &o->cfg;
  csr_error *e = NULL;
  uint64_t u = 0;
  switch (key)
    {
    case ARGP_KEY_INIT:
      state->child_inputs[0] = &o->run;
      break;
    case OPT_JOBS:
      if (csr_parse_uint (arg, 1, 256, &u, &e) < 0)
        run_opts_bad_value (state, "jobs", e);
      c->jobs = (unsigned)u;
      break;
    case OPT_MAX_QUEUE:
      if (csr_parse_uint (arg, 1, 4096, &u, &e) < 0)
        run_opts_bad_value (state, "max-queue", e);
      c->max_queue = (unsigned)u;
      break;
    case OPT_MAX_FRAME:
      if (csr_parse_size (arg, 64ULL << 20, &u, &e) < 0)
        run_opts_bad_value (state, "max-frame", e);
      else if (u < (64u << 10))
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --max-frame: %s is below 64K", arg);
      c->max_frame = (size_t)u;
      break;
    case OPT_MAX_REQUEST:
      if (csr_parse_size (arg, 1ULL << 30, &u, &e) < 0)
        run_opts_bad_value (state, "max-request", e);
      else if (u < (64u << 10))
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --max-request: %s is below 64K", arg);
      c->max_request = (size_t)u;
      break;
    case OPT_MAX_SANDBOXES:
      if (csr_parse_uint (arg, 0, 256, &u, &e) < 0)
        run_opts_bad_value (state, "max-sandboxes", e);
      c->max_sandboxes = (unsigned)u;
      break;
    case OPT_KEEP_SANDBOXES:
      c->keep_sandboxes = true;
      break;
    case OPT_PROGRESS_INTERVAL:
      if (strcmp (arg, "0") == 0)
        c->progress_interval_s = 0;
      else if (csr_parse_duration (arg, 3600, &c->progress_interval_s, &e) < 0)
        run_opts_bad_value (state, "progress-interval", e);
      break;
    case OPT_SANDBOX_UPSTREAM:
      add_upstream (state, o, arg);
      break;
    case OPT_NO_WARM:
      o->no_warm = true;
      break;
    case ARGP_KEY_ARG:
      argp_failure (state, CSR_EXIT_USAGE, 0,
                    "unexpected argument '%s' (the code comes from the client, in tools/call)",
                    arg);
      break;
    case ARGP_KEY_END:
      /* Standard input and output are the protocol's. */
      if (o->run.stdin_file)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--stdin and --interactive: standard input carries the protocol");
      if (o->run.live)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--live: standard output carries the protocol (the output is in each "
                      "result)");
      if (o->run.req.out_dir)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--out: concurrent calls would write to the same directory; files come "
                      "back through a sandbox");
      if (o->run.req.host_net && !o->run.allow_host_net)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--net host gives the code the host's network (no isolation): add "
                      "--allow-host-net to mean it");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

static struct argp_child mcp_children[]
    = { { &run_opts_batch_argp, 0,
          "Run options (as csrun run; every call of execute_python_code):", 0 },
        { NULL, 0, NULL, 0 } };
static struct argp mcp_argp = { mcp_options, parse_mcp, "", mcp_doc, mcp_children, NULL, NULL };

int
cmd_mcp (struct csr_global *g, int argc, char **argv)
{
  struct mcp_opts o;
  memset (&o, 0, sizeof o);
  run_opts_defaults (&o.run);
  o.run.note = true;                 /* the pipeline's options go to sandbox_run too */
  o.run.req.max_output = UINT64_MAX; /* not given: this command's default */
  struct csr_mcp_config *c = &o.cfg;
  c->jobs = 8;
  c->max_queue = 64;
  c->max_frame = CSR_MCP_MAX_FRAME_DEFAULT;
  c->max_request = 16u << 20;
  c->max_sandboxes = 4;
  c->progress_interval_s = 1;
  argp_parse (&mcp_argp, argc, argv, ARGP_IN_ORDER, NULL, &o);
  if (o.run.req.max_output == UINT64_MAX)
    o.run.req.max_output = 64u << 10;
  /* sandbox_run: the options of the pipeline (policy, healing, LLM,
   * silent-failure scan); the server gives each call its timeout and
   * output cap, and a sandbox has its own environment. */
  static const char *const not_forwarded[]
      = { "timeout",     "max-output", "env",  "quiet",   "raw-output", "stdin",
          "interactive", "stdin-max",  "live", "no-live", NULL };
  cleanup_free const char **run_args = run_opts_sandbox_args (&o.run, not_forwarded);
  if (run_args == NULL)
    {
      fprintf (stderr, "csrun mcp: out of memory\n");
      return CSR_EXIT_INTERNAL;
    }

  /* Standard output is the protocol's alone: it moves to a descriptor of
   * its own, and whatever else would write to fd 1 writes to stderr. */
  int out = fcntl (STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (out < 0 || dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    {
      fprintf (stderr, "csrun mcp: cannot set up standard output: %s\n", strerror (errno));
      return CSR_EXIT_INTERNAL;
    }
  /* What every call shares, loaded once: the policies, the rootfs
   * (unpacked if needed), seccomp, the compiled gate. */
  struct csr_snippet_result pre;
  memset (&pre, 0, sizeof pre);
  csr_error *e = NULL;
  int prc = csr_snippet_preload (&o.run.req, &pre, &e);
  if (prc < 0)
    {
      fprintf (stderr, "csrun mcp: %s\n", csr_error_text (e));
      csr_error_free (e);
      csr_snippet_result_release (&pre);
      return prc == CSR_SNIPPET_BAD_INPUT ? CSR_EXIT_USAGE : CSR_EXIT_INTERNAL;
    }
  /* issue 17: warm jails for execute_python_code (supervisor/pool.h): one
   * zygote; none with --no-warm or options no call could use it with; none,
   * with a warning, when this host or rootfs can't have them. */
  struct csr_pool *pool = NULL;
  const struct csr_snippet_request *q = &o.run.req;
  if (!o.no_warm && !q->n_inputs && !q->n_mounts && !q->user_uid && !q->host_net)
    {
      if (csr_pool_start (&pre, 1, &pool, &e) == 0)
        o.run.req.launcher = csr_pool_launcher (pool);
      else
        {
          fprintf (stderr, "csrun mcp: warning: %s: every call runs in a one-shot jail\n",
                   csr_error_text (e));
          csr_error_freep (&e);
        }
    }
  static const char *const debug_args[] = { "--debug", NULL };
  c->base = &o.run.req;
  c->preloaded = &pre;
  c->limits.max_timeout_s = o.run.req.timeout_s;
  c->limits.max_output = o.run.req.max_output;
  c->limits.rootfs = o.run.req.rootfs;
  c->limits.max_file_bytes = (size_t)o.run.req.in_max;
  c->limits.max_code = o.run.req.max_code;
  c->limits.max_frame = c->max_frame;
  c->limits.sandbox_args = (const char *const *)o.sandbox_args;
  c->limits.upstream_ports = o.upstream_ports;
  c->limits.n_upstream_ports = o.n_upstreams;
  c->limits.run_args = run_args;
  c->self_exe = "/proc/self/exe";
  c->self_args = g->debug ? debug_args : NULL;
  c->version = PACKAGE_VERSION;
  int sig = 0;
  int rc = csr_mcp_serve (c, STDIN_FILENO, out, &sig, &e);
  if (rc < 0)
    {
      fprintf (stderr, "csrun mcp: %s\n", csr_error_text (e));
      csr_error_free (e);
    }
  close (out);
  csr_pool_stop (pool);
  csr_snippet_result_release (&pre);
  for (size_t i = 0; i < o.n_upstreams; i++)
    free (o.sandbox_args[i]);
  run_opts_release_noted (&o.run);
  if (rc < 0)
    return CSR_EXIT_INTERNAL;
  return sig ? 128 + sig : CSR_EXIT_OK;
}

/* ------------------------------------------------------------ csrun tool-schema */

struct schema_opts
{
  enum csr_mcp_format format;
  double timeout_s;
  bool compact;
};

enum
{
  OPT_FORMAT = 'f',
  OPT_TIMEOUT = 't',
  OPT_COMPACT = 3100,
};

static struct argp_option schema_options[] = {
  { "format", OPT_FORMAT, "FORMAT", 0,
    "openai (tools for Chat Completions), anthropic (tools for Messages), gemini (a Tool's "
    "functionDeclarations) or mcp (tools/list's result; the default)",
    0 },
  { "timeout", OPT_TIMEOUT, "DURATION", 0,
    "The longest timeout a call may ask, as csrun mcp --timeout (default 60s)", 0 },
  { "compact", OPT_COMPACT, NULL, 0, "One line instead of indented JSON", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_schema (int key, char *arg, struct argp_state *state)
{
  struct schema_opts *o = state->input;
  csr_error *e = NULL;
  switch (key)
    {
    case OPT_FORMAT:
      if (csr_mcp_format_parse (arg, &o->format) < 0)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "invalid --format '%s' (openai, anthropic, gemini or mcp)", arg);
      break;
    case OPT_TIMEOUT:
      if (csr_parse_duration (arg, 86400, &o->timeout_s, &e) < 0)
        run_opts_bad_value (state, "timeout", e);
      break;
    case OPT_COMPACT:
      o->compact = true;
      break;
    case ARGP_KEY_ARG:
      argp_failure (state, CSR_EXIT_USAGE, 0, "unexpected argument '%s'", arg);
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

int
cmd_tool_schema (struct csr_global *g, int argc, char **argv)
{
  (void)g;
  struct schema_opts o = { .format = CSR_MCP_FORMAT_MCP, .timeout_s = 60 };
  static const char doc[]
      = "Print the schemas of csrun mcp's tools for an SDK's tool-call loop.\v"
        "The same table as the MCP server's tools/list. Exit status: 0, 2 usage error. See "
        "csrun-mcp(1).";
  struct argp argp = { schema_options, parse_schema, "", doc, NULL, NULL, NULL };
  argp_err_exit_status = CSR_EXIT_USAGE;
  argp_parse (&argp, argc, argv, 0, NULL, &o);
  struct csr_mcp_limits lim = { .max_timeout_s = o.timeout_s };
  struct csr_jgen w;
  csr_error *e = NULL;
  if (csr_jgen_init (&w, !o.compact, &e) < 0)
    {
      fprintf (stderr, "csrun tool-schema: %s\n", csr_error_text (e));
      csr_error_free (e);
      return CSR_EXIT_INTERNAL;
    }
  csr_mcp_gen_tools (&w, o.format, &lim, NULL);
  size_t len = 0;
  cleanup_free char *s = csr_jgen_finish (&w, "the schemas", &len, &e);
  if (s == NULL)
    {
      fprintf (stderr, "csrun tool-schema: %s\n", csr_error_text (e));
      csr_error_free (e);
      return CSR_EXIT_INTERNAL;
    }
  while (len > 0 && s[len - 1] == '\n')
    len--;
  if (printf ("%.*s\n", (int)len, s) < 0 || fflush (stdout) != 0)
    {
      fprintf (stderr, "csrun tool-schema: cannot write: %s\n", strerror (errno));
      return CSR_EXIT_INTERNAL;
    }
  return CSR_EXIT_OK;
}
