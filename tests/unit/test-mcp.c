/* The MCP server's pure parts: the line reader, the envelope check, the
 * tools' argument check and command lines, the texts and structured results
 * made of what a command printed, CodeShield's text, the cut that fits a
 * result in its frame, base64. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>

#include "mcp/jsonrpc.h"
#include "mcp/mcp-internal.h"
#include "mcp/tool-impl.h"
#include "mcp/tools.h"
#include "util/base64.h"
#include "util/json.h"

/* ------------------------------------------------------------ lines */

Test (mcp_reader, splits_lines_fed_in_pieces)
{
  struct csr_rpc_reader r;
  csr_rpc_reader_init (&r, 100);
  char *line;
  size_t len;
  cr_assert_eq (csr_rpc_reader_feed (&r, "{\"a\":", 5), 0);
  cr_assert_eq (csr_rpc_reader_next (&r, &line, &len), 0);
  cr_assert_eq (csr_rpc_reader_feed (&r, "1}\r\n{}\n{", 9), 0);
  cr_assert_eq (csr_rpc_reader_next (&r, &line, &len), 1);
  cr_assert_str_eq (line, "{\"a\":1}", "the \\r before the newline goes");
  cr_assert_eq (len, 7);
  cr_assert_eq (csr_rpc_reader_next (&r, &line, &len), 1);
  cr_assert_str_eq (line, "{}");
  cr_assert_eq (csr_rpc_reader_next (&r, &line, &len), 0);
  cr_assert_eq (csr_rpc_reader_last (&r, &line, &len), 1, "the unterminated last line");
  cr_assert_str_eq (line, "{");
  cr_assert_eq (csr_rpc_reader_last (&r, &line, &len), 0);
  csr_rpc_reader_release (&r);
}

Test (mcp_reader, drops_a_long_line_and_goes_on)
{
  struct csr_rpc_reader r;
  csr_rpc_reader_init (&r, 10);
  char *line;
  size_t len;
  char big[64];
  memset (big, 'x', sizeof big);
  /* More than 10 bytes without a newline: reported once, then skipped. */
  cr_assert_eq (csr_rpc_reader_feed (&r, big, sizeof big), 0);
  cr_assert_eq (csr_rpc_reader_next (&r, &line, &len), 2);
  cr_assert_eq (csr_rpc_reader_next (&r, &line, &len), 0);
  cr_assert_eq (csr_rpc_reader_feed (&r, big, sizeof big), 0);
  cr_assert_eq (csr_rpc_reader_next (&r, &line, &len), 0, "still inside the long line");
  cr_assert_eq (csr_rpc_reader_feed (&r, "xx\nok\n", 6), 0);
  cr_assert_eq (csr_rpc_reader_next (&r, &line, &len), 1);
  cr_assert_str_eq (line, "ok");
  /* A long line that arrives whole, newline included. */
  cr_assert_eq (csr_rpc_reader_feed (&r, "0123456789abc\nyes\n", 18), 0);
  cr_assert_eq (csr_rpc_reader_next (&r, &line, &len), 2);
  cr_assert_eq (csr_rpc_reader_next (&r, &line, &len), 1);
  cr_assert_str_eq (line, "yes");
  csr_rpc_reader_release (&r);
}

/* ------------------------------------------------------------ messages */

static void
expect_kind (const char *text, enum csr_rpc_kind kind, int code, const char *words)
{
  struct csr_rpc_msg m;
  csr_rpc_parse (text, strlen (text), &m);
  cr_assert_eq (m.kind, kind, "%s: kind %d, expected %d (%s)", text, m.kind, kind, m.error_message);
  if (kind == CSR_RPC_INVALID)
    {
      cr_assert_eq (m.error_code, code, "%s: code %d", text, m.error_code);
      cr_assert (strstr (m.error_message, words), "%s: '%s' lacks '%s'", text, m.error_message,
                 words);
    }
  csr_rpc_msg_release (&m);
}

Test (mcp_msg, kinds_and_errors)
{
  expect_kind ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", CSR_RPC_REQUEST, 0, NULL);
  expect_kind ("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
               CSR_RPC_NOTIFICATION, 0, NULL);
  expect_kind ("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}", CSR_RPC_RESPONSE, 0, NULL);
  expect_kind ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", CSR_RPC_INVALID, -32700,
               "Parse error");
  expect_kind ("[]", CSR_RPC_INVALID, -32600, "batches");
  expect_kind ("\"x\"", CSR_RPC_INVALID, -32600, "expected a JSON object, got a string");
  expect_kind ("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", CSR_RPC_INVALID, -32600,
               "id: expected a string or an integer");
  expect_kind ("{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"ping\"}", CSR_RPC_INVALID, -32600,
               "id:");
  expect_kind ("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", CSR_RPC_INVALID, -32600,
               "null");
  expect_kind ("{\"jsonrpc\":2,\"id\":1,\"method\":\"ping\"}", CSR_RPC_INVALID, -32600,
               "jsonrpc: expected \"2.0\"");
  expect_kind ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":7}", CSR_RPC_INVALID,
               -32600, "params: expected an object, got a number");
  expect_kind ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"method\":\"b\"}", CSR_RPC_INVALID,
               -32600, "duplicate key 'method'");
}

Test (mcp_msg, the_id_is_kept_as_json_text)
{
  struct csr_rpc_msg m;
  const char *t = "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"method\":\"ping\"}";
  csr_rpc_parse (t, strlen (t), &m);
  cr_assert_str_eq (m.id, "\"a\\\"b\"");
  size_t len = 0;
  char *line = csr_rpc_result_line (m.id, "{}", &len);
  cr_assert_str_eq (line, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"result\":{}}\n");
  cr_assert_eq (len, strlen (line));
  free (line);
  line = csr_rpc_error_line (NULL, -32700, "bad \"x\"\n", &len);
  cr_assert_str_eq (line, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"
                          "\"bad \\\"x\\\"\\n\"}}\n");
  free (line);
  csr_rpc_msg_release (&m);
}

/* ------------------------------------------------------------ arguments */

static const char *const upstream_args[] = { "--upstream=9000:127.0.0.1:22", NULL };
static const unsigned upstream_ports[] = { 9000 };
static const struct csr_mcp_limits lim = { .max_timeout_s = 60,
                                           .max_output = 65536,
                                           .max_file_bytes = 100,
                                           .max_code = 1000,
                                           .sandbox_args = upstream_args,
                                           .upstream_ports = upstream_ports,
                                           .n_upstream_ports = 1 };

static void
expect_args (const char *tool, const char *args, const char *error)
{
  char yerr[128];
  yajl_val v = yajl_tree_parse (args, yerr, sizeof yerr);
  cr_assert_not_null (v, "%s: %s", args, yerr);
  csr_error *e = NULL;
  int rc = csr_mcp_args_check (csr_mcp_tool_find (tool), v, &lim, &e);
  if (error == NULL)
    cr_assert_eq (rc, 0, "%s %s: %s", tool, args, e ? e->msg : "");
  else
    {
      cr_assert_eq (rc, -1, "%s %s: accepted", tool, args);
      cr_assert (strstr (e->msg, error), "%s %s: '%s' lacks '%s'", tool, args, e->msg, error);
    }
  csr_error_free (e);
  yajl_tree_free (v);
}

Test (mcp_args, checked_against_the_table)
{
  const char *py = "execute_python_code";
  expect_args (py, "{\"code\":\"print(1)\"}", NULL);
  expect_args (py, "{\"code\":\"print(1)\",\"timeout\":null}", NULL);
  expect_args (py, "{}", "arguments.code: required argument is missing");
  expect_args (py, "{\"code\":[]}", "arguments.code: expected a string, got an array");
  expect_args (py, "{\"code\":\"x\",\"bogus\":1}", "arguments.bogus: unknown argument");
  expect_args (py, "{\"code\":\"x\",\"timeout\":\"5\"}", "arguments.timeout: expected a number");
  expect_args (py, "{\"code\":\"x\",\"timeout\":0}", "arguments.timeout: 0 is below");
  expect_args (py, "{\"code\":\"x\",\"timeout\":61}", "above the maximum (60 s");
  expect_args (py, "{\"code\":\"\\n\\n\"}", "arguments.code: ");
  char big[1100 + 32];
  snprintf (big, sizeof big, "{\"code\":\"%01100d\"}", 0);
  expect_args (py, big, "--max-code-size");
  expect_args (py, "{\"code\":\"x\",\"files\":{}}", "arguments.files: expected an array");
  expect_args (py, "{\"code\":\"x\",\"files\":[{\"path\":\"a\"}]}",
               "arguments.files[0].content: required");
  expect_args (py, "{\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\",\"mode\":1}]}",
               "arguments.files[0].mode: unknown member");
  expect_args (py, "{\"code\":\"x\",\"files\":[{\"path\":\"/etc/passwd\",\"content\":\"\"}]}",
               "arguments.files[0].path: must be relative to /work");
  expect_args (py, "{\"code\":\"x\",\"files\":[{\"path\":\"a:b\",\"content\":\"\"}]}", "':'");
  expect_args (py, "{\"code\":\"x\",\"files\":[{\"path\":\"snippet.py\",\"content\":\"\"}]}",
               "snippet.py");
  expect_args (py,
               "{\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"\"},{\"path\":\"/work/"
               "a\",\"content\":\"\"}]}",
               "arguments.files[1].path: /work/a is also files[0]'s path");
  expect_args (py,
               "{\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"a=\",\"encoding\":"
               "\"base64\"}]}",
               "arguments.files[0].content: not base64");
  expect_args (py,
               "{\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"x\",\"encoding\":"
               "\"hex\"}]}",
               "arguments.files[0].encoding: 'hex' is not utf-8 or base64");
  char many[300];
  snprintf (many, sizeof many,
            "{\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"%0101d\"}]}", 0);
  expect_args (py, many, "larger than 100 bytes");
  const char *ex = "sandbox_exec";
  expect_args (ex, "{\"sandbox\":\"box\",\"argv\":[\"ls\"]}", NULL);
  expect_args (ex, "{\"sandbox\":\"box\",\"command\":\"ls\",\"argv\":[\"ls\"]}", "not both");
  expect_args (ex, "{\"sandbox\":\"box\",\"argv\":[]}", "arguments.argv: empty");
  expect_args (ex, "{\"sandbox\":\"-x\",\"argv\":[\"ls\"]}", "arguments.sandbox:");
  expect_args (ex, "{\"sandbox\":\"a/b\",\"argv\":[\"ls\"]}", "is not valid");
  expect_args (ex, "{\"sandbox\":\"b\",\"argv\":[\"ls\"],\"env\":[\"1X=2\"]}",
               "arguments.env[0]: '1X=2' is not valid");
  expect_args ("sandbox_create", "{\"memory\":1.5}", "arguments.memory: expected an integer");
  expect_args ("sandbox_create", "{\"memory\":8}", "arguments.memory: 8 is below");
  expect_args ("sandbox_create", "[]", "arguments: expected an object");
  expect_args ("sandbox_create", "{\"publish\":[8080,8081]}", NULL);
  expect_args ("sandbox_create", "{\"publish\":8080}", "arguments.publish: expected an array");
  expect_args ("sandbox_create", "{\"publish\":[0]}", "arguments.publish[0]: 0 is below");
  expect_args ("sandbox_create", "{\"publish\":[80,65536]}",
               "arguments.publish[1]: 65536 is above the maximum (65535)");
  expect_args ("sandbox_create", "{\"publish\":[\"80\"]}",
               "arguments.publish[0]: expected an integer, got a string");
  expect_args ("sandbox_create", "{\"publish\":[80,81,80]}", "arguments.publish[2]: 80 is also");
  expect_args ("sandbox_create", "{\"publish\":[80,9000]}",
               "arguments.publish[1]: port 9000 of the sandbox leads to the host already");
  const char *wr = "sandbox_write_file";
  expect_args (wr, "{\"sandbox\":\"b\",\"path\":\"a\",\"content\":\"\"}", NULL);
  expect_args (wr, "{\"sandbox\":\"b\",\"path\":\"a\",\"content_base64\":\"AP8=\"}", NULL);
  expect_args (wr, "{\"sandbox\":\"b\",\"path\":\"a\"}", "arguments: give either content");
  expect_args (wr, "{\"sandbox\":\"b\",\"path\":\"a\",\"content\":\"x\",\"content_base64\":\"\"}",
               "not both");
  expect_args (wr, "{\"sandbox\":\"b\",\"path\":\"a\",\"content_base64\":\"AP8*\"}",
               "arguments.content_base64: not base64 (at offset 3)");
  expect_args (wr, "{\"sandbox\":\"b\",\"content\":\"\"}", "arguments.path: required");
  expect_args (wr, "{\"sandbox\":\"b\",\"path\":\"a\",\"content\":\"\",\"mode\":\"0999\"}",
               "arguments.mode: '0999' is not valid");
  expect_args (wr, "{\"sandbox\":\"b\",\"path\":\"-a\",\"content\":\"\"}",
               "arguments.path: '-a' may not start with '-'");
  const char *rd = "sandbox_read_file";
  expect_args (rd, "{\"sandbox\":\"b\",\"path\":\"a\",\"max_bytes\":131072}", NULL);
  expect_args (rd, "{\"sandbox\":\"b\",\"path\":\"a\",\"max_bytes\":131073}",
               "arguments.max_bytes: 131073 is above the maximum (131072: an eighth of the "
               "server's --max-frame)");
  expect_args (rd, "{\"sandbox\":\"b\",\"path\":\"a\",\"max_bytes\":0}",
               "arguments.max_bytes: 0 is below");
  expect_args (rd, "{\"path\":\"a\"}", "arguments.sandbox: required");
  const char *ls = "sandbox_list_files";
  expect_args (ls, "{\"sandbox\":\"b\"}", NULL);
  expect_args (ls, "{\"sandbox\":\"b\",\"pattern\":\"*.py\",\"recursive\":true}", NULL);
  expect_args (ls, "{\"sandbox\":\"b\",\"pattern\":\"*.py\",\"recursive\":false}",
               "arguments.recursive: false with a pattern");
  expect_args (ls, "{\"sandbox\":\"b\",\"recursive\":1}",
               "arguments.recursive: expected a boolean, got a number");
  expect_args (ls, "{\"sandbox\":\"b\",\"max_entries\":2049}",
               "arguments.max_entries: 2049 is above the maximum (2048");
  const char *run = "sandbox_run";
  expect_args (run, "{\"sandbox\":\"b\",\"code\":\"print(1)\",\"session\":\"s-1.x\"}", NULL);
  expect_args (run, "{\"code\":\"print(1)\"}", "arguments.sandbox: required");
  expect_args (run, "{\"sandbox\":\"b\"}", "arguments.code: required");
  expect_args (run, "{\"sandbox\":\"b\",\"code\":\" \\n\"}", "arguments.code: ");
  char bigrun[1100 + 64];
  snprintf (bigrun, sizeof bigrun, "{\"sandbox\":\"b\",\"code\":\"%01100d\"}", 0);
  expect_args (run, bigrun, "arguments.code: 1100 bytes: larger than the server's --max-code-size");
  expect_args (run, "{\"sandbox\":\"b\",\"code\":\"x\",\"session\":\"a/b\"}",
               "arguments.session: 'a/b' is not valid");
  expect_args (run, "{\"sandbox\":\"b\",\"code\":\"x\",\"timeout\":61}",
               "arguments.timeout: 61 is above the maximum (60 s: the server's --timeout)");
  expect_args (run, "{\"sandbox\":\"b\",\"code\":\"x\",\"files\":[]}",
               "arguments.files: unknown argument (sandbox_run takes sandbox, code, session, "
               "timeout)");
  const char *ck = "sandbox_checkpoint";
  expect_args (ck, "{\"sandbox\":\"b\",\"ttl\":60,\"leave_running\":true}", NULL);
  expect_args (ck, "{\"sandbox\":\"b\",\"ttl\":0}", "arguments.ttl: 0 is below");
  expect_args (ck, "{\"sandbox\":\"b\",\"leave_running\":\"yes\"}",
               "arguments.leave_running: expected a boolean, got a string");
  const char *rs = "sandbox_restore";
  expect_args (rs, "{\"checkpoint\":\"0a1b\",\"name\":\"n\"}", NULL);
  expect_args (rs, "{\"checkpoint\":\"0a1\"}", "arguments.checkpoint: '0a1' is not valid");
  expect_args (rs, "{\"checkpoint\":\"0A1B\"}", "arguments.checkpoint: '0A1B' is not valid");
  expect_args (rs, "{\"name\":\"n\"}", "arguments.checkpoint: required");
  expect_args (rs, "{\"checkpoint\":\"0a1b\",\"name\":\"-n\"}",
               "arguments.name: '-n' is not valid");
}

/* Every entry of the table is one the server can list and run: a
 * description, an output schema that parses, a render for a command, a
 * flag for an option, strings for positional arguments; the schemas of
 * every format are JSON. */
Test (mcp_table, every_entry_is_complete)
{
  size_t n = 0;
  for (const struct csr_mcp_tool *t = csr_mcp_tools; t->name; t++, n++)
    {
      cr_assert (t->title && t->description && t->params, "%s", t->name);
      cr_assert_eq (csr_mcp_tool_find (t->name), t);
      if (t->output_schema)
        {
          char yerr[128];
          yajl_val v = yajl_tree_parse (t->output_schema, yerr, sizeof yerr);
          cr_assert (v && YAJL_IS_OBJECT (v), "%s: outputSchema: %s", t->name, yerr);
          yajl_tree_free (v);
        }
      cr_assert (t->command == NULL || t->render, "%s: a command tool renders", t->name);
      cr_assert (!t->run_document || t->command, "%s: a run document is a command's", t->name);
      cr_assert (t->pick_command == NULL || t->command, "%s: COMMAND marks a command tool",
                 t->name);
      for (const struct csr_mcp_param *p = t->params; p->name; p++)
        {
          cr_assert (p->description, "%s.%s", t->name, p->name);
          cr_assert (p->pass != CSR_MCP_PASS_OPTION || p->flag, "%s.%s: a flag", t->name, p->name);
          cr_assert (p->pass != CSR_MCP_PASS_ARG || p->type == CSR_MCP_STRING, "%s.%s", t->name,
                     p->name);
          cr_assert (p->pass != CSR_MCP_PASS_STDIN || p->type == CSR_MCP_STRING, "%s.%s", t->name,
                     p->name);
          cr_assert (t->command || p->pass == CSR_MCP_PASS_NONE, "%s.%s", t->name, p->name);
        }
    }
  cr_assert_eq (n, 10);
  static const enum csr_mcp_format formats[] = { CSR_MCP_FORMAT_MCP, CSR_MCP_FORMAT_OPENAI,
                                                 CSR_MCP_FORMAT_ANTHROPIC, CSR_MCP_FORMAT_GEMINI };
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    {
      struct csr_jgen w;
      cr_assert_eq (csr_jgen_init (&w, false, NULL), 0);
      csr_mcp_gen_tools (&w, formats[i], &lim, NULL);
      size_t len = 0;
      char *text = csr_jgen_finish (&w, "the schemas", &len, NULL);
      cr_assert_not_null (text);
      char yerr[128];
      yajl_val v = yajl_tree_parse (text, yerr, sizeof yerr);
      cr_assert_not_null (v, "format %zu: %s", i, yerr);
      yajl_tree_free (v);
      free (text);
    }
}

/* ------------------------------------------------------------ command lines */

static char *
joined_argv (const char *tool, const char *args, struct csr_mcp_input *in)
{
  char yerr[128];
  yajl_val v = yajl_tree_parse (args, yerr, sizeof yerr);
  cr_assert_not_null (v, "%s", yerr);
  struct csr_mcp_argv av = { 0 };
  csr_error *e = NULL;
  csr_mcp_input_release (in);
  cr_assert_eq (csr_mcp_command_argv (csr_mcp_tool_find (tool), v, &lim, &av, in, &e), 0);
  /* the input points into the arguments unless it was decoded */
  if (in->data && in->owned == NULL)
    {
      in->owned = malloc (in->len + 1);
      memcpy (in->owned, in->data, in->len + 1);
      in->data = in->owned;
    }
  char *s = calloc (1, 4096);
  for (size_t i = 0; i < av.n; i++)
    snprintf (s + strlen (s), 4096 - strlen (s), "%s%s", i ? "|" : "", av.v[i]);
  csr_mcp_argv_release (&av);
  yajl_tree_free (v);
  return s;
}

Test (mcp_argv, options_then_arguments_then_the_rest)
{
  struct csr_mcp_input in = { 0 };
  char *s = joined_argv (
      "sandbox_exec",
      "{\"argv\":[\"python3\",\"-c\",\"--x\"],\"env\":[\"A=1\",\"B=--y\"],\"sandbox\":\"box\","
      "\"working_dir\":\"/w\"}",
      &in);
  cr_assert_str_eq (s, "sandbox|exec|--json|--timeout=60.000s|--max-output=65536|--workdir=/w|"
                       "--env=A=1|--env=B=--y|box|--|python3|-c|--x");
  cr_assert_null (in.data);
  free (s);
  s = joined_argv ("sandbox_exec", "{\"sandbox\":\"box\",\"command\":\"ls -l\",\"timeout\":2.5}",
                   &in);
  cr_assert_str_eq (s, "sandbox|exec|--json|--timeout=2.500s|--max-output=65536|--sh=ls -l|box");
  free (s);
  s = joined_argv ("sandbox_create",
                   "{\"memory\":512,\"cpu\":250,\"idle_timeout\":0,\"name\":\"n\"}", &in);
  cr_assert_str_eq (s, "sandbox|create|--json|--upstream=9000:127.0.0.1:22|--name=n|--memory=512M|"
                       "--cpu=250m|--idle-timeout=0s");
  free (s);
  s = joined_argv ("sandbox_create", "{\"publish\":[8080,3000]}", &in);
  cr_assert_str_eq (s, "sandbox|create|--json|--upstream=9000:127.0.0.1:22|"
                       "--publish=127.0.0.1:0:8080|--publish=127.0.0.1:0:3000");
  free (s);
}

Test (mcp_argv, the_file_tools)
{
  struct csr_mcp_input in = { 0 };
  char *s
      = joined_argv ("sandbox_write_file",
                     "{\"content\":\"\\u00e9\\n\",\"mode\":\"755\",\"path\":\"d/f\",\"sandbox\":"
                     "\"box\"}",
                     &in);
  cr_assert_str_eq (s, "sandbox|write|--json|--mode=755|box|d/f");
  /* (a request with \u0000 in a string never gets here: csr_json_prescan) */
  cr_assert (in.len == 3 && memcmp (in.data, "\xc3\xa9\n", 3) == 0, "text in UTF-8");
  free (s);
  /* bytes: decoded, NULs and all */
  s = joined_argv ("sandbox_write_file",
                   "{\"sandbox\":\"box\",\"path\":\"/b\",\"content_base64\":\"AP8KAA==\"}", &in);
  cr_assert_str_eq (s, "sandbox|write|--json|box|/b");
  cr_assert_eq (in.len, 4);
  cr_assert (memcmp (in.data, "\0\xff\n\0", 4) == 0);
  free (s);
  s = joined_argv ("sandbox_read_file", "{\"sandbox\":\"box\",\"path\":\"f\"}", &in);
  cr_assert_str_eq (s, "sandbox|read|--max-size=131072|box|f", "the default: the largest");
  cr_assert_null (in.data);
  free (s);
  s = joined_argv ("sandbox_read_file", "{\"sandbox\":\"box\",\"path\":\"f\",\"max_bytes\":10}",
                   &in);
  cr_assert_str_eq (s, "sandbox|read|--max-size=10|box|f");
  free (s);
  s = joined_argv ("sandbox_list_files", "{\"sandbox\":\"box\"}", &in);
  cr_assert_str_eq (s, "sandbox|ls|--json|--max-entries=500|box");
  free (s);
  s = joined_argv ("sandbox_list_files",
                   "{\"path\":\"/w\",\"recursive\":true,\"max_entries\":7,\"sandbox\":\"box\"}",
                   &in);
  cr_assert_str_eq (s, "sandbox|ls|--json|--max-entries=7|--recursive|box|/w");
  free (s);
  /* a pattern: find, ID PATTERN [PATH] (find always goes down the tree) */
  s = joined_argv ("sandbox_list_files",
                   "{\"path\":\"/w\",\"recursive\":true,\"pattern\":\"*.py\",\"sandbox\":\"box\"}",
                   &in);
  cr_assert_str_eq (s, "sandbox|find|--json|--max-entries=500|box|*.py|/w");
  free (s);
  csr_mcp_input_release (&in);
  /* with a smaller frame, smaller maxima and defaults */
  struct csr_mcp_limits small = lim;
  small.max_frame = 64 << 10;
  cr_assert_eq (csr_mcp_read_max (&small), 8192);
  cr_assert_eq (csr_mcp_list_max (&small), 128);
  struct csr_mcp_argv av = { 0 };
  csr_mcp_sandbox_list_args (NULL, &small, &av);
  cr_assert_str_eq (av.v[0], "--max-entries=128");
  csr_mcp_argv_release (&av);
}

/* A tool of the kind the next sandbox commands make: a positional path, a
 * flag, the content on standard input. */
Test (mcp_argv, a_boolean_flag_and_standard_input)
{
  static const struct csr_mcp_param params[] = {
    { .name = "sandbox", .type = CSR_MCP_STRING, .required = true, .pass = CSR_MCP_PASS_ARG },
    { .name = "path", .type = CSR_MCP_STRING, .required = true, .pass = CSR_MCP_PASS_ARG },
    { .name = "content", .type = CSR_MCP_STRING, .pass = CSR_MCP_PASS_STDIN },
    { .name = "parents", .type = CSR_MCP_BOOLEAN, .pass = CSR_MCP_PASS_OPTION, .flag = "-p" },
    { 0 },
  };
  static const char *const cmd[] = { "sandbox", "write", NULL };
  const struct csr_mcp_tool t = { .name = "sandbox_write_file", .params = params, .command = cmd };
  char yerr[128];
  yajl_val v = yajl_tree_parse (
      "{\"content\":\"x\\ny\",\"parents\":true,\"path\":\"a/b\",\"sandbox\":\"s\"}", yerr,
      sizeof yerr);
  cr_assert_not_null (v, "%s", yerr);
  csr_error *e = NULL;
  cr_assert_eq (csr_mcp_args_check (&t, v, &lim, &e), 0);
  struct csr_mcp_argv av = { 0 };
  struct csr_mcp_input in;
  cr_assert_eq (csr_mcp_command_argv (&t, v, &lim, &av, &in, &e), 0);
  cr_assert_eq (av.n, 5);
  cr_assert_str_eq (av.v[2], "-p");
  cr_assert_str_eq (av.v[3], "s");
  cr_assert_str_eq (av.v[4], "a/b");
  cr_assert_null (av.v[5]);
  cr_assert_eq (in.len, 3);
  cr_assert (memcmp (in.data, "x\ny", 3) == 0);
  csr_mcp_argv_release (&av);
  csr_mcp_input_release (&in);
  yajl_tree_free (v);
  v = yajl_tree_parse ("{\"sandbox\":\"s\",\"path\":\"--x\"}", yerr, sizeof yerr);
  cr_assert_eq (csr_mcp_args_check (&t, v, &lim, &e), -1, "a positional argument like an option");
  cr_assert (strstr (e->msg, "arguments.path: '--x' may not start with '-'"), "%s", e->msg);
  csr_error_free (e);
  yajl_tree_free (v);
}

static yajl_val parse (const char *s);

/* A tool of the kind sandbox run makes: an option, the sandbox, a fixed "-"
 * (the code is the standard input), then "--" and the program's arguments. */
Test (mcp_argv, fixed_arguments_after_the_positional_ones)
{
  static const struct csr_mcp_param params[] = {
    { .name = "sandbox", .type = CSR_MCP_STRING, .required = true, .pass = CSR_MCP_PASS_ARG },
    { .name = "code", .type = CSR_MCP_STRING, .required = true, .pass = CSR_MCP_PASS_STDIN },
    { .name = "session", .type = CSR_MCP_STRING, .pass = CSR_MCP_PASS_OPTION, .flag = "--session" },
    { .name = "args", .type = CSR_MCP_STRINGS, .pass = CSR_MCP_PASS_REST },
    { 0 },
  };
  static const char *const cmd[] = { "sandbox", "run", "--json", NULL };
  static const char *const after[] = { "-", NULL };
  const struct csr_mcp_tool t
      = { .name = "sandbox_run", .params = params, .command = cmd, .after_args = after };
  yajl_val v = parse ("{\"args\":[\"-x\"],\"code\":\"print(1)\",\"session\":\"s1\",\"sandbox\":"
                      "\"box\"}");
  csr_error *e = NULL;
  cr_assert_eq (csr_mcp_args_check (&t, v, &lim, &e), 0);
  struct csr_mcp_argv av = { 0 };
  struct csr_mcp_input in;
  cr_assert_eq (csr_mcp_command_argv (&t, v, &lim, &av, &in, &e), 0);
  char s[256] = "";
  for (size_t i = 0; i < av.n; i++)
    snprintf (s + strlen (s), sizeof s - strlen (s), "%s%s", i ? "|" : "", av.v[i]);
  cr_assert_str_eq (s, "sandbox|run|--json|--session=s1|box|-|--|-x");
  cr_assert (in.len == 8 && memcmp (in.data, "print(1)", 8) == 0);
  csr_mcp_argv_release (&av);
  csr_mcp_input_release (&in);
  yajl_tree_free (v);
}

/* sandbox_run, sandbox_checkpoint and sandbox_restore: the code on standard
 * input after "-", the server's timeout, output cap and pipeline options. */
Test (mcp_argv, run_checkpoint_restore)
{
  static const char *const run_args[] = { "--no-heal", "--policy=p.conf", NULL };
  struct csr_mcp_limits l = lim;
  l.run_args = run_args;
  const struct csr_mcp_tool *t = csr_mcp_tool_find ("sandbox_run");
  yajl_val v = parse ("{\"code\":\"print(1)\\n\",\"session\":\"s1\",\"sandbox\":\"box\","
                      "\"timeout\":2.5}");
  csr_error *e = NULL;
  struct csr_mcp_argv av = { 0 };
  struct csr_mcp_input in;
  cr_assert_eq (csr_mcp_command_argv (t, v, &l, &av, &in, &e), 0);
  char s[512] = "";
  for (size_t i = 0; i < av.n; i++)
    snprintf (s + strlen (s), sizeof s - strlen (s), "%s%s", i ? "|" : "", av.v[i]);
  cr_assert_str_eq (s, "sandbox|run|--json|--timeout=2.500s|--max-output=65536|--no-heal|"
                       "--policy=p.conf|--session=s1|box|-");
  cr_assert (in.len == 9 && memcmp (in.data, "print(1)\n", 9) == 0);
  csr_mcp_argv_release (&av);
  csr_mcp_input_release (&in);
  yajl_tree_free (v);
  char *j = joined_argv ("sandbox_run", "{\"code\":\"x\",\"sandbox\":\"box\"}", &in);
  cr_assert_str_eq (j, "sandbox|run|--json|--timeout=60.000s|--max-output=65536|box|-");
  free (j);
  j = joined_argv ("sandbox_checkpoint",
                   "{\"sandbox\":\"box\",\"ttl\":3600,\"leave_running\":true}", &in);
  cr_assert_str_eq (j, "sandbox|checkpoint|--json|--ttl=3600s|--leave-running|box");
  free (j);
  j = joined_argv ("sandbox_checkpoint", "{\"sandbox\":\"box\",\"leave_running\":false}", &in);
  cr_assert_str_eq (j, "sandbox|checkpoint|--json|box");
  free (j);
  j = joined_argv ("sandbox_restore", "{\"checkpoint\":\"0a1b\",\"name\":\"n1\"}", &in);
  cr_assert_str_eq (j, "sandbox|restore|--json|--name=n1|0a1b");
  cr_assert_null (in.data);
  free (j);
  csr_mcp_input_release (&in);
}

/* ------------------------------------------------------------ what a command did, as a result */

/* RENDER of TOOL for a command with ARGS that printed OUT (OUT_LEN bytes)
 * and exited with STATUS, its stderr ERR. */
static char *
render (const char *tool, const char *args, const char *out, size_t out_len, int status,
        const char *err, bool *is_error, yajl_val *structured)
{
  yajl_val a = parse (args);
  char yerr[128];
  yajl_val doc = out_len && out[0] == '{' ? yajl_tree_parse (out, yerr, sizeof yerr) : NULL;
  struct csr_mcp_output o
      = { .args = a, .doc = doc, .out = out, .out_len = out_len, .status = status, .err = err };
  char *text = csr_mcp_tool_find (tool)->render (&o, is_error);
  cr_assert_not_null (text);
  *structured = o.structured;
  yajl_tree_free (doc);
  yajl_tree_free (a);
  return text;
}

Test (mcp_render, read_file_text_or_base64)
{
  bool err = true;
  yajl_val st = NULL;
  const char *args = "{\"sandbox\":\"box\",\"path\":\"d/f\"}";
  char *t = render ("sandbox_read_file", args, "h\xc3\xa9\n", 4, 0, "", &err, &st);
  cr_assert_str_eq (t, "h\xc3\xa9\n", "UTF-8 text comes as it is");
  cr_assert (!err);
  cr_assert_str_eq (csr_json_str (csr_json_get (st, "encoding")), "utf-8");
  cr_assert_str_eq (csr_json_str (csr_json_get (st, "content")), "h\xc3\xa9\n");
  cr_assert_eq (YAJL_GET_INTEGER (csr_json_get (st, "bytes")), 4);
  cr_assert_str_eq (csr_json_str (csr_json_get (st, "path")), "d/f");
  free (t);
  yajl_tree_free (st);
  /* NUL, a lone continuation byte: base64, and the text says so */
  static const char bin[] = { 'a', 0, 'b', (char)0x80 };
  t = render ("sandbox_read_file", args, bin, sizeof bin, 0, "", &err, &st);
  cr_assert (!err);
  cr_assert_str_eq (t, "d/f is 4 bytes of binary data (not UTF-8 text). In base64:\nYQBigA==");
  cr_assert_str_eq (csr_json_str (csr_json_get (st, "encoding")), "base64");
  cr_assert_str_eq (csr_json_str (csr_json_get (st, "content")), "YQBigA==");
  free (t);
  yajl_tree_free (st);
  /* an empty file is text */
  t = render ("sandbox_read_file", args, "", 0, 0, "", &err, &st);
  cr_assert (!err && strcmp (t, "") == 0);
  cr_assert_str_eq (csr_json_str (csr_json_get (st, "encoding")), "utf-8");
  free (t);
  yajl_tree_free (st);
  /* failures: the command's last line; the cap named as the argument */
  t = render ("sandbox_read_file", args, "", 0, 1 << 8,
              "csrun sandbox read: /work/d/f: 9 bytes, more than 4 (--max-size)\n", &err, &st);
  cr_assert (err);
  cr_assert_null (st);
  cr_assert (strstr (t, "/work/d/f: 9 bytes, more than 4 (max_bytes). Read a part of it with "
                        "sandbox_exec"),
             "%s", t);
  free (t);
  t = render ("sandbox_read_file", args, "", 0, 2 << 8,
              "csrun sandbox read: no such sandbox: 'box': No such file or directory\n", &err, &st);
  cr_assert (err);
  cr_assert_str_eq (t, "csrun sandbox read failed (exit status 2): csrun sandbox read: no such "
                       "sandbox: 'box': No such file or directory");
  free (t);
}

Test (mcp_render, list_files_like_ls)
{
  bool err = true;
  yajl_val st = NULL;
  const char *ls = "{\"sandbox\":\"b\",\"path\":\"/work\",\"type\":\"dir\",\"entries\":["
                   "{\"name\":\"d\",\"path\":\"/work/d\",\"type\":\"dir\",\"size\":4096,\"mode\":"
                   "\"0755\",\"mtime\":\"2026-01-02T03:04:05Z\"},"
                   "{\"name\":\"l\",\"path\":\"/work/l\",\"type\":\"symlink\",\"size\":3,\"mode\":"
                   "\"0777\",\"mtime\":\"2026-01-02T03:04:05Z\",\"target\":\"../x\"}],"
                   "\"truncated\":true,\"skipped\":[{\"path\":\"proc\",\"reason\":\"another file "
                   "system\"}],\"skipped_more\":2}";
  char *t = render ("sandbox_list_files", "{\"sandbox\":\"b\"}", ls, strlen (ls), 0, "", &err, &st);
  cr_assert (!err);
  cr_assert_null (st, "ls's own document is the structured result");
  cr_assert_str_eq (t, "/work: 2 entries\n"
                       "drwxr-xr-x       4096 2026-01-02T03:04:05Z d/\n"
                       "lrwxrwxrwx          3 2026-01-02T03:04:05Z l -> ../x\n"
                       "(stopped after 2 entries: max_entries; list a directory below, or use a "
                       "pattern)\n"
                       "(not entered: proc: another file system)\n"
                       "(and 2 more not entered)");
  free (t);
  const char *find = "{\"sandbox\":\"b\",\"path\":\"/work\",\"pattern\":\"*.py\",\"matches\":["
                     "{\"path\":\"/work/a/x.py\",\"type\":\"file\",\"size\":12,\"mode\":\"0644\","
                     "\"mtime\":\"2026-01-02T03:04:05Z\"}],\"truncated\":false,\"skipped\":[],"
                     "\"skipped_more\":0}";
  t = render ("sandbox_list_files", "{\"sandbox\":\"b\",\"pattern\":\"*.py\"}", find, strlen (find),
              0, "", &err, &st);
  cr_assert (!err);
  cr_assert_str_eq (t, "1 entry below /work matching '*.py':\n"
                       "-rw-r--r--         12 2026-01-02T03:04:05Z /work/a/x.py");
  /* find's matches are entries, as ls has them: one output schema */
  cr_assert_null (csr_json_get (st, "matches"));
  cr_assert_str_eq (
      csr_json_str (csr_json_get (csr_json_at (csr_json_get (st, "entries"), 0), "path")),
      "/work/a/x.py");
  cr_assert_str_eq (csr_json_str (csr_json_get (st, "pattern")), "*.py");
  free (t);
  yajl_tree_free (st);
  t = render ("sandbox_list_files", "{\"sandbox\":\"b\"}", "", 0, 1 << 8,
              "csrun sandbox ls: /work/nosuch: No such file or directory\n", &err, &st);
  cr_assert (err);
  cr_assert (strstr (t, "exit status 1): csrun sandbox ls: /work/nosuch: No such file"), "%s", t);
  free (t);
}

Test (mcp_render, write_file_and_create_with_ports)
{
  bool err = true;
  yajl_val st = NULL;
  const char *w = "{\"sandbox\":\"b\",\"path\":\"/work/f\",\"bytes\":12}";
  char *t = render ("sandbox_write_file", "{}", w, strlen (w), 0, "", &err, &st);
  cr_assert (!err);
  cr_assert_str_eq (t, "Wrote 12 bytes to /work/f.");
  free (t);
  const char *c
      = "{\"id\":\"0123\",\"ports\":[{\"type\":\"publish\",\"port\":8080,"
        "\"host_url\":\"tcp://127.0.0.1:41000\",\"sandbox_url\":\"tcp://127.0.0.1:8080\"},"
        "{\"type\":\"upstream\",\"port\":9000,\"host_url\":\"tcp://127.0.0.1:22\","
        "\"sandbox_url\":\"tcp://127.0.0.1:9000\"}]}";
  t = render ("sandbox_create", "{}", c, strlen (c), 0, "", &err, &st);
  cr_assert (!err);
  cr_assert (strstr (t, "Created sandbox 0123."), "%s", t);
  cr_assert (strstr (t, "\nPort tcp://127.0.0.1:8080 of the sandbox (a server there listens on it) "
                        "is reached from the host at tcp://127.0.0.1:41000."),
             "%s", t);
  cr_assert (strstr (t, "\nIn the sandbox, tcp://127.0.0.1:9000 leads to tcp://127.0.0.1:22 on the "
                        "host (and nothing else does)."),
             "%s", t);
  free (t);
}

Test (mcp_render, run_checkpoint_restore)
{
  bool err = false;
  yajl_val st = NULL;
  const char *ok = "{\"version\":1,\"status\":\"healed\",\"sandbox\":\"b\",\"attempts\":[{"
                   "\"stdout\":\"\"},{\"stdout\":\"4.0\\n\"}]}";
  char *t = render ("sandbox_run", "{}", ok, strlen (ok), 0, "", &err, &st);
  cr_assert_str_eq (t, "4.0");
  cr_assert (!err);
  cr_assert_null (st, "the structured result is the document itself");
  free (t);
  const char *lost
      = "{\"version\":1,\"status\":\"timeout\",\"session\":{\"name\":\"s1\",\"lost\":true},"
        "\"diagnosis\":{\"error_type\":\"Timeout\"},\"attempts\":[{\"timed_out\":true}]}";
  t = render ("sandbox_run", "{}", lost, strlen (lost), 31 << 8, "", &err, &st);
  cr_assert (err);
  cr_assert_str_eq (t, "The Python script did not execute successfully.\nerror_type: Timeout\n"
                       "timed_out: true\nsession_lost: true (the session 's1' was ended: its "
                       "variables are gone, the next call with it starts a new interpreter)");
  free (t);
  t = render ("sandbox_run", "{}", "", 0, 2 << 8, "csrun sandbox run: no such sandbox: 'x'\n", &err,
              &st);
  cr_assert (err);
  cr_assert_str_eq (t, "csrun sandbox run failed (exit status 2): csrun sandbox run: no such "
                       "sandbox: 'x'");
  free (t);
  const char *ck
      = "{\"version\":1,\"id\":\"c0ffee\",\"created\":1700000000,\"expires\":1700003600,"
        "\"sandbox\":{\"id\":\"b0\",\"name\":\"box\"},\"layer\":{\"files\":2,\"dirs\":1,"
        "\"symlinks\":0,\"whiteouts\":1,\"bytes\":10},\"not_saved\":[\"/work/s: a socket\"],"
        "\"not_saved_total\":3,\"stopped\":true}";
  t = render ("sandbox_checkpoint", "{}", ck, strlen (ck), 0, "", &err, &st);
  cr_assert (!err);
  cr_assert_str_eq (t, "Checkpoint c0ffee saved what was written in sandbox b0 (box): 2 files, 1 "
                       "directory, 1 deleted file of the rootfs (10 bytes); not its running "
                       "processes, nor /tmp. It expires at 2023-11-14T23:13:20Z. The sandbox is "
                       "stopped now (its processes ended, its files kept; it runs no more "
                       "commands): make a new running sandbox from the checkpoint with "
                       "sandbox_restore (checkpoint: \"c0ffee\").\nNot saved (3): /work/s: a "
                       "socket; ...");
  free (t);
  const char *ck2 = "{\"id\":\"c1\",\"expires\":0,\"sandbox\":{\"id\":\"b1\"},\"layer\":{},"
                    "\"not_saved\":[],\"stopped\":false}";
  t = render ("sandbox_checkpoint", "{}", ck2, strlen (ck2), 0, "", &err, &st);
  cr_assert (strstr (t, "in sandbox b1: 0 files (0 bytes);"), "%s", t);
  cr_assert (strstr (t, "It does not expire. The sandbox goes on running."), "%s", t);
  cr_assert_null (strstr (t, "Not saved"));
  free (t);
  t = render ("sandbox_checkpoint", "{}", "", 0, 1 << 8,
              "csrun sandbox checkpoint: the sandbox is busy with a checkpoint\n", &err, &st);
  cr_assert (err);
  cr_assert (strstr (t, "exit status 1): csrun sandbox checkpoint: the sandbox is busy"), "%s", t);
  free (t);
  const char *rs = "{\"id\":\"n0\",\"name\":\"again\",\"checkpoint\":\"c0ffee\",\"layer\":{"
                   "\"files\":1,\"dirs\":0,\"bytes\":3},\"not_restored\":[\"sessions/x\"],"
                   "\"warning\":\"a directory rootfs\"}";
  t = render ("sandbox_restore", "{}", rs, strlen (rs), 0, "", &err, &st);
  cr_assert (!err);
  cr_assert_str_eq (t, "Restored checkpoint c0ffee as a new sandbox n0 (name again), running: 1 "
                       "file (3 bytes). The processes of the checkpointed sandbox do not run in "
                       "it. Use it as any sandbox (sandbox: \"again\") and remove it with "
                       "sandbox_terminate.\nNot restored (1): sessions/x\nWarning: a directory "
                       "rootfs");
  free (t);
  /* the sessions' globals, when csrun saves them (checkpoint and restore) */
  const char *cks
      = "{\"id\":\"c2\",\"sandbox\":{\"id\":\"b2\"},\"layer\":{\"files\":0},\"sessions\":["
        "{\"name\":\"nb\",\"bytes\":90,\"saved\":[\"x\",\"df\"],\"modules\":[\"json\"],"
        "\"skipped\":[{\"name\":\"f\",\"why\":\"a function of a cell\"}]},"
        "{\"name\":\"slow\",\"error\":\"interrupted\"}]}";
  t = render ("sandbox_checkpoint", "{}", cks, strlen (cks), 0, "", &err, &st);
  cr_assert (!err);
  cr_assert (strstr (t, "\nThe sessions' variables saved with it (sandbox_restore loads them into "
                        "sessions of the same names):\n- session 'nb': 2 globals (x, df); not: "
                        "f\n- session 'slow': failed (interrupted)"),
             "%s", t);
  free (t);
  const char *rss = "{\"id\":\"n3\",\"checkpoint\":\"c2\",\"layer\":{},\"not_restored\":[],"
                    "\"sessions\":[{\"name\":\"nb\",\"loaded\":[\"json\",\"x\"],\"skipped\":[]}]}";
  t = render ("sandbox_restore", "{}", rss, strlen (rss), 0, "", &err, &st);
  cr_assert (!err);
  cr_assert (strstr (t, "\nSessions started again with their saved variables (sandbox_run with "
                        "the same session):\n- session 'nb': 2 globals (json, x)"),
             "%s", t);
  free (t);
  t = render ("sandbox_restore", "{}", "", 0, 4 << 8,
              "csrun sandbox restore: the checkpoint is damaged\n", &err, &st);
  cr_assert (err);
  cr_assert (strstr (t, "exit status 4"), "%s", t);
  free (t);
}

/* ------------------------------------------------------------ CodeShield's text, the cut */

static yajl_val
parse (const char *s)
{
  char yerr[128];
  yajl_val v = yajl_tree_parse (s, yerr, sizeof yerr);
  cr_assert_not_null (v, "%s", yerr);
  return v;
}

Test (mcp_text, codeshield_lines)
{
  bool err = false;
  yajl_val ok
      = parse ("{\"status\":\"healed\",\"attempts\":[{\"stdout\":\"\"},{\"stdout\":\"\\n 4.0 "
               "\\n\\n\"}]}");
  char *t = mcp_python_text (ok, &err);
  cr_assert_str_eq (t, "4.0", "stdout of the last attempt, stripped");
  cr_assert (!err);
  free (t);
  yajl_tree_free (ok);
  yajl_val bad = parse (
      "{\"status\":\"timeout\",\"diagnosis\":{\"error_type\":\"Timeout\",\"message\":\"too "
      "long\",\"line\":null},\"attempts\":[{\"stdout\":\"x\",\"stderr\":\"  e\\n\",\"timed_out\":"
      "true,\"silent_failure\":{\"detected\":true}}]}");
  t = mcp_python_text (bad, &err);
  cr_assert_str_eq (t, "The Python script did not execute successfully.\nerror_type: "
                       "Timeout\nmessage: too long\nstderr: e\ntimed_out: "
                       "true\nsilent_failure_detected: true");
  cr_assert (err);
  free (t);
  yajl_tree_free (bad);
  yajl_val line = parse ("{\"status\":\"failed\",\"diagnosis\":{\"error_type\":\"NameError\","
                         "\"message\":\"\",\"line\":3},\"attempts\":[{\"stderr\":\"\"}]}");
  t = mcp_python_text (line, &err);
  cr_assert_str_eq (t, "The Python script did not execute successfully.\nerror_type: "
                       "NameError\nroot_cause_line: 3");
  free (t);
  yajl_tree_free (line);
  yajl_val e = parse ("{\"status\":\"error\",\"error\":\"no rootfs\",\"attempts\":[]}");
  t = mcp_python_text (e, &err);
  cr_assert_str_eq (t, "error_type: CsrunError\nmessage: no rootfs");
  free (t);
  yajl_tree_free (e);
}

Test (mcp_text, a_result_is_cut_to_fit_keeping_head_and_tail)
{
  size_t n = 200000;
  char *doc = malloc (n + 200);
  char *big = malloc (n + 1);
  for (size_t i = 0; i < n; i++)
    big[i] = i % 3 == 0 ? "\xc3\xa9"[0] : i % 3 == 1 ? "\xc3\xa9"[1] : 'a';
  /* On character boundaries: the string stays valid UTF-8. */
  memcpy (big, "HEADxx", 6);
  memcpy (big + n - 6, "xxTAIL", 6);
  big[n] = '\0';
  snprintf (doc, n + 200, "{\"version\":1,\"status\":\"ok\",\"attempts\":[{\"stdout\":\"%s\"}]}",
            big);
  yajl_val v = parse (doc);
  size_t len = 0;
  char *r = mcp_python_tool_result (v, true, 65536, &len);
  cr_assert_not_null (r);
  cr_assert_leq (len, 65536, "%zu bytes", len);
  yajl_val back = parse (r); /* valid JSON and UTF-8 (yajl checks) */
  const char *text
      = csr_json_str (csr_json_get (csr_json_at (csr_json_get (back, "content"), 0), "text"));
  cr_assert (strncmp (text, "HEAD", 4) == 0 && strstr (text, "TAIL"));
  cr_assert (strstr (text, "bytes cut to fit the response"));
  const char *so = csr_json_str (csr_json_get (
      csr_json_at (csr_json_get (csr_json_get (back, "structuredContent"), "attempts"), 0),
      "stdout"));
  cr_assert (strstr (so, "bytes cut to fit the response"));
  cr_assert (YAJL_IS_FALSE (csr_json_get (back, "isError")));
  yajl_tree_free (back);
  free (r);
  /* Unstructured (an old protocol): no structuredContent. */
  r = mcp_python_tool_result (v, false, 1 << 20, &len);
  back = parse (r);
  cr_assert_null (csr_json_get (back, "structuredContent"));
  yajl_tree_free (back);
  free (r);
  yajl_tree_free (v);
  free (doc);
  free (big);
}

/* ------------------------------------------------------------ base64 */

Test (mcp_base64, decodes_and_refuses)
{
  char *out;
  size_t n, bad;
  cr_assert_eq (csr_base64_decode ("aGVsbG8=", 8, &out, &n, &bad), 0);
  cr_assert_eq (n, 5);
  cr_assert_str_eq (out, "hello");
  free (out);
  cr_assert_eq (csr_base64_decode ("aGVs\nbG8", 8, &out, &n, &bad), 0, "no padding, a newline");
  cr_assert_str_eq (out, "hello");
  free (out);
  cr_assert_eq (csr_base64_decode ("AP8K", 4, &out, &n, &bad), 0);
  cr_assert (n == 3 && out[0] == 0 && (unsigned char)out[1] == 0xff && out[2] == '\n');
  free (out);
  cr_assert_eq (csr_base64_decode ("", 0, &out, &n, &bad), 0);
  cr_assert_eq (n, 0);
  free (out);
  cr_assert_eq (csr_base64_decode ("aG!s", 4, &out, &n, &bad), -1);
  cr_assert_eq (bad, 2);
  cr_assert_eq (csr_base64_decode ("aG=s", 4, &out, &n, &bad), -1, "data after padding");
  cr_assert_eq (csr_base64_decode ("a", 1, &out, &n, &bad), -1, "a lone sixth of a byte");
}

Test (mcp_base64, encodes_every_length_and_round_trips)
{
  static const struct
  {
    const char *in, *out;
  } cases[] = { { "", "" },
                { "f", "Zg==" },
                { "fo", "Zm8=" },
                { "foo", "Zm9v" },
                { "foob", "Zm9vYg==" },
                { "fooba", "Zm9vYmE=" },
                { "foobar", "Zm9vYmFy" } };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      size_t n = 99;
      char *e = csr_base64_encode (cases[i].in, strlen (cases[i].in), &n);
      cr_assert_str_eq (e, cases[i].out);
      cr_assert_eq (n, strlen (cases[i].out));
      free (e);
    }
  unsigned char all[256];
  for (int i = 0; i < 256; i++)
    all[i] = (unsigned char)i;
  char *e = csr_base64_encode (all, sizeof all, NULL);
  char *back;
  size_t n, bad;
  cr_assert_eq (csr_base64_decode (e, strlen (e), &back, &n, &bad), 0);
  cr_assert (n == 256 && memcmp (back, all, 256) == 0);
  free (e);
  free (back);
}
