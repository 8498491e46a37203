/* csrun sandbox wait ID EXEC and csrun sandbox exec ls ID: detached execs
 * (src/lib/sandbox/keeper-detach.c) collected and listed. */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "cmd.h"
#include "sandbox.h"
#include "sandbox/sandbox.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/json-gen.h"
#include "util/json.h"
#include "util/parse.h"

struct wait_opts
{
  const char *id, *exec;
  double timeout_s; /* 0: forever */
  bool json;
  bool ls;
};

enum
{
  OPT_TIMEOUT = 1000,
  OPT_JSON,
};

static struct argp_option wait_options[] = {
  { "timeout", OPT_TIMEOUT, "DURATION", 0,
    "Wait at most this long (the exec goes on running); then exit 124", 0 },
  { "json", OPT_JSON, NULL, 0,
    "Print {returncode, stdout, stderr, ...} as exec --json does (with \"exec\" and \"status\")",
    0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};
static struct argp_option ls_options[] = {
  { "json", OPT_JSON, NULL, 0, "Print JSON", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_wait (int key, char *arg, struct argp_state *state)
{
  struct wait_opts *o = state->input;
  csr_error *e = NULL;
  switch (key)
    {
    case OPT_TIMEOUT:
      if (csr_parse_duration (arg, 7 * 86400.0, &o->timeout_s, &e) < 0 || o->timeout_s <= 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --timeout '%s'", arg);
      break;
    case OPT_JSON:
      o->json = true;
      break;
    case ARGP_KEY_ARG:
      if (o->id == NULL)
        o->id = arg;
      else if (o->exec == NULL && !o->ls)
        o->exec = arg;
      else
        sbx_arg_extra (state, arg);
      break;
    case ARGP_KEY_END:
      sbx_need_id (state, o->id);
      if (o->exec == NULL && !o->ls)
        argp_failure (state, CSR_EXIT_USAGE, 0, "missing the exec's id (exec --detach printed it)");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  csr_error_free (e);
  return 0;
}

/* A file the keeper handed over (unlinked already): read anew from its
 * start (its offset is shared with the keeper's descriptor). */
static int
read_output (int fd, char **out, size_t *len, csr_error **err)
{
  char p[64];
  snprintf (p, sizeof p, "/proc/self/fd/%d", fd);
  cleanup_close int r = open (p, O_RDONLY | O_CLOEXEC);
  if (r < 0)
    return csr_error_errno (err, "read the exec's output");
  return csr_read_fd (r, 1ULL << 30, out, len, err);
}

static int
still_running (const struct wait_opts *o, const char *id, const char *exec)
{
  cleanup_free char *msg = NULL;
  if (asprintf (&msg, "exec %s is still running after %g seconds (it goes on)", exec, o->timeout_s)
      < 0)
    return CSR_EXIT_INTERNAL;
  if (o->json)
    {
      struct csr_jgen w;
      if (csr_jgen_init (&w, false, NULL) < 0)
        return CSR_EXIT_INTERNAL;
      csr_jgen_map_open (&w);
      csr_jgen_kv_str (&w, "exec", exec);
      csr_jgen_kv_str (&w, "status", "running");
      csr_jgen_kv_str (&w, "error", msg);
      csr_jgen_kv_str (&w, "sandbox", id);
      csr_jgen_map_close (&w);
      char *doc = csr_jgen_finish (&w, "the wait result", NULL, NULL);
      if (doc == NULL)
        return CSR_EXIT_INTERNAL;
      printf ("%s\n", doc);
      free (doc);
      if (fflush (stdout) != 0)
        return CSR_EXIT_INTERNAL;
    }
  else
    fprintf (stderr, "csrun sandbox wait: %s\n", msg);
  return CSR_EXIT_TIMEOUT;
}

int
cmd_sandbox_wait (int argc, char **argv)
{
  struct wait_opts o = { 0 };
  static const char doc[]
      = "Wait for a detached exec (csrun sandbox exec --detach) and collect it: its output on "
        "yours and its exit status as yours, or with --json what exec --json prints.  A result "
        "is collected once.\vSee csrun-sandbox(1).";
  struct argp argp = { wait_options, parse_wait, "ID EXEC", doc, NULL, NULL, NULL };
  if (argp_parse (&argp, argc, argv, 0, NULL, &o) != 0)
    return CSR_EXIT_USAGE;
  int code;
  char id[CSR_SANDBOX_ID_LEN + 1];
  cleanup_close int d = sbx_enter ("wait", o.id, id, &code);
  if (d < 0)
    return code;
  csr_error *e = NULL;
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, &e) < 0)
    return sbx_fail ("wait", e, CSR_EXIT_INTERNAL);
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "op", "wait");
  csr_jgen_kv_str (&w, "exec", o.exec);
  csr_jgen_map_close (&w);
  cleanup_free char *req = csr_jgen_finish (&w, "the wait request", NULL, &e);
  if (req == NULL)
    return sbx_fail ("wait", e, CSR_EXIT_INTERNAL);
  cleanup_close int sock = csr_sandbox_connect (d, req, NULL, 0, &e);
  if (sock < 0)
    return sbx_fail ("wait", e, CSR_EXIT_INTERNAL);
  char *reply = NULL;
  int fds[2] = { -1, -1 };
  size_t nfds = 0;
  int tmo = o.timeout_s > 0 ? (int)(o.timeout_s * 1000) : -1;
  if (csr_sandbox_read_reply_fds (sock, tmo, &reply, fds, 2, &nfds, &e) < 0)
    {
      if (e && e->status == ETIMEDOUT)
        {
          csr_error_free (e);
          return still_running (&o, id, o.exec);
        }
      return sbx_fail ("wait", e, CSR_EXIT_INTERNAL);
    }
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (reply, ebuf, sizeof ebuf);
  free (reply);
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  const char *x = csr_json_str (csr_json_get (t, "exec"));
  cleanup_free char *out = NULL;
  cleanup_free char *err = NULL;
  size_t lo = 0, le = 0;
  int rc = 0;
  if (msg)
    {
      csr_error_set (&e, 0, "%s", msg);
      rc = sbx_fail ("wait", e, strstr (msg, "no such exec") ? CSR_EXIT_USAGE : CSR_EXIT_INTERNAL);
    }
  else if (t == NULL || x == NULL || nfds != 2)
    {
      csr_error_set (&e, 0, "the keeper's reply is not a result");
      rc = sbx_fail ("wait", e, CSR_EXIT_INTERNAL);
    }
  else if (read_output (fds[0], &out, &lo, &e) < 0 || read_output (fds[1], &err, &le, &e) < 0)
    rc = sbx_fail ("wait", e, CSR_EXIT_INTERNAL);
  for (size_t i = 0; i < nfds; i++)
    close (fds[i]);
  if (rc)
    return rc;
  yajl_val sh = csr_json_get (t, "sh");
  struct sbx_exec_end end = {
    .reply = t,
    .id = id,
    .exec_id = x,
    .json = o.json,
    .sh = YAJL_IS_TRUE (sh),
    .print_output = true,
    .out = out,
    .out_len = lo,
    .out_dropped = (uint64_t)csr_json_int (t, "stdout_dropped_bytes", 0),
    .err = err,
    .err_len = le,
    .err_dropped = (uint64_t)csr_json_int (t, "stderr_dropped_bytes", 0),
  };
  return sbx_exec_report (&end);
}

/* ------------------------------------------------------------ exec ls */

static void
print_row (yajl_val x)
{
  const char *exec = csr_json_str (csr_json_get (x, "exec"));
  const char *state = csr_json_str (csr_json_get (x, "state"));
  const char *cmd = csr_json_str (csr_json_get (x, "command"));
  long long ms = csr_json_int (x, "duration_ms", 0);
  long long pid = csr_json_int (x, "pid", 0);
  char when[32], result[32] = "-";
  sbx_fmt_time (csr_json_int (x, "started", 0), when, sizeof when);
  yajl_val r = csr_json_get (x, "result");
  if (r)
    {
      yajl_val ec = csr_json_get (r, "exit_code"), sig = csr_json_get (r, "signal");
      if (YAJL_IS_TRUE (csr_json_get (r, "timed_out")))
        snprintf (result, sizeof result, "timeout");
      else if (sig && YAJL_IS_INTEGER (sig) && YAJL_GET_INTEGER (sig))
        snprintf (result, sizeof result, "signal %lld", YAJL_GET_INTEGER (sig));
      else if (ec && YAJL_IS_INTEGER (ec))
        snprintf (result, sizeof result, "exit %lld", YAJL_GET_INTEGER (ec));
    }
  printf ("%-16s  %-8s  %-7lld  %-20s  %9.1fs  %-10s  %s\n", exec ? exec : "?", state ? state : "?",
          pid, when, (double)ms / 1000, result, cmd ? cmd : "");
}

int
cmd_sandbox_exec_ls (int argc, char **argv)
{
  struct wait_opts o = { .ls = true };
  static const char doc[] = "List a sandbox's detached execs: running, and finished but not "
                            "collected yet (csrun sandbox wait).\vSee csrun-sandbox(1).";
  char prog[64];
  snprintf (prog, sizeof prog, "csrun sandbox exec ls");
  argv[0] = prog;
  struct argp argp = { ls_options, parse_wait, "ID", doc, NULL, NULL, NULL };
  if (argp_parse (&argp, argc, argv, 0, NULL, &o) != 0)
    return CSR_EXIT_USAGE;
  int code;
  char id[CSR_SANDBOX_ID_LEN + 1];
  cleanup_close int d = sbx_enter ("exec ls", o.id, id, &code);
  if (d < 0)
    return code;
  csr_error *e = NULL;
  cleanup_yajl_val yajl_val t = csr_sandbox_call_json (d, "{\"op\":\"execs\"}", 30000, &e);
  if (t == NULL)
    return sbx_fail ("exec ls", e, CSR_EXIT_INTERNAL);
  yajl_val list = csr_json_get (t, "execs");
  if (list == NULL || !YAJL_IS_ARRAY (list))
    {
      csr_error_set (&e, 0, "the keeper's reply has no list");
      return sbx_fail ("exec ls", e, CSR_EXIT_INTERNAL);
    }
  if (o.json)
    {
      struct csr_jgen w;
      if (csr_jgen_init (&w, false, &e) < 0)
        return sbx_fail ("exec ls", e, CSR_EXIT_INTERNAL);
      csr_jgen_tree (&w, list);
      return sbx_print_json (&w, "exec ls", "the list");
    }
  else
    {
      printf ("%-16s  %-8s  %-7s  %-20s  %10s  %-10s  %s\n", "EXEC", "STATE", "PID", "STARTED",
              "DURATION", "RESULT", "COMMAND");
      for (size_t i = 0; i < list->u.array.len; i++)
        print_row (list->u.array.values[i]);
    }
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}

/* ------------------------------------------------------------ inspect */

void
sbx_gen_spec_layers (struct csr_jgen *w, const struct csr_sandbox_spec *s)
{
  if (s->with)
    csr_jgen_kv_strv (w, "with", (const char *const *)s->with);
  if (s->layer_dir)
    {
      csr_jgen_str (w, "layer");
      csr_jgen_map_open (w);
      csr_jgen_kv_str (w, "dir", s->layer_dir);
      csr_jgen_kv_str (w, "digest", s->layer_digest ? s->layer_digest : "");
      csr_jgen_map_close (w);
    }
  csr_jgen_kv_int (w, "disk_bytes", (long long)s->disk);
}

/* The member KEY of the keeper's reply to REQ, written as KEY (else EMPTY). */
static void
gen_from_keeper (struct csr_jgen *w, int dirfd, const char *req, const char *key, bool array)
{
  cleanup_yajl_val yajl_val t = csr_sandbox_call_json (dirfd, req, 5000, NULL);
  yajl_val v = csr_json_get (t, key);
  csr_jgen_str (w, key);
  if (v)
    csr_jgen_tree (w, v);
  else if (array)
    {
      csr_jgen_array_open (w);
      csr_jgen_array_close (w);
    }
  else
    yajl_gen_null (w->g);
}

void
sbx_gen_live (struct csr_jgen *w, int dirfd, const struct csr_sandbox_spec *s)
{
  gen_from_keeper (w, dirfd, "{\"op\":\"execs\"}", "execs", true);
  if (s->disk)
    gen_from_keeper (w, dirfd, "{\"op\":\"disk\"}", "disk", false);
}
