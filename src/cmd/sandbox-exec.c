/* csrun sandbox exec: run a program in a running sandbox (through its
 * keeper, src/lib/sandbox/exec.c); its output on ours and its status as
 * ours, or with --json one document with bounded output. */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "cmd.h"
#include "sandbox.h"
#include "sandbox/sandbox.h"
#include "supervisor/bbuf.h"
#include "util/cleanup.h"
#include "util/json-gen.h"
#include "util/json.h"
#include "util/parse.h"

struct exec_opts
{
  const char *id;
  char **argv;
  const char *sh;
  const char *workdir;
  const char *env[CSR_SANDBOX_MAX_ENV];
  size_t n_env;
  double timeout_s;
  long long uid, gid;
  bool json;
  uint64_t max_output;
};

enum
{
  OPT_WORKDIR = 1000,
  OPT_ENV,
  OPT_TIMEOUT,
  OPT_USER,
  OPT_SH,
  OPT_JSON,
  OPT_MAX_OUTPUT,
};

static struct argp_option exec_options[] = {
  { "workdir", OPT_WORKDIR, "DIR", 0, "Working directory (default: the sandbox's)", 0 },
  { "env", OPT_ENV, "KEY=VALUE", 0, "Add to the environment of this exec (repeatable)", 0 },
  { "timeout", OPT_TIMEOUT, "DURATION", 0,
    "Kill this exec (its process group) after DURATION; exit 124", 0 },
  { "user", OPT_USER, "UID[:GID]", 0, "Run as this id inside (one the sandbox maps; default 0)",
    0 },
  { "sh", OPT_SH, "CMD", 0, "Run CMD with /bin/sh -c (the rootfs must have /bin/sh)", 0 },
  { "json", OPT_JSON, NULL, 0,
    "Print {returncode, stdout, stderr, duration_ms, timed_out, ...} (output bounded)", 0 },
  { "max-output", OPT_MAX_OUTPUT, "SIZE", 0, "--json: bytes kept per stream (default 1M)", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_exec (int key, char *arg, struct argp_state *state)
{
  struct exec_opts *o = state->input;
  csr_error *e = NULL;
  switch (key)
    {
    case OPT_WORKDIR:
      if (arg[0] != '/')
        argp_failure (state, CSR_EXIT_USAGE, 0, "--workdir must be absolute");
      o->workdir = arg;
      break;
    case OPT_ENV:
      sbx_parse_env (state, arg, o->env, &o->n_env);
      break;
    case OPT_TIMEOUT:
      if (csr_parse_duration (arg, 7 * 86400.0, &o->timeout_s, &e) < 0 || o->timeout_s <= 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --timeout '%s'", arg);
      break;
    case OPT_USER:
      {
        char *end;
        long long u = strtoll (arg, &end, 10), gid = u;
        if (end != arg && *end == ':')
          {
            char *g = end + 1;
            gid = strtoll (g, &end, 10);
            if (end == g)
              end = g - 1;
          }
        if (end == arg || *end || u < 0 || gid < 0 || u > 0xfffffffe || gid > 0xfffffffe)
          argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --user '%s' (UID[:GID])", arg);
        o->uid = u;
        o->gid = gid;
        break;
      }
    case OPT_SH:
      o->sh = arg;
      break;
    case OPT_JSON:
      o->json = true;
      break;
    case OPT_MAX_OUTPUT:
      if (csr_parse_size (arg, 1ULL << 30, &o->max_output, &e) < 0 || o->max_output < 2)
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --max-output '%s'", arg);
      break;
    case ARGP_KEY_ARG:
      if (o->id == NULL)
        {
          o->id = arg;
          break;
        }
      o->argv = &state->argv[state->next - 1];
      state->next = state->argc;
      break;
    case ARGP_KEY_END:
      if (o->id == NULL)
        argp_failure (state, CSR_EXIT_USAGE, 0, "missing the sandbox's ID (or name)");
      if (!o->sh == !o->argv)
        argp_failure (state, CSR_EXIT_USAGE, 0, "give either -- ARGV... or --sh 'CMD'");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  csr_error_free (e);
  return 0;
}

static char *
request (const struct exec_opts *o, csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "op", "exec");
  const char *sh[] = { "/bin/sh", "-c", o->sh, NULL };
  csr_jgen_kv_strv (&w, "argv", o->sh ? sh : (const char *const *)o->argv);
  const char *env[CSR_SANDBOX_MAX_ENV + 1];
  memcpy (env, o->env, o->n_env * sizeof *env);
  env[o->n_env] = NULL;
  csr_jgen_kv_strv (&w, "env", env);
  if (o->workdir)
    csr_jgen_kv_str (&w, "cwd", o->workdir);
  csr_jgen_kv_int (&w, "uid", o->uid);
  csr_jgen_kv_int (&w, "gid", o->gid);
  csr_jgen_kv_int (&w, "timeout_ms", (long long)(o->timeout_s * 1000));
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "the exec request", NULL, err);
}

/* --json: read both pipes until their end while waiting for the reply. */
static int
collect (int sock, int out, int err_fd, struct csr_bbuf *bo, struct csr_bbuf *be, char **reply,
         csr_error **err)
{
  int fds[2] = { out, err_fd };
  struct csr_bbuf *bufs[2] = { bo, be };
  while (fds[0] >= 0 || fds[1] >= 0)
    {
      struct pollfd p[2] = { { fds[0], POLLIN, 0 }, { fds[1], POLLIN, 0 } };
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return csr_error_errno (err, "poll");
        }
      for (int i = 0; i < 2; i++)
        if (p[i].revents)
          {
            char buf[65536];
            ssize_t r = read (fds[i], buf, sizeof buf);
            if (r > 0)
              csr_bbuf_append (bufs[i], buf, (size_t)r);
            else if (r == 0 || errno != EINTR)
              {
                close (fds[i]);
                fds[i] = -1;
              }
          }
    }
  return csr_sandbox_read_reply (sock, -1, reply, err);
}

static void
gen_stream (struct csr_jgen *w, const char *key, struct csr_bbuf *b, const char *extra)
{
  size_t len;
  char *s = csr_bbuf_contents (b, &len);
  cleanup_free char *joined = NULL;
  if (extra
      && asprintf (&joined, "%s%s%s", s ? s : "", s && len && s[len - 1] != '\n' ? "\n" : "", extra)
             < 0)
    joined = NULL;
  csr_jgen_kv_str (w, key, joined ? joined : s ? s : "");
  free (s);
  char k2[32];
  snprintf (k2, sizeof k2, "%s_dropped_bytes", key);
  csr_jgen_kv_int (w, k2, (long long)csr_bbuf_dropped (b));
}

int
cmd_sandbox_exec (int argc, char **argv)
{
  struct exec_opts o;
  memset (&o, 0, sizeof o);
  o.max_output = 1 << 20;
  static const char doc[] = "Run a program in a running sandbox.  Its output is yours and its "
                            "exit status is yours (124: --timeout, 127: no such program).\v"
                            "See csrun-sandbox(1).";
  struct argp argp = { exec_options, parse_exec, "ID -- ARGV...", doc, NULL, NULL, NULL };
  if (argp_parse (&argp, argc, argv, 0, NULL, &o) != 0)
    return CSR_EXIT_USAGE;
  signal (SIGPIPE, SIG_IGN);
  int code;
  cleanup_close int root = sbx_root ("exec", &code);
  if (root < 0)
    return code;
  char id[CSR_SANDBOX_ID_LEN + 1];
  cleanup_close int d = sbx_open ("exec", root, o.id, id, &code);
  if (d < 0)
    return code;
  csr_error *e = NULL;
  cleanup_free char *req = request (&o, &e);
  if (req == NULL)
    return sbx_fail ("exec", e, CSR_EXIT_INTERNAL);
  cleanup_close int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  int po[2] = { -1, -1 }, pe[2] = { -1, -1 };
  if (o.json && (pipe2 (po, O_CLOEXEC) < 0 || pipe2 (pe, O_CLOEXEC) < 0))
    return sbx_fail ("exec", NULL, CSR_EXIT_INTERNAL);
  int fds[3] = { devnull, o.json ? po[1] : 1, o.json ? pe[1] : 2 };
  int sock = csr_sandbox_connect (d, req, fds, 3, &e);
  if (o.json)
    {
      close (po[1]);
      close (pe[1]);
    }
  if (sock < 0)
    return sbx_fail ("exec", e, CSR_EXIT_INTERNAL);
  char *reply = NULL;
  struct csr_bbuf bo = { 0 }, be = { 0 };
  int rc;
  if (o.json)
    {
      if (csr_bbuf_init (&bo, o.max_output) < 0 || csr_bbuf_init (&be, o.max_output) < 0)
        return sbx_fail ("exec", NULL, CSR_EXIT_INTERNAL);
      rc = collect (sock, po[0], pe[0], &bo, &be, &reply, &e);
    }
  else
    rc = csr_sandbox_read_reply (sock, -1, &reply, &e);
  close (sock);
  if (rc < 0)
    return sbx_fail ("exec", e, CSR_EXIT_INTERNAL);
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (reply, ebuf, sizeof ebuf);
  free (reply);
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  if (t == NULL || msg)
    {
      csr_error_set (&e, 0, "%s", msg ? msg : "the keeper's reply is not JSON");
      return sbx_fail ("exec", e,
                       msg && (strstr (msg, "stopped") || strstr (msg, "busy with"))
                           ? SBX_EXIT_REFUSED
                           : CSR_EXIT_INTERNAL);
    }
  long long ec = YAJL_GET_INTEGER (csr_json_get (t, "exit_code"));
  long long sig = YAJL_GET_INTEGER (csr_json_get (t, "signal"));
  long long ms = YAJL_GET_INTEGER (csr_json_get (t, "duration_ms"));
  bool timed_out = YAJL_IS_TRUE (csr_json_get (t, "timed_out"));
  bool exec_failed = YAJL_IS_TRUE (csr_json_get (t, "exec_failed"));
  bool setup_failed = YAJL_IS_TRUE (csr_json_get (t, "setup_failed"));
  cleanup_free char *tmsg = NULL;
  if (timed_out && asprintf (&tmsg, "Command timed out after %g seconds", o.timeout_s) < 0)
    tmsg = NULL;
  const char *note = NULL;
  if (o.sh && exec_failed && ec == 127)
    note = "csrun sandbox exec: --sh: this sandbox's rootfs has no /bin/sh";
  int exit_code = timed_out ? CSR_EXIT_TIMEOUT : sig ? 128 + (int)sig : (int)ec;
  if (o.json)
    {
      struct csr_jgen w;
      if (csr_jgen_init (&w, false, &e) < 0)
        return sbx_fail ("exec", e, CSR_EXIT_INTERNAL);
      csr_jgen_map_open (&w);
      csr_jgen_kv_int (&w, "returncode", timed_out ? -1 : sig ? -sig : ec);
      gen_stream (&w, "stdout", &bo, NULL);
      gen_stream (&w, "stderr", &be, tmsg ? tmsg : note);
      csr_jgen_kv_int (&w, "duration_ms", ms);
      csr_jgen_str (&w, "timed_out");
      csr_jgen_bool (&w, timed_out);
      csr_jgen_kv_int (&w, "signal", sig);
      csr_jgen_str (&w, "not_found");
      csr_jgen_bool (&w, exec_failed && ec == 127);
      csr_jgen_str (&w, "setup_failed");
      csr_jgen_bool (&w, setup_failed);
      if (tmsg)
        csr_jgen_kv_str (&w, "error", tmsg);
      csr_jgen_kv_str (&w, "sandbox", id);
      csr_jgen_map_close (&w);
      csr_bbuf_release (&bo);
      csr_bbuf_release (&be);
      char *out_doc = csr_jgen_finish (&w, "the exec result", NULL, &e);
      if (out_doc == NULL)
        return sbx_fail ("exec", e, CSR_EXIT_INTERNAL);
      printf ("%s\n", out_doc);
      free (out_doc);
      if (fflush (stdout) != 0)
        return CSR_EXIT_INTERNAL;
    }
  else if (tmsg)
    fprintf (stderr, "csrun sandbox exec: %s\n", tmsg);
  else if (note)
    fprintf (stderr, "%s\n", note);
  return exit_code;
}
