/* csrun — the agent tools' table, their schemas for each SDK, the check of
 * a call's arguments, and a command tool's command line (tools.h). */
#include "config.h"
#include "tools.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/base64.h"
#include "../util/cleanup.h"
#include "tool-impl.h"

/* ------------------------------------------------------------ the table */

#define SANDBOX_ID_PATTERN "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$"
#define ENV_PATTERN "^[A-Za-z_][A-Za-z0-9_]*=.*$"

static const char *const encodings[] = { "utf-8", "base64", NULL };

static double
max_timeout (const struct csr_mcp_limits *lim)
{
  return lim->max_timeout_s;
}
#define SERVER_TIMEOUT .server_max = max_timeout, .server_max_why = " s: the server's --timeout"

static const struct csr_mcp_param python_params[] = {
  { .name = "code",
    .type = CSR_MCP_STRING,
    .required = true,
    .description = "The whole Python 3 program (not a fragment to evaluate: print() what you "
                   "want to see)" },
  { .name = "timeout",
    .type = CSR_MCP_NUMBER,
    .description = "Seconds each attempt may run before the jail is killed (default and "
                   "maximum: the server's --timeout)",
    .min = 0.1,
    SERVER_TIMEOUT },
  { .name = "files",
    .type = CSR_MCP_FILES,
    .description = "Files to put in the jail before the program runs: each {path, content, "
                   "encoding}; a relative path is below /work, the working directory",
    .max_items = 64 },
  { 0 },
};

static const char python_description[]
    = "Run a Python 3 program in a new, disposable jail and return its standard output. The jail "
      "has no network and none of the host's files; the working directory /work and /tmp are "
      "empty and writable, and nothing persists after the call. Before it runs, an AST gate "
      "refuses eval/exec, shell commands (os.system, subprocess), bare except and broad except "
      "clauses. When it fails, csrun diagnoses the error, repairs what it safely can (a missing "
      "import, Python 2 print, a misspelt name, str + int) and runs the repaired program, at "
      "most 3 attempts in all. On success the text is the standard output; on failure it is a "
      "report of lines 'error_type:', 'root_cause_line:', 'message:', 'stderr:', and "
      "'timed_out: true' or 'silent_failure_detected: true' when they apply. The structured "
      "result is csrun run --json's document: every attempt, its diagnosis and patch.";

/* The result of csrun run --json (csrun-run(1), THE JSON RESULT): what a
 * client may rely on; more members may come. */
static const char python_output_schema[]
    = "{\"type\":\"object\",\"properties\":{"
      "\"version\":{\"type\":\"integer\"},"
      "\"status\":{\"type\":\"string\",\"enum\":[\"ok\",\"healed\",\"failed\",\"blocked\","
      "\"timeout\",\"error\",\"interrupted\"]},"
      "\"error\":{\"type\":\"string\"},"
      "\"duration_ms\":{\"type\":\"integer\"},"
      "\"max_attempts\":{\"type\":\"integer\"},"
      "\"limits\":{\"type\":\"object\"},"
      "\"diagnosis\":{\"type\":\"object\",\"properties\":{"
      "\"error_type\":{\"type\":[\"string\",\"null\"]},\"message\":{\"type\":[\"string\",\"null\"]}"
      ","
      "\"line\":{\"type\":[\"integer\",\"null\"]},\"context\":{\"type\":[\"string\",\"null\"]}}},"
      "\"final_code\":{\"type\":\"string\"},"
      "\"attempts\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
      "\"attempt\":{\"type\":\"integer\"},\"exit_code\":{\"type\":[\"integer\",\"null\"]},"
      "\"signal\":{\"type\":[\"string\",\"null\"]},\"timed_out\":{\"type\":\"boolean\"},"
      "\"duration_ms\":{\"type\":\"integer\"},\"stdout\":{\"type\":\"string\"},"
      "\"stderr\":{\"type\":\"string\"},\"stdout_truncated\":{\"type\":\"boolean\"},"
      "\"stderr_truncated\":{\"type\":\"boolean\"},\"patch\":{\"type\":\"object\"}}}}},"
      "\"required\":[\"version\",\"status\",\"attempts\"]}";

static const struct csr_mcp_param create_params[] = {
  { .name = "name",
    .type = CSR_MCP_STRING,
    .description = "A unique name for the sandbox, usable instead of its id (1 to 64 letters, "
                   "digits, '_', '.', '-')",
    .pattern = SANDBOX_ID_PATTERN,
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--name" },
  { .name = "memory",
    .type = CSR_MCP_INTEGER,
    .description = "Memory limit in MiB (default 2048)",
    .min = 16,
    .max = 1048576,
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--memory",
    .unit = "M" },
  { .name = "cpu",
    .type = CSR_MCP_INTEGER,
    .description = "CPU limit in thousandths of a CPU (default 1000: one CPU)",
    .min = 10,
    .max = 1024000,
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--cpu",
    .unit = "m" },
  { .name = "idle_timeout",
    .type = CSR_MCP_INTEGER,
    .description = "Remove the sandbox after this many seconds without activity (default 300; "
                   "0: never)",
    .min = 0,
    .max = 31622400,
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--idle-timeout",
    .unit = "s" },
  { .name = "ttl",
    .type = CSR_MCP_INTEGER,
    .description = "Remove the sandbox this many seconds after its creation (default: never)",
    .min = 1,
    .max = 31622400,
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--ttl",
    .unit = "s" },
  { .name = "env",
    .type = CSR_MCP_STRINGS,
    .description = "Environment variables of the sandbox, each KEY=VALUE",
    .pattern = ENV_PATTERN,
    .max_items = 256,
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--env" },
  { .name = "working_dir",
    .type = CSR_MCP_STRING,
    .description = "The working directory of commands (absolute; default /work)",
    .pattern = "^/[A-Za-z0-9_./-]{1,1023}$",
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--workdir" },
  { .name = "publish",
    .type = CSR_MCP_INTEGERS,
    .description = "TCP ports of the sandbox to make reachable from the host (for a server "
                   "you run in it): each is forwarded from a free port on the host's "
                   "127.0.0.1, given in the result",
    .min = 1,
    .max = 65535,
    .max_items = 16,
    .pass = CSR_MCP_PASS_NONE },
  { 0 },
};

/* create --json: its id, name and ports (as csrun sandbox port ls --json). */
static const char create_output_schema[]
    = "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
      "\"name\":{\"type\":\"string\"},"
      "\"ports\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
      "\"type\":{\"type\":\"string\",\"enum\":[\"publish\",\"upstream\"]},"
      "\"port\":{\"type\":\"integer\"},\"host_port\":{\"type\":\"integer\"},"
      "\"host_url\":{\"type\":\"string\"},\"sandbox_url\":{\"type\":\"string\"}}}}},"
      "\"required\":[\"id\"]}";

static const struct csr_mcp_param exec_params[] = {
  { .name = "sandbox",
    .type = CSR_MCP_STRING,
    .required = true,
    .description = "The sandbox: its id (or a unique prefix of at least 4 digits) or its name",
    .pattern = SANDBOX_ID_PATTERN,
    .pass = CSR_MCP_PASS_ARG },
  { .name = "command",
    .type = CSR_MCP_STRING,
    .description = "A shell command line, run with /bin/sh -c (give this or argv)",
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--sh" },
  { .name = "argv",
    .type = CSR_MCP_STRINGS,
    .description = "The program and its arguments, run without a shell (give this or command)",
    .max_items = 4096,
    .pass = CSR_MCP_PASS_REST },
  { .name = "working_dir",
    .type = CSR_MCP_STRING,
    .description = "The working directory (absolute; default: the sandbox's)",
    .pattern = "^/[A-Za-z0-9_./-]{0,1023}$",
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--workdir" },
  { .name = "env",
    .type = CSR_MCP_STRINGS,
    .description = "More environment variables for this command, each KEY=VALUE",
    .pattern = ENV_PATTERN,
    .max_items = 256,
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--env" },
  { .name = "timeout",
    .type = CSR_MCP_NUMBER,
    .description = "Seconds before the command is killed (default and maximum: the server's "
                   "--timeout)",
    .min = 0.1,
    SERVER_TIMEOUT,
    .pass = CSR_MCP_PASS_NONE },
  { 0 },
};

static const char exec_output_schema[]
    = "{\"type\":\"object\",\"properties\":{"
      "\"returncode\":{\"type\":\"integer\"},\"stdout\":{\"type\":\"string\"},"
      "\"stderr\":{\"type\":\"string\"},\"stdout_dropped_bytes\":{\"type\":\"integer\"},"
      "\"stderr_dropped_bytes\":{\"type\":\"integer\"},\"duration_ms\":{\"type\":\"integer\"},"
      "\"timed_out\":{\"type\":\"boolean\"},\"signal\":{\"type\":\"integer\"},"
      "\"not_found\":{\"type\":\"boolean\"},\"setup_failed\":{\"type\":\"boolean\"},"
      "\"error\":{\"type\":\"string\"},\"sandbox\":{\"type\":\"string\"}},"
      "\"required\":[\"returncode\",\"stdout\",\"stderr\"]}";

static const struct csr_mcp_param terminate_params[] = {
  { .name = "sandbox",
    .type = CSR_MCP_STRING,
    .required = true,
    .description = "The sandbox: its id (or a unique prefix) or its name",
    .pattern = SANDBOX_ID_PATTERN,
    .pass = CSR_MCP_PASS_ARG },
  { 0 },
};

static const char terminate_output_schema[]
    = "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
      "\"ok\":{\"type\":\"boolean\"}},\"required\":[\"id\"]}";

#define SANDBOX_PARAM                                                                              \
  {                                                                                                \
    .name = "sandbox", .type = CSR_MCP_STRING, .required = true,                                   \
    .description = "The sandbox: its id (or a unique prefix) or its name",                         \
    .pattern = SANDBOX_ID_PATTERN, .pass = CSR_MCP_PASS_ARG                                        \
  }
#define SANDBOX_PATH_DESCRIPTION                                                                   \
  "absolute, or relative to the sandbox's working directory (/work); it never leads out of the "   \
  "sandbox"

static const struct csr_mcp_param write_params[] = {
  SANDBOX_PARAM,
  { .name = "path",
    .type = CSR_MCP_STRING,
    .required = true,
    .description = "The file to write, " SANDBOX_PATH_DESCRIPTION
                   ". Missing parent directories are made; an existing file is replaced whole",
    .pass = CSR_MCP_PASS_ARG },
  { .name = "content",
    .type = CSR_MCP_STRING,
    .description = "The file's contents as text, written in UTF-8 (give this or "
                   "content_base64)",
    .pass = CSR_MCP_PASS_STDIN },
  { .name = "content_base64",
    .type = CSR_MCP_STRING,
    .description = "The file's contents as bytes in base64, for binary data (give this or "
                   "content)",
    .base64 = true,
    .pass = CSR_MCP_PASS_STDIN },
  { .name = "mode",
    .type = CSR_MCP_STRING,
    .description = "Permission bits in octal, e.g. \"0755\" for a script (default: the replaced "
                   "file's, else 0644)",
    .pattern = "^0?[0-7]{3}$",
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--mode" },
  { 0 },
};

static const char write_output_schema[]
    = "{\"type\":\"object\",\"properties\":{\"sandbox\":{\"type\":\"string\"},"
      "\"path\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"}},"
      "\"required\":[\"sandbox\",\"path\",\"bytes\"]}";

static const struct csr_mcp_param read_params[] = {
  SANDBOX_PARAM,
  { .name = "path",
    .type = CSR_MCP_STRING,
    .required = true,
    .description = "The file to read, " SANDBOX_PATH_DESCRIPTION,
    .pass = CSR_MCP_PASS_ARG },
  { .name = "max_bytes",
    .type = CSR_MCP_INTEGER,
    .description = "Refuse a file larger than this (default and maximum: an eighth of the "
                   "server's --max-frame, 131072 by default); read a part of a larger one "
                   "with sandbox_exec",
    .min = 1,
    .server_max = csr_mcp_read_max,
    .server_max_why = ": an eighth of the server's --max-frame",
    .pass = CSR_MCP_PASS_NONE },
  { 0 },
};

static const char read_output_schema[]
    = "{\"type\":\"object\",\"properties\":{\"sandbox\":{\"type\":\"string\"},"
      "\"path\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"},"
      "\"encoding\":{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"]},"
      "\"content\":{\"type\":\"string\"}},"
      "\"required\":[\"path\",\"bytes\",\"encoding\",\"content\"]}";

static const struct csr_mcp_param list_params[] = {
  SANDBOX_PARAM,
  /* (pattern before path: find takes them in that order) */
  { .name = "pattern",
    .type = CSR_MCP_STRING,
    .description = "Search the whole tree below path for entries whose name matches this "
                   "glob (e.g. \"*.py\"; with a '/', their path below path does) instead of "
                   "listing path",
    .pass = CSR_MCP_PASS_ARG },
  { .name = "path",
    .type = CSR_MCP_STRING,
    .description
    = "The directory to list or search (default: the working directory), " SANDBOX_PATH_DESCRIPTION,
    .pass = CSR_MCP_PASS_ARG },
  { .name = "recursive",
    .type = CSR_MCP_BOOLEAN,
    .description = "List the directories below too (default false)",
    .pass = CSR_MCP_PASS_NONE },
  { .name = "max_entries",
    .type = CSR_MCP_INTEGER,
    .description = "At most this many entries (default 500; the maximum depends on the "
                   "server's --max-frame: 2048 by default)",
    .min = 1,
    .server_max = csr_mcp_list_max,
    .server_max_why = ": the server's --max-frame / 512",
    .pass = CSR_MCP_PASS_NONE },
  { 0 },
};

static const char list_output_schema[]
    = "{\"type\":\"object\",\"properties\":{\"sandbox\":{\"type\":\"string\"},"
      "\"path\":{\"type\":\"string\"},\"type\":{\"type\":\"string\"},"
      "\"pattern\":{\"type\":\"string\"},"
      "\"entries\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
      "\"name\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
      "\"type\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},"
      "\"mode\":{\"type\":\"string\"},\"mtime\":{\"type\":\"string\"},"
      "\"target\":{\"type\":\"string\"}},\"required\":[\"path\",\"type\"]}},"
      "\"truncated\":{\"type\":\"boolean\"},"
      "\"skipped\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}},"
      "\"required\":[\"path\",\"entries\",\"truncated\"]}";

static const struct csr_mcp_param run_params[] = {
  SANDBOX_PARAM,
  { .name = "code",
    .type = CSR_MCP_STRING,
    .required = true,
    .description = "The Python 3 program (with session: the cell) to run in the sandbox: "
                   "print() what you want to see",
    .pass = CSR_MCP_PASS_STDIN },
  { .name = "session",
    .type = CSR_MCP_STRING,
    .description = "Run the code as a cell of this session: a Python interpreter that lives in "
                   "the sandbox, whose variables, functions and imports stay for the next call "
                   "with the same session (like a notebook). Started by its first cell; 1 to 64 "
                   "letters, digits, '_', '.', '-'",
    .pattern = "^[A-Za-z0-9_.-]{1,64}$",
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--session" },
  { .name = "timeout",
    .type = CSR_MCP_NUMBER,
    .description = "Seconds each attempt (or the cell) may run before it is stopped (default "
                   "and maximum: the server's --timeout); the sandbox and a session live on",
    .min = 0.1,
    SERVER_TIMEOUT,
    .pass = CSR_MCP_PASS_NONE },
  { 0 },
};

/* sandbox run --json: csrun run's document, with the sandbox and the
 * session. */
static const char run_output_schema[]
    = "{\"type\":\"object\",\"properties\":{"
      "\"version\":{\"type\":\"integer\"},"
      "\"status\":{\"type\":\"string\",\"enum\":[\"ok\",\"healed\",\"failed\",\"blocked\","
      "\"timeout\",\"error\",\"interrupted\"]},"
      "\"error\":{\"type\":\"string\"},"
      "\"sandbox\":{\"type\":\"string\"},"
      "\"session\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
      "\"cell\":{\"type\":\"integer\"},\"started\":{\"type\":\"boolean\"},"
      "\"lost\":{\"type\":\"boolean\"}}},"
      "\"duration_ms\":{\"type\":\"integer\"},"
      "\"max_attempts\":{\"type\":\"integer\"},"
      "\"limits\":{\"type\":\"object\"},"
      "\"diagnosis\":{\"type\":\"object\"},"
      "\"final_code\":{\"type\":\"string\"},"
      "\"attempts\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
      "\"attempt\":{\"type\":\"integer\"},\"exit_code\":{\"type\":[\"integer\",\"null\"]},"
      "\"timed_out\":{\"type\":\"boolean\"},\"stdout\":{\"type\":\"string\"},"
      "\"stderr\":{\"type\":\"string\"},\"patch\":{\"type\":\"object\"}}}}},"
      "\"required\":[\"version\",\"status\",\"attempts\"]}";

static const struct csr_mcp_param checkpoint_params[] = {
  SANDBOX_PARAM,
  { .name = "ttl",
    .type = CSR_MCP_INTEGER,
    .description = "Seconds the checkpoint is kept; after that it can't be restored and is "
                   "removed (default: kept until it is removed)",
    .min = 1,
    .max = 31622400,
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--ttl",
    .unit = "s" },
  { .name = "leave_running",
    .type = CSR_MCP_BOOLEAN,
    .description = "Let the sandbox go on after the checkpoint (default false: it is stopped, "
                   "as what would run afterwards is not in the checkpoint)",
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--leave-running" },
  { 0 },
};

/* checkpoint --json: the checkpoint's description (csrun-sandbox(1)). */
static const char checkpoint_output_schema[]
    = "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
      "\"created\":{\"type\":\"integer\"},\"expires\":{\"type\":\"integer\"},"
      "\"sandbox\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
      "\"name\":{\"type\":\"string\"}}},"
      "\"layer\":{\"type\":\"object\",\"properties\":{\"files\":{\"type\":\"integer\"},"
      "\"dirs\":{\"type\":\"integer\"},\"symlinks\":{\"type\":\"integer\"},"
      "\"bytes\":{\"type\":\"integer\"}}},"
      "\"archive\":{\"type\":\"object\"},"
      "\"not_saved\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
      "\"not_saved_total\":{\"type\":\"integer\"},"
      "\"stopped\":{\"type\":\"boolean\"}},"
      "\"required\":[\"id\",\"sandbox\"]}";

static const struct csr_mcp_param restore_params[] = {
  { .name = "checkpoint",
    .type = CSR_MCP_STRING,
    .required = true,
    .description = "The checkpoint's id (from sandbox_checkpoint), or a unique prefix of at "
                   "least 4 of its digits",
    .pattern = "^[0-9a-f]{4,32}$",
    .pass = CSR_MCP_PASS_ARG },
  { .name = "name",
    .type = CSR_MCP_STRING,
    .description = "A unique name for the new sandbox, usable instead of its id (1 to 64 "
                   "letters, digits, '_', '.', '-')",
    .pattern = SANDBOX_ID_PATTERN,
    .pass = CSR_MCP_PASS_OPTION,
    .flag = "--name" },
  { 0 },
};

static const char restore_output_schema[]
    = "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
      "\"name\":{\"type\":\"string\"},\"checkpoint\":{\"type\":\"string\"},"
      "\"layer\":{\"type\":\"object\"},"
      "\"not_restored\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
      "\"warning\":{\"type\":\"string\"}},"
      "\"required\":[\"id\",\"checkpoint\"]}";

static const char *const create_cmd[] = { "sandbox", "create", "--json", NULL };
static const char *const exec_cmd[] = { "sandbox", "exec", "--json", NULL };
static const char *const terminate_cmd[] = { "sandbox", "rm", "--force", "--json", NULL };
static const char *const write_cmd[] = { "sandbox", "write", "--json", NULL };
static const char *const read_cmd[] = { "sandbox", "read", NULL };
static const char *const list_cmd[] = { "sandbox", "ls", "--json", NULL };
static const char *const run_cmd[] = { "sandbox", "run", "--json", NULL };
static const char *const run_after[] = { "-", NULL }; /* the code: standard input */
static const char *const checkpoint_cmd[] = { "sandbox", "checkpoint", "--json", NULL };
static const char *const restore_cmd[] = { "sandbox", "restore", "--json", NULL };

const struct csr_mcp_tool csr_mcp_tools[] = {
  { .name = "execute_python_code",
    .title = "Run Python in a disposable jail",
    .description = python_description,
    .params = python_params,
    .output_schema = python_output_schema,
    .hints = 0,
    .check = csr_mcp_python_check },
  { .name = "sandbox_create",
    .title = "Create a sandbox",
    .description = "Create a sandbox: a long-lived jail (no network) with a writable file "
                   "system over the Python rootfs, for work that spans several calls. Returns "
                   "its id; run Python in it with sandbox_run (with a session to keep "
                   "variables between calls) and commands with sandbox_exec, move files in and "
                   "out with sandbox_write_file, sandbox_read_file and sandbox_list_files, save "
                   "it with sandbox_checkpoint, and remove it with sandbox_terminate (it is also "
                   "removed after idle_timeout seconds "
                   "without activity, and when this session ends). With publish, a server "
                   "running in it can be reached from the host.",
    .params = create_params,
    .output_schema = create_output_schema,
    .command = create_cmd,
    .check = csr_mcp_sandbox_create_check,
    .server_args = csr_mcp_sandbox_create_args,
    .render = csr_mcp_sandbox_create_text,
    .after = csr_mcp_sandbox_created,
    .creates_sandbox = true },
  { .name = "sandbox_exec",
    .title = "Run a command in a sandbox",
    .description = "Run a command in a sandbox made by sandbox_create: a shell command line "
                   "(command) or a program and its arguments (argv), e.g. argv "
                   "[\"python3\", \"-c\", \"print(1)\"]. Files written there stay for the next "
                   "commands. The text is the standard output when the command succeeds, else "
                   "its exit status and standard error.",
    .params = exec_params,
    .output_schema = exec_output_schema,
    .command = exec_cmd,
    .check = csr_mcp_sandbox_exec_check,
    .server_args = csr_mcp_sandbox_exec_args,
    .render = csr_mcp_sandbox_exec_text },
  { .name = "sandbox_write_file",
    .title = "Write a file in a sandbox",
    .description = "Write a file in a sandbox made by sandbox_create: text (content) or bytes "
                   "(content_base64). Missing parent directories are made and an existing file "
                   "is replaced whole, never left half-written.",
    .params = write_params,
    .output_schema = write_output_schema,
    .hints = CSR_MCP_DESTRUCTIVE | CSR_MCP_IDEMPOTENT,
    .command = write_cmd,
    .check = csr_mcp_sandbox_write_check,
    .render = csr_mcp_sandbox_write_text },
  { .name = "sandbox_read_file",
    .title = "Read a file in a sandbox",
    .description = "Read a file of a sandbox made by sandbox_create. The text is the file's "
                   "contents when they are UTF-8 text; other bytes come back in base64, which "
                   "the text says (the structured result has encoding \"utf-8\" or "
                   "\"base64\").",
    .params = read_params,
    .output_schema = read_output_schema,
    .hints = CSR_MCP_READ_ONLY | CSR_MCP_IDEMPOTENT,
    .command = read_cmd,
    .server_args = csr_mcp_sandbox_read_args,
    .render = csr_mcp_sandbox_read_text },
  { .name = "sandbox_list_files",
    .title = "List or find files in a sandbox",
    .description = "List a directory of a sandbox made by sandbox_create (type, mode, size, "
                   "modification time and name of each entry, as ls -l), the whole tree below "
                   "it with recursive, or the entries below it whose name matches a glob "
                   "pattern.",
    .params = list_params,
    .output_schema = list_output_schema,
    .hints = CSR_MCP_READ_ONLY | CSR_MCP_IDEMPOTENT,
    .command = list_cmd,
    .pick_command = csr_mcp_sandbox_list_find,
    .check = csr_mcp_sandbox_list_check,
    .server_args = csr_mcp_sandbox_list_args,
    .render = csr_mcp_sandbox_list_text },
  { .name = "sandbox_run",
    .title = "Run Python in a sandbox",
    .description = "Run a Python 3 program in a sandbox made by sandbox_create or "
                   "sandbox_restore, as execute_python_code does (the same gate, diagnosis and "
                   "repair, at most 3 attempts) but inside the sandbox: in its working "
                   "directory (/work), seeing and changing its files. With session, the code is "
                   "a cell of a persistent interpreter of that name: its variables stay for the "
                   "next call with the same session; a cell that raises leaves the session "
                   "alive, and a repaired cell runs again only when it had not run (blocked by "
                   "the gate, or a syntax error). The text is the standard output on success, "
                   "else the report of execute_python_code ('error_type:', 'root_cause_line:', "
                   "'message:', 'stderr:', ...).",
    .params = run_params,
    .output_schema = run_output_schema,
    .command = run_cmd,
    .after_args = run_after,
    .check = csr_mcp_code_check,
    .server_args = csr_mcp_sandbox_run_args,
    .render = csr_mcp_sandbox_run_text,
    .run_document = true },
  { .name = "sandbox_checkpoint",
    .title = "Checkpoint a sandbox",
    .description = "Save a sandbox's files (what was written in it since it was made, not its "
                   "running processes, nor /tmp) as a checkpoint, and return the checkpoint's "
                   "id. sandbox_restore makes a new sandbox from it, in this session or a later "
                   "one. Without leave_running the sandbox is stopped afterwards and runs no more "
                   "commands. A checkpoint outlives the session (until its ttl, if given).",
    .params = checkpoint_params,
    .output_schema = checkpoint_output_schema,
    .hints = CSR_MCP_DESTRUCTIVE,
    .command = checkpoint_cmd,
    .render = csr_mcp_sandbox_checkpoint_text },
  { .name = "sandbox_restore",
    .title = "Restore a sandbox from a checkpoint",
    .description = "Make a new sandbox from a checkpoint of sandbox_checkpoint: the files it "
                   "saved, the limits and environment of the sandbox it came from, no running "
                   "process. Returns the new sandbox's id once it runs; use it as one made by "
                   "sandbox_create (it is removed with sandbox_terminate, and when this session "
                   "ends).",
    .params = restore_params,
    .output_schema = restore_output_schema,
    .command = restore_cmd,
    .render = csr_mcp_sandbox_restore_text,
    .after = csr_mcp_sandbox_created,
    .creates_sandbox = true },
  { .name = "sandbox_terminate",
    .title = "Remove a sandbox",
    .description = "Remove a sandbox: kill its processes and delete its files.",
    .params = terminate_params,
    .output_schema = terminate_output_schema,
    .hints = CSR_MCP_DESTRUCTIVE | CSR_MCP_IDEMPOTENT,
    .command = terminate_cmd,
    .render = csr_mcp_sandbox_terminate_text,
    .after = csr_mcp_sandbox_removed },
  { 0 },
};

const struct csr_mcp_tool *
csr_mcp_tool_find (const char *name)
{
  for (const struct csr_mcp_tool *t = csr_mcp_tools; t->name; t++)
    if (strcmp (t->name, name) == 0)
      return t;
  return NULL;
}

/* ------------------------------------------------------------ schemas */

int
csr_mcp_format_parse (const char *s, enum csr_mcp_format *f)
{
  static const struct
  {
    const char *name;
    enum csr_mcp_format f;
  } names[] = {
    { "mcp", CSR_MCP_FORMAT_MCP },
    { "openai", CSR_MCP_FORMAT_OPENAI },
    { "anthropic", CSR_MCP_FORMAT_ANTHROPIC },
    { "gemini", CSR_MCP_FORMAT_GEMINI },
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp (s, names[i].name) == 0)
      {
        *f = names[i].f;
        return 0;
      }
  return -1;
}

static void
gen_double (struct csr_jgen *w, const char *key, double v)
{
  csr_jgen_str (w, key);
  csr_jgen_double (w, v);
}

/* The largest number a parameter takes: its own bound, or the one the
 * server's limits give it. */
static double
param_max (const struct csr_mcp_param *p, const struct csr_mcp_limits *lim)
{
  if (p->server_max && lim)
    {
      double m = p->server_max (lim);
      if (m > 0)
        return m;
    }
  return p->max;
}

static void
gen_string_schema (struct csr_jgen *w, const struct csr_mcp_param *p)
{
  csr_jgen_kv_str (w, "type", "string");
  if (p->pattern)
    csr_jgen_kv_str (w, "pattern", p->pattern);
  if (p->choices)
    csr_jgen_kv_strv (w, "enum", p->choices);
}

static void
gen_files_items (struct csr_jgen *w, enum csr_mcp_format f)
{
  csr_jgen_str (w, "items");
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "type", "object");
  csr_jgen_str (w, "properties");
  csr_jgen_map_open (w);
  csr_jgen_str (w, "path");
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "type", "string");
  csr_jgen_kv_str (w, "description",
                   "Where the file goes: relative to /work, or absolute below /work or /tmp");
  csr_jgen_map_close (w);
  csr_jgen_str (w, "content");
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "type", "string");
  csr_jgen_kv_str (w, "description", "The file's contents (text, or base64 with encoding)");
  csr_jgen_map_close (w);
  csr_jgen_str (w, "encoding");
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "type", "string");
  csr_jgen_kv_strv (w, "enum", encodings);
  csr_jgen_kv_str (w, "description", "How content is written (default utf-8)");
  csr_jgen_map_close (w);
  csr_jgen_map_close (w);
  const char *req[] = { "path", "content", NULL };
  csr_jgen_kv_strv (w, "required", req);
  if (f != CSR_MCP_FORMAT_GEMINI)
    {
      csr_jgen_str (w, "additionalProperties");
      csr_jgen_bool (w, false);
    }
  csr_jgen_map_close (w);
}

static void
gen_param (struct csr_jgen *w, const struct csr_mcp_param *p, enum csr_mcp_format f,
           const struct csr_mcp_limits *lim)
{
  csr_jgen_str (w, p->name);
  csr_jgen_map_open (w);
  switch (p->type)
    {
    case CSR_MCP_STRING:
      gen_string_schema (w, p);
      break;
    case CSR_MCP_INTEGER:
    case CSR_MCP_NUMBER:
      csr_jgen_kv_str (w, "type", p->type == CSR_MCP_INTEGER ? "integer" : "number");
      gen_double (w, "minimum", p->min);
      if (param_max (p, lim) > 0)
        gen_double (w, "maximum", param_max (p, lim));
      break;
    case CSR_MCP_BOOLEAN:
      csr_jgen_kv_str (w, "type", "boolean");
      break;
    case CSR_MCP_STRINGS:
      csr_jgen_kv_str (w, "type", "array");
      csr_jgen_str (w, "items");
      csr_jgen_map_open (w);
      gen_string_schema (w, p);
      csr_jgen_map_close (w);
      if (p->max_items)
        csr_jgen_kv_int (w, "maxItems", (long long)p->max_items);
      break;
    case CSR_MCP_FILES:
      csr_jgen_kv_str (w, "type", "array");
      gen_files_items (w, f);
      if (p->max_items)
        csr_jgen_kv_int (w, "maxItems", (long long)p->max_items);
      break;
    case CSR_MCP_INTEGERS:
      csr_jgen_kv_str (w, "type", "array");
      csr_jgen_str (w, "items");
      csr_jgen_map_open (w);
      csr_jgen_kv_str (w, "type", "integer");
      gen_double (w, "minimum", p->min);
      if (param_max (p, lim) > 0)
        gen_double (w, "maximum", param_max (p, lim));
      csr_jgen_map_close (w);
      if (p->max_items)
        csr_jgen_kv_int (w, "maxItems", (long long)p->max_items);
      break;
    }
  csr_jgen_kv_str (w, "description", p->description);
  csr_jgen_map_close (w);
}

/* The parameters as a JSON Schema object (Gemini's OpenAPI subset has no
 * additionalProperties). */
static void
gen_input_schema (struct csr_jgen *w, const struct csr_mcp_tool *t, enum csr_mcp_format f,
                  const struct csr_mcp_limits *lim)
{
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "type", "object");
  csr_jgen_str (w, "properties");
  csr_jgen_map_open (w);
  for (const struct csr_mcp_param *p = t->params; p->name; p++)
    gen_param (w, p, f, lim);
  csr_jgen_map_close (w);
  csr_jgen_str (w, "required");
  csr_jgen_array_open (w);
  for (const struct csr_mcp_param *p = t->params; p->name; p++)
    if (p->required)
      csr_jgen_str (w, p->name);
  csr_jgen_array_close (w);
  if (f != CSR_MCP_FORMAT_GEMINI)
    {
      csr_jgen_str (w, "additionalProperties");
      csr_jgen_bool (w, false);
    }
  csr_jgen_map_close (w);
}

/* PROTOCOL is at least SINCE (versions are dates: they compare as strings). */
static bool
since (const char *protocol, const char *since)
{
  return protocol == NULL || strcmp (protocol, since) >= 0;
}

static void
gen_annotations (struct csr_jgen *w, const struct csr_mcp_tool *t)
{
  csr_jgen_str (w, "annotations");
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "title", t->title);
  static const struct
  {
    const char *key;
    unsigned bit;
  } hints[] = {
    { "readOnlyHint", CSR_MCP_READ_ONLY },
    { "destructiveHint", CSR_MCP_DESTRUCTIVE },
    { "idempotentHint", CSR_MCP_IDEMPOTENT },
    { "openWorldHint", CSR_MCP_OPEN_WORLD },
  };
  for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
    {
      csr_jgen_str (w, hints[i].key);
      csr_jgen_bool (w, (t->hints & hints[i].bit) != 0);
    }
  csr_jgen_map_close (w);
}

static void
gen_tool (struct csr_jgen *w, const struct csr_mcp_tool *t, enum csr_mcp_format f,
          const struct csr_mcp_limits *lim, const char *protocol)
{
  csr_jgen_map_open (w);
  if (f == CSR_MCP_FORMAT_OPENAI)
    {
      csr_jgen_kv_str (w, "type", "function");
      csr_jgen_str (w, "function");
      csr_jgen_map_open (w);
    }
  csr_jgen_kv_str (w, "name", t->name);
  if (f == CSR_MCP_FORMAT_MCP && since (protocol, "2025-06-18"))
    csr_jgen_kv_str (w, "title", t->title);
  csr_jgen_kv_str (w, "description", t->description);
  csr_jgen_str (w, f == CSR_MCP_FORMAT_MCP         ? "inputSchema"
                   : f == CSR_MCP_FORMAT_ANTHROPIC ? "input_schema"
                                                   : "parameters");
  gen_input_schema (w, t, f, lim);
  if (f == CSR_MCP_FORMAT_MCP && t->output_schema && since (protocol, "2025-06-18"))
    {
      char yerr[128];
      cleanup_yajl_val yajl_val s = yajl_tree_parse (t->output_schema, yerr, sizeof yerr);
      if (s)
        {
          csr_jgen_str (w, "outputSchema");
          csr_jgen_tree (w, s);
        }
    }
  if (f == CSR_MCP_FORMAT_MCP && since (protocol, "2025-03-26"))
    gen_annotations (w, t);
  if (f == CSR_MCP_FORMAT_OPENAI)
    csr_jgen_map_close (w);
  csr_jgen_map_close (w);
}

void
csr_mcp_gen_tools (struct csr_jgen *w, enum csr_mcp_format f, const struct csr_mcp_limits *lim,
                   const char *protocol)
{
  if (f == CSR_MCP_FORMAT_MCP || f == CSR_MCP_FORMAT_GEMINI)
    {
      csr_jgen_map_open (w);
      csr_jgen_str (w, f == CSR_MCP_FORMAT_MCP ? "tools" : "functionDeclarations");
    }
  csr_jgen_array_open (w);
  for (const struct csr_mcp_tool *t = csr_mcp_tools; t->name; t++)
    gen_tool (w, t, f, lim, protocol);
  csr_jgen_array_close (w);
  if (f == CSR_MCP_FORMAT_MCP || f == CSR_MCP_FORMAT_GEMINI)
    csr_jgen_map_close (w);
}

/* ------------------------------------------------------------ the check of a call */

double
csr_mcp_number (yajl_val v)
{
  return v && YAJL_IS_NUMBER (v) ? strtod (YAJL_GET_NUMBER (v), NULL) : 0;
}

/* The whole of S matches the ERE PATTERN. */
static bool
matches (const char *pattern, const char *s)
{
  regex_t re;
  if (regcomp (&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
    return false;
  bool ok = regexec (&re, s, 0, NULL, 0) == 0;
  regfree (&re);
  return ok;
}

static int
check_string (const struct csr_mcp_param *p, yajl_val v, struct csr_jpath *x)
{
  if (!YAJL_IS_STRING (v))
    return csr_jpath_fail (x, "expected a string, got %s", csr_json_type_name (v));
  /* A positional argument is never read as an option. */
  if (p->pass == CSR_MCP_PASS_ARG && v->u.string[0] == '-')
    return csr_jpath_fail (x, "'%.80s' may not start with '-'", v->u.string);
  if (p->pattern && !matches (p->pattern, v->u.string))
    return csr_jpath_fail (x, "'%.80s' is not valid (it must match %s)", v->u.string, p->pattern);
  if (p->base64)
    {
      char *data = NULL;
      size_t len = 0, bad = 0;
      if (csr_base64_decode (v->u.string, strlen (v->u.string), &data, &len, &bad) < 0)
        return errno == ENOMEM ? csr_jpath_oom (x)
                               : csr_jpath_fail (x, "not base64 (at offset %zu)", bad);
      free (data);
    }
  if (p->choices)
    {
      for (const char *const *c = p->choices; *c; c++)
        if (strcmp (*c, v->u.string) == 0)
          return 0;
      return csr_jpath_fail (x, "'%.80s' is not one of the allowed values", v->u.string);
    }
  return 0;
}

static int
check_number (const struct csr_mcp_param *p, yajl_val v, const struct csr_mcp_limits *lim,
              struct csr_jpath *x)
{
  if (!YAJL_IS_NUMBER (v))
    return csr_jpath_fail (x, "expected %s, got %s",
                           p->type == CSR_MCP_INTEGER ? "an integer" : "a number",
                           csr_json_type_name (v));
  const char *r = YAJL_GET_NUMBER (v);
  if (p->type == CSR_MCP_INTEGER && strpbrk (r, ".eE"))
    return csr_jpath_fail (x, "expected an integer, got %s", r);
  double d = strtod (r, NULL);
  double max = param_max (p, lim);
  if (!isfinite (d) || d < p->min)
    return csr_jpath_fail (x, "%s is below the minimum (%g)", r, p->min);
  if (max > 0 && d > max)
    return csr_jpath_fail (x, "%s is above the maximum (%g%s)", r, max,
                           p->server_max && p->server_max_why ? p->server_max_why : "");
  return 0;
}

static int
check_files (yajl_val v, struct csr_jpath *x)
{
  for (size_t i = 0; i < v->u.array.len; i++)
    {
      size_t saved = csr_jpath_push_index (x, i);
      yajl_val f = v->u.array.values[i];
      if (!YAJL_IS_OBJECT (f))
        return csr_jpath_fail (x, "expected an object {path, content, encoding}, got %s",
                               csr_json_type_name (f));
      for (size_t k = 0; k < f->u.object.len; k++)
        {
          const char *key = f->u.object.keys[k];
          yajl_val m = f->u.object.values[k];
          size_t s2 = csr_jpath_push_key (x, key);
          if (strcmp (key, "path") != 0 && strcmp (key, "content") != 0
              && strcmp (key, "encoding") != 0)
            return csr_jpath_fail (x, "unknown member (path, content and encoding are)");
          if (!YAJL_IS_STRING (m))
            return csr_jpath_fail (x, "expected a string, got %s", csr_json_type_name (m));
          if (strcmp (key, "encoding") == 0 && strcmp (m->u.string, "utf-8") != 0
              && strcmp (m->u.string, "base64") != 0)
            return csr_jpath_fail (x, "'%.40s' is not utf-8 or base64", m->u.string);
          csr_jpath_pop (x, s2);
        }
      if (!csr_json_get (f, "path") || !csr_json_get (f, "content"))
        {
          csr_jpath_push_key (x, csr_json_get (f, "path") ? "content" : "path");
          return csr_jpath_fail (x, "required field is missing");
        }
      csr_jpath_pop (x, saved);
    }
  return 0;
}

static int
check_value (const struct csr_mcp_param *p, yajl_val v, const struct csr_mcp_limits *lim,
             struct csr_jpath *x)
{
  switch (p->type)
    {
    case CSR_MCP_STRING:
      return check_string (p, v, x);
    case CSR_MCP_INTEGER:
    case CSR_MCP_NUMBER:
      return check_number (p, v, lim, x);
    case CSR_MCP_BOOLEAN:
      if (!YAJL_IS_TRUE (v) && !YAJL_IS_FALSE (v))
        return csr_jpath_fail (x, "expected a boolean, got %s", csr_json_type_name (v));
      return 0;
    case CSR_MCP_STRINGS:
    case CSR_MCP_FILES:
    case CSR_MCP_INTEGERS:
      if (!YAJL_IS_ARRAY (v))
        return csr_jpath_fail (x, "expected an array, got %s", csr_json_type_name (v));
      if (p->max_items && v->u.array.len > p->max_items)
        return csr_jpath_fail (x, "%zu items: at most %zu are allowed", v->u.array.len,
                               p->max_items);
      if (p->type == CSR_MCP_FILES)
        return check_files (v, x);
      for (size_t i = 0; i < v->u.array.len; i++)
        {
          size_t saved = csr_jpath_push_index (x, i);
          yajl_val item = v->u.array.values[i];
          if (p->type == CSR_MCP_INTEGERS)
            {
              struct csr_mcp_param one = *p;
              one.type = CSR_MCP_INTEGER;
              if (check_number (&one, item, lim, x) < 0)
                return -1;
              for (size_t k = 0; k < i; k++)
                if (strcmp (YAJL_GET_NUMBER (v->u.array.values[k]), YAJL_GET_NUMBER (item)) == 0)
                  return csr_jpath_fail (x, "%s is also item %zu", YAJL_GET_NUMBER (item), k);
            }
          else if (check_string (p, item, x) < 0)
            return -1;
          csr_jpath_pop (x, saved);
        }
      return 0;
    }
  return 0;
}

int
csr_mcp_args_check (const struct csr_mcp_tool *t, yajl_val args, const struct csr_mcp_limits *lim,
                    csr_error **err)
{
  struct csr_jpath x = { .err = err, .what = "the arguments" };
  csr_jpath_push_key (&x, "arguments");
  if (args && !YAJL_IS_OBJECT (args))
    return csr_jpath_fail (&x, "expected an object, got %s", csr_json_type_name (args));
  size_t n = args ? args->u.object.len : 0;
  for (size_t i = 0; i < n; i++)
    {
      const char *key = args->u.object.keys[i];
      const struct csr_mcp_param *p = t->params;
      while (p->name && strcmp (p->name, key) != 0)
        p++;
      size_t saved = csr_jpath_push_key (&x, key);
      if (p->name == NULL)
        {
          char known[256] = "";
          for (const struct csr_mcp_param *q = t->params; q->name; q++)
            snprintf (known + strlen (known), sizeof known - strlen (known), "%s%s",
                      known[0] ? ", " : "", q->name);
          return csr_jpath_fail (&x, "unknown argument (%s takes %s)", t->name, known);
        }
      /* null is the same as leaving it out */
      if (!YAJL_IS_NULL (args->u.object.values[i])
          && check_value (p, args->u.object.values[i], lim, &x) < 0)
        return -1;
      csr_jpath_pop (&x, saved);
    }
  for (const struct csr_mcp_param *p = t->params; p->name; p++)
    {
      yajl_val v = csr_json_get (args, p->name);
      if (p->required && (v == NULL || YAJL_IS_NULL (v)))
        {
          csr_jpath_push_key (&x, p->name);
          return csr_jpath_fail (&x, "required argument is missing");
        }
    }
  if (t->check && t->check (args, lim, &x) < 0)
    return -1;
  return 0;
}

/* ------------------------------------------------------------ a command tool's command line */

void
csr_mcp_argv_add (struct csr_mcp_argv *a, const char *s)
{
  if (a->oom)
    return;
  if (a->n + 2 > a->cap)
    {
      size_t cap = a->cap ? a->cap * 2 : 16;
      char **nv = realloc (a->v, cap * sizeof *nv);
      if (nv == NULL)
        {
          a->oom = true;
          return;
        }
      a->v = nv;
      a->cap = cap;
    }
  if ((a->v[a->n] = strdup (s)) == NULL)
    {
      a->oom = true;
      return;
    }
  a->v[++a->n] = NULL;
}

void
csr_mcp_argv_addf (struct csr_mcp_argv *a, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *s = NULL;
  int r = vasprintf (&s, fmt, ap);
  va_end (ap);
  if (r < 0)
    {
      a->oom = true;
      return;
    }
  csr_mcp_argv_add (a, s);
  free (s);
}

void
csr_mcp_argv_release (struct csr_mcp_argv *a)
{
  for (size_t i = 0; i < a->n; i++)
    free (a->v[i]);
  free (a->v);
  memset (a, 0, sizeof *a);
}

/* A number as csrun's command line writes it (no exponent: "1.5", "300"). */
static void
add_number_option (struct csr_mcp_argv *av, const struct csr_mcp_param *p, yajl_val v)
{
  double d = csr_mcp_number (v);
  char num[64];
  if (p->type == CSR_MCP_INTEGER)
    snprintf (num, sizeof num, "%lld", (long long)d);
  else
    snprintf (num, sizeof num, "%.3f", d);
  csr_mcp_argv_addf (av, "%s=%s%s", p->flag, num, p->unit ? p->unit : "");
}

static void
add_option (struct csr_mcp_argv *av, const struct csr_mcp_param *p, yajl_val v)
{
  switch (p->type)
    {
    case CSR_MCP_STRING:
      csr_mcp_argv_addf (av, "%s=%s", p->flag, v->u.string);
      break;
    case CSR_MCP_INTEGER:
    case CSR_MCP_NUMBER:
      add_number_option (av, p, v);
      break;
    case CSR_MCP_BOOLEAN:
      if (YAJL_IS_TRUE (v))
        csr_mcp_argv_add (av, p->flag);
      break;
    case CSR_MCP_STRINGS:
      for (size_t i = 0; i < v->u.array.len; i++)
        csr_mcp_argv_addf (av, "%s=%s", p->flag, v->u.array.values[i]->u.string);
      break;
    case CSR_MCP_INTEGERS:
      for (size_t i = 0; i < v->u.array.len; i++)
        add_number_option (av, p, v->u.array.values[i]);
      break;
    case CSR_MCP_FILES:
      break;
    }
}

void
csr_mcp_input_release (struct csr_mcp_input *in)
{
  free (in->owned);
  memset (in, 0, sizeof *in);
}

/* P's value V as the command's standard input. */
static int
set_input (const struct csr_mcp_param *p, yajl_val v, struct csr_mcp_input *in, csr_error **err)
{
  const char *s = v->u.string;
  if (!p->base64)
    {
      in->data = s;
      in->len = strlen (s);
      return 0;
    }
  size_t bad = 0;
  if (csr_base64_decode (s, strlen (s), &in->owned, &in->len, &bad) < 0)
    return errno == ENOMEM ? csr_error_set (err, ENOMEM, "out of memory decoding %s", p->name)
                           : csr_error_set (err, EINVAL, "arguments.%s: not base64 (at offset %zu)",
                                            p->name, bad);
  in->data = in->owned;
  return 0;
}

int
csr_mcp_command_argv (const struct csr_mcp_tool *t, yajl_val args, const struct csr_mcp_limits *lim,
                      struct csr_mcp_argv *av, struct csr_mcp_input *in, csr_error **err)
{
  memset (in, 0, sizeof *in);
  const char *const *cmd = t->pick_command ? t->pick_command (args) : NULL;
  if (cmd == NULL)
    cmd = t->command;
  for (const char *const *c = cmd; c && *c; c++)
    csr_mcp_argv_add (av, *c);
  if (t->server_args)
    t->server_args (args, lim, av);
  /* Options first, then positional arguments and AFTER_ARGS, then "--" and
   * the rest: the values are whole arguments (FLAG=VALUE), never parsed as
   * options. */
  static const enum csr_mcp_pass order[]
      = { CSR_MCP_PASS_OPTION, CSR_MCP_PASS_ARG, CSR_MCP_PASS_REST, CSR_MCP_PASS_STDIN };
  for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
    {
      if (order[k] == CSR_MCP_PASS_REST)
        for (const char *const *a = t->after_args; a && *a; a++)
          csr_mcp_argv_add (av, *a);
      for (const struct csr_mcp_param *p = t->params; p->name; p++)
        {
          yajl_val v = csr_json_get (args, p->name);
          if (p->pass != order[k] || v == NULL || YAJL_IS_NULL (v))
            continue;
          switch (p->pass)
            {
            case CSR_MCP_PASS_OPTION:
              add_option (av, p, v);
              break;
            case CSR_MCP_PASS_ARG:
              csr_mcp_argv_add (av, v->u.string);
              break;
            case CSR_MCP_PASS_REST:
              csr_mcp_argv_add (av, "--");
              for (size_t i = 0; i < v->u.array.len; i++)
                csr_mcp_argv_add (av, v->u.array.values[i]->u.string);
              break;
            case CSR_MCP_PASS_STDIN:
              if (in->data == NULL && set_input (p, v, in, err) < 0)
                return -1;
              break;
            case CSR_MCP_PASS_NONE:
              break;
            }
        }
    }
  if (av->oom)
    return csr_error_set (err, ENOMEM, "out of memory building the command line of %s", t->name);
  return 0;
}

size_t
csr_mcp_max_frame (const struct csr_mcp_limits *lim)
{
  return lim && lim->max_frame ? lim->max_frame : CSR_MCP_MAX_FRAME_DEFAULT;
}
