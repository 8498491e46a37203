/* csrun — the agent tools: one table (tools.c) from which the MCP server
 * lists and runs them (tools/list, tools/call) and `csrun tool-schema`
 * prints them for the SDKs (OpenAI, Anthropic, Gemini, MCP).
 *
 * A tool runs either through the snippet pipeline in a worker process
 * (execute_python_code, job-python.c), or as one of csrun's own commands
 * with --json (the sandbox tools, job-command.c): an entry says which
 * command, how each argument becomes a command-line argument, and how the
 * command's JSON becomes the text the model reads.  A new `csrun sandbox`
 * command is one more entry. */
#ifndef CSRUN_MCP_TOOLS_H
#define CSRUN_MCP_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "../util/error.h"
#include "../util/json-gen.h"
#include "../util/json.h"

struct csr_mcp_session;

enum csr_mcp_type
{
  CSR_MCP_STRING,
  CSR_MCP_INTEGER,
  CSR_MCP_NUMBER,
  CSR_MCP_BOOLEAN,
  CSR_MCP_STRINGS,  /* an array of strings */
  CSR_MCP_FILES,    /* an array of {path, content, encoding} */
  CSR_MCP_INTEGERS, /* an array of integers (each within min and max) */
};

/* How a command tool hands an argument to csrun's command line. */
enum csr_mcp_pass
{
  CSR_MCP_PASS_NONE,   /* not at all (a check or the server reads it) */
  CSR_MCP_PASS_OPTION, /* FLAG=VALUE (+UNIT); a list: FLAG=ITEM for each; a boolean: FLAG if true */
  CSR_MCP_PASS_ARG,    /* a positional argument, after the options */
  CSR_MCP_PASS_REST,   /* "--" and the list's items, at the end */
  CSR_MCP_PASS_STDIN,  /* the string on the command's standard input (decoded when BASE64) */
};

struct csr_mcp_limits;

struct csr_mcp_param
{
  const char *name;
  enum csr_mcp_type type;
  bool required;
  const char *description;
  const char *pattern;        /* strings (and list items): an ERE the whole value matches */
  bool base64;                /* strings: base64 (RFC 4648), checked; PASS_STDIN decodes it */
  const char *const *choices; /* strings: the allowed values (NULL-terminated), or NULL */
  double min, max;            /* numbers: inclusive bounds (max 0: none) */
  /* numbers: the maximum comes from the server's limits (csrun mcp's
   * options) instead of MAX; SERVER_MAX_WHY says which, in errors. */
  double (*server_max) (const struct csr_mcp_limits *lim);
  const char *server_max_why;
  size_t max_items; /* lists: at most this many (0: no bound) */
  enum csr_mcp_pass pass;
  const char *flag; /* PASS_OPTION: "--timeout" */
  const char *unit; /* appended to a number: "s", "M" */
};

/* Hints for clients (MCP tool annotations). */
enum
{
  CSR_MCP_READ_ONLY = 1u << 0,
  CSR_MCP_DESTRUCTIVE = 1u << 1,
  CSR_MCP_IDEMPOTENT = 1u << 2,
  CSR_MCP_OPEN_WORLD = 1u << 3,
};

/* What the tools need to know of the server: the limits it was started with. */
struct csr_mcp_limits
{
  double max_timeout_s;  /* the largest timeout a call may ask (csrun mcp --timeout) */
  uint64_t max_output;   /* bytes kept per output stream */
  const char *rootfs;    /* csrun mcp --rootfs, or NULL */
  size_t max_file_bytes; /* execute_python_code's files, decoded, in all */
  uint64_t max_code;     /* execute_python_code's code (csrun mcp --max-code-size) */
  size_t max_frame;      /* the largest message (csrun mcp --max-frame; 0: the default) */
  /* Added to every sandbox_create (csrun mcp --sandbox-upstream),
   * NULL-terminated, or NULL; the sandbox's ports they take. */
  const char *const *sandbox_args;
  const unsigned *upstream_ports;
  size_t n_upstream_ports;
  /* Added to every sandbox_run (csrun mcp's options of the pipeline: the
   * gate's policy, healing, the LLM, the silent-failure scan), as
   * "--name=value" or "--name", NULL-terminated, or NULL. */
  const char *const *run_args;
};

/* csrun mcp --max-frame's default. */
#define CSR_MCP_MAX_FRAME_DEFAULT ((size_t)1 << 20)

/* Command-line arguments being built for a command tool. */
struct csr_mcp_argv
{
  char **v;
  size_t n, cap;
  bool oom;
};
void csr_mcp_argv_add (struct csr_mcp_argv *a, const char *s);
void csr_mcp_argv_addf (struct csr_mcp_argv *a, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
void csr_mcp_argv_release (struct csr_mcp_argv *a);

/* What a command tool's command did. */
struct csr_mcp_output
{
  yajl_val args;   /* the call's arguments (an object, or NULL) */
  yajl_val doc;    /* the JSON object it printed (--json), or NULL */
  const char *out; /* its standard output as it is (NUL-terminated, OUT_LEN bytes) */
  size_t out_len;
  bool out_cut;    /* it printed more than the largest message: OUT is its start */
  int status;      /* its wait status */
  const char *err; /* the end of its standard error */
  /* Set by RENDER (a tree it made; freed by the caller): the structured
   * result instead of DOC, e.g. for a command without --json. */
  yajl_val structured;
};

/* A command tool's standard input. */
struct csr_mcp_input
{
  const char *data; /* NULL: /dev/null */
  size_t len;
  char *owned; /* what DATA points to when it was decoded (freed by the release) */
};
void csr_mcp_input_release (struct csr_mcp_input *in);

struct csr_mcp_tool
{
  const char *name;
  const char *title;
  const char *description;
  const struct csr_mcp_param *params; /* ends with a NULL name */
  const char *output_schema;          /* JSON text, or NULL */
  unsigned hints;
  /* NULL: the snippet pipeline.  Else csrun's arguments before the ones the
   * call's arguments make (NULL-terminated), e.g. {"sandbox", "exec", "--json"}. */
  const char *const *command;
  /* When the command depends on the arguments: the one for ARGS instead
   * of COMMAND (NULL: COMMAND), e.g. find instead of ls. */
  const char *const *(*pick_command) (yajl_val args);
  /* Fixed arguments after the call's positional ones (NULL-terminated, or
   * NULL), e.g. {"-", NULL}: a file argument that is the standard input. */
  const char *const *after_args;
  /* Rules the schema does not say (e.g. exactly one of two arguments):
   * -1 after csr_jpath_fail (X's path is "arguments"). */
  int (*check) (yajl_val args, const struct csr_mcp_limits *lim, struct csr_jpath *x);
  /* Options that come from the server, not the call (a default timeout,
   * --max-output, --rootfs), added before the call's own. */
  void (*server_args) (yajl_val args, const struct csr_mcp_limits *lim, struct csr_mcp_argv *av);
  /* The text for the model from what the command did (its document, or
   * its raw output for a command without --json); *IS_ERROR set when the
   * call failed.  malloc'ed. */
  char *(*render) (struct csr_mcp_output *o, bool *is_error);
  /* When the command's document is one the session must remember (a
   * sandbox it created, one it removed): called after a successful call. */
  void (*after) (yajl_val out, struct csr_mcp_session *s);
  /* It makes a sandbox: the session's --max-sandboxes applies. */
  bool creates_sandbox;
  /* Its command prints csrun run --json's document (sandbox run): a result
   * too large for a message is cut as execute_python_code's is (the long
   * strings keep their head and tail), not refused. */
  bool run_document;
};

/* The tools, in the order they are listed (ends with a NULL name). */
extern const struct csr_mcp_tool csr_mcp_tools[];
const struct csr_mcp_tool *csr_mcp_tool_find (const char *name);

/* The schemas. */
enum csr_mcp_format
{
  CSR_MCP_FORMAT_MCP,       /* {"tools":[{name, title, description, inputSchema, outputSchema,
                               annotations}]} */
  CSR_MCP_FORMAT_OPENAI,    /* [{"type":"function","function":{name, description, parameters}}] */
  CSR_MCP_FORMAT_ANTHROPIC, /* [{name, description, input_schema}] */
  CSR_MCP_FORMAT_GEMINI,    /* {"functionDeclarations":[{name, description, parameters}]} */
};
int csr_mcp_format_parse (const char *s, enum csr_mcp_format *f);
/* Every tool in format F.  For MCP, PROTOCOL (a negotiated version, NULL:
 * the latest) decides which fields exist (title and outputSchema since
 * 2025-06-18, annotations since 2025-03-26). */
void csr_mcp_gen_tools (struct csr_jgen *w, enum csr_mcp_format f, const struct csr_mcp_limits *lim,
                        const char *protocol);

/* Check ARGS (the call's "arguments": an object, or NULL for none) against
 * T's parameters and rules: unknown members, types, bounds, patterns,
 * required ones.  -1 with the error naming the member ("arguments.timeout:
 * expected a number, got a string"). */
int csr_mcp_args_check (const struct csr_mcp_tool *t, yajl_val args,
                        const struct csr_mcp_limits *lim, csr_error **err);

/* The command line of a command tool's call: csrun's arguments (not
 * argv[0]) in *AV, the standard input in *IN (release it with
 * csr_mcp_input_release). */
int csr_mcp_command_argv (const struct csr_mcp_tool *t, yajl_val args,
                          const struct csr_mcp_limits *lim, struct csr_mcp_argv *av,
                          struct csr_mcp_input *in, csr_error **err);

/* A number argument as seconds with a unit for csrun's duration options. */
double csr_mcp_number (yajl_val v);
/* The largest message the server sends (LIM's, else the default). */
size_t csr_mcp_max_frame (const struct csr_mcp_limits *lim);

#endif
