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
#include "util/fs.h"
#include "util/json-gen.h"
#include "util/json.h"
#include "util/parse.h"
#include "util/tty.h"

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
  bool json, detach, interactive, tty, max_output_set;
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
  OPT_DETACH = 'd',
  OPT_INTERACTIVE = 'i',
  OPT_TTY = 't',
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
  { "max-output", OPT_MAX_OUTPUT, "SIZE", 0,
    "--json, --detach: bytes kept per stream (default 1M: the first and the last half)", 0 },
  { "detach", OPT_DETACH, NULL, 0,
    "Print an exec id and return; the output goes to files (csrun sandbox wait ID EXEC)", 0 },
  { "interactive", OPT_INTERACTIVE, NULL, 0, "Pass your stdin (default: /dev/null)", 0 },
  { "tty", OPT_TTY, NULL, 0,
    "Give the process a pseudo-terminal (your terminal raw meanwhile); implies -i", 0 },
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
      o->max_output_set = true;
      break;
    case OPT_DETACH:
      o->detach = true;
      break;
    case OPT_INTERACTIVE:
      o->interactive = true;
      break;
    case OPT_TTY:
      o->tty = o->interactive = true;
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
      sbx_need_id (state, o->id);
      if (!o->sh == !o->argv)
        argp_failure (state, CSR_EXIT_USAGE, 0, "give either -- ARGV... or --sh 'CMD'");
      if (o->detach && o->interactive)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--detach can't take -i or -t (no caller to relay)");
      if (o->tty && o->json)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "-t and --json don't mix (a terminal has one stream, not two)");
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
  if (o->sh)
    {
      csr_jgen_str (&w, "sh");
      csr_jgen_bool (&w, true);
    }
  if (o->tty)
    {
      csr_jgen_str (&w, "tty");
      csr_jgen_bool (&w, true);
    }
  if (o->detach)
    {
      csr_jgen_str (&w, "detach");
      csr_jgen_bool (&w, true);
      csr_jgen_kv_int (&w, "max_output", (long long)o->max_output);
    }
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

/* --detach: the exec's id. */
static int
detached (const struct exec_opts *o, int d, const char *id, const char *req)
{
  csr_error *e = NULL;
  cleanup_yajl_val yajl_val t = csr_sandbox_call_json (d, req, 30000, &e);
  if (t == NULL)
    return sbx_fail ("exec", e,
                     e && e->status == 0 && strstr (csr_error_text (e), "stopped")
                         ? SBX_EXIT_REFUSED
                         : CSR_EXIT_INTERNAL);
  const char *x = csr_json_str (csr_json_get (t, "exec"));
  if (x == NULL)
    {
      csr_error_set (&e, 0, "the keeper's reply has no exec id");
      return sbx_fail ("exec", e, CSR_EXIT_INTERNAL);
    }
  if (o->json)
    printf ("{\"exec\":\"%s\",\"sandbox\":\"%s\"}\n", x, id);
  else
    printf ("%s\n", x);
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}

/* -t: the process's terminal, a pty of ours (the host's /dev/ptmx), as
 * podman's conmon does; we keep the master and relay. */
static int
with_tty (int d, const char *req, int *sock, int *master, csr_error **err)
{
  cleanup_close int slave = -1;
  char name[64];
  if (csr_pty_open (master, &slave, name, sizeof name, err) < 0)
    return -1;
  /* Its size before the process can ask. */
  csr_tty_copy_size (isatty (0) ? 0 : 1, *master);
  int fds[3] = { slave, slave, slave };
  *sock = csr_sandbox_connect (d, req, fds, 3, err);
  return *sock < 0 ? -1 : 0;
}

int
cmd_sandbox_exec (int argc, char **argv)
{
  /* exec ls ID: the detached execs (sandbox-wait.c); a sandbox named "ls"
   * is still reached with -- or --sh. */
  if (argc >= 2 && strcmp (argv[1], "ls") == 0)
    {
      bool cmd = false;
      for (int i = 2; i < argc; i++)
        cmd = cmd || strcmp (argv[i], "--") == 0 || strncmp (argv[i], "--sh", 4) == 0;
      if (!cmd)
        return cmd_sandbox_exec_ls (argc - 1, argv + 1);
    }
  struct exec_opts o;
  memset (&o, 0, sizeof o);
  o.max_output = 1 << 20;
  static const char doc[]
      = "Run a program in a running sandbox.  Its output is yours and its exit status is yours "
        "(124: --timeout, 127: no such program).  With --detach: its id; csrun sandbox wait "
        "collects it.\v"
        "csrun sandbox exec ls ID [--json] lists the detached execs.  See csrun-sandbox(1).";
  struct argp argp
      = { exec_options, parse_exec, "ID -- ARGV...\nID --sh CMD\nls ID", doc, NULL, NULL, NULL };
  if (argp_parse (&argp, argc, argv, 0, NULL, &o) != 0)
    return CSR_EXIT_USAGE;
  signal (SIGPIPE, SIG_IGN);
  int code;
  char id[CSR_SANDBOX_ID_LEN + 1];
  cleanup_close int d = sbx_enter ("exec", o.id, id, &code);
  if (d < 0)
    return code;
  csr_error *e = NULL;
  cleanup_free char *req = request (&o, &e);
  if (req == NULL)
    return sbx_fail ("exec", e, CSR_EXIT_INTERNAL);
  if (o.detach)
    return detached (&o, d, id, req);
  cleanup_close int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  /* -i: our stdin as it is (binary-safe: the descriptor itself). */
  int in = o.interactive && fcntl (0, F_GETFD) >= 0 ? 0 : devnull;
  int po[2] = { -1, -1 }, pe[2] = { -1, -1 };
  if (o.json && (pipe2 (po, O_CLOEXEC) < 0 || pipe2 (pe, O_CLOEXEC) < 0))
    return sbx_fail ("exec", NULL, CSR_EXIT_INTERNAL);
  int fds[3] = { in, o.json ? po[1] : 1, o.json ? pe[1] : 2 };
  cleanup_close int master = -1;
  int sock = -1;
  if (o.tty)
    {
      if (with_tty (d, req, &sock, &master, &e) < 0)
        return sbx_fail ("exec", e, CSR_EXIT_INTERNAL);
    }
  else
    sock = csr_sandbox_connect (d, req, fds, 3, &e);
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
  else if (o.tty)
    {
      struct csr_tty_relay r
          = { .master = master, .in = 0, .out = 1, .end_fd = sock, .eof_to_master = !isatty (0) };
      rc = csr_tty_relay (&r, &e);
      if (rc == 0 && r.stopped_by)
        {
          /* Our end goes: the keeper kills the exec. */
          close (sock);
          fprintf (stderr, "csrun sandbox exec: %s: the exec was killed\n",
                   strsignal (r.stopped_by));
          return 128 + r.stopped_by;
        }
      if (rc == 0)
        rc = csr_sandbox_read_reply (sock, -1, &reply, &e);
    }
  else
    rc = csr_sandbox_read_reply (sock, -1, &reply, &e);
  close (sock);
  if (rc < 0)
    return sbx_fail ("exec", e, CSR_EXIT_INTERNAL);
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (reply, ebuf, sizeof ebuf);
  free (reply);
  size_t lo = 0, le = 0;
  cleanup_free char *so = o.json ? csr_bbuf_contents (&bo, &lo) : NULL;
  cleanup_free char *se = o.json ? csr_bbuf_contents (&be, &le) : NULL;
  struct sbx_exec_end x = {
    .reply = t,
    .id = id,
    .json = o.json,
    .sh = o.sh != NULL,
    .out = so,
    .out_len = lo,
    .out_dropped = csr_bbuf_dropped (&bo),
    .err = se,
    .err_len = le,
    .err_dropped = csr_bbuf_dropped (&be),
  };
  csr_bbuf_release (&bo);
  csr_bbuf_release (&be);
  if (o.json && (so == NULL || se == NULL))
    return sbx_fail ("exec", NULL, CSR_EXIT_INTERNAL);
  return sbx_exec_report (&x);
}

/* ------------------------------------------------------------ the report (exec, wait) */

static void
gen_stream (struct csr_jgen *w, const char *key, const char *s, size_t len, uint64_t dropped,
            const char *extra)
{
  cleanup_free char *joined = NULL;
  if (extra
      && asprintf (&joined, "%s%s%s", s ? s : "", s && len && s[len - 1] != '\n' ? "\n" : "", extra)
             < 0)
    joined = NULL;
  csr_jgen_kv_str (w, key, joined ? joined : s ? s : "");
  char k2[32];
  snprintf (k2, sizeof k2, "%s_dropped_bytes", key);
  csr_jgen_kv_int (w, k2, (long long)dropped);
}

int
sbx_exec_report (const struct sbx_exec_end *x)
{
  csr_error *e = NULL;
  yajl_val t = x->reply;
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  if (t == NULL || msg)
    {
      csr_error_set (&e, 0, "%s", msg ? msg : "the keeper's reply is not JSON");
      return sbx_fail (x->exec_id ? "wait" : "exec", e,
                       msg && (strstr (msg, "stopped") || strstr (msg, "busy with"))
                           ? SBX_EXIT_REFUSED
                           : CSR_EXIT_INTERNAL);
    }
  long long ec = YAJL_GET_INTEGER (csr_json_get (t, "exit_code"));
  long long sig = YAJL_GET_INTEGER (csr_json_get (t, "signal"));
  long long ms = YAJL_GET_INTEGER (csr_json_get (t, "duration_ms"));
  double timeout_s = (double)csr_json_int (t, "timeout_ms", 0) / 1000;
  bool timed_out = YAJL_IS_TRUE (csr_json_get (t, "timed_out"));
  bool exec_failed = YAJL_IS_TRUE (csr_json_get (t, "exec_failed"));
  bool setup_failed = YAJL_IS_TRUE (csr_json_get (t, "setup_failed"));
  const char *out_err = csr_json_str (csr_json_get (t, "output_error"));
  cleanup_free char *tmsg = NULL;
  if (timed_out && asprintf (&tmsg, "Command timed out after %g seconds", timeout_s) < 0)
    tmsg = NULL;
  const char *note = NULL;
  if (x->sh && exec_failed && ec == 127)
    note = "csrun sandbox exec: --sh: this sandbox's rootfs has no /bin/sh";
  int exit_code = timed_out ? CSR_EXIT_TIMEOUT : sig ? 128 + (int)sig : (int)ec;
  if (x->json)
    {
      struct csr_jgen w;
      if (csr_jgen_init (&w, false, &e) < 0)
        return sbx_fail ("exec", e, CSR_EXIT_INTERNAL);
      csr_jgen_map_open (&w);
      csr_jgen_kv_int (&w, "returncode", timed_out ? -1 : sig ? -sig : ec);
      gen_stream (&w, "stdout", x->out, x->out_len, x->out_dropped, NULL);
      gen_stream (&w, "stderr", x->err, x->err_len, x->err_dropped, tmsg ? tmsg : note);
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
      if (out_err)
        csr_jgen_kv_str (&w, "output_error", out_err);
      csr_jgen_kv_str (&w, "sandbox", x->id);
      if (x->exec_id)
        {
          csr_jgen_kv_str (&w, "exec", x->exec_id);
          csr_jgen_kv_str (&w, "status", "exited");
        }
      csr_jgen_map_close (&w);
      int rc = sbx_print_json (&w, "exec", "the exec result");
      return rc ? rc : exit_code;
    }
  /* wait without --json: the output as the exec would have written it. */
  if (x->print_output
      && ((x->out_len && csr_write_all (1, x->out, x->out_len, &e) < 0)
          || (x->err_len && csr_write_all (2, x->err, x->err_len, &e) < 0)))
    return sbx_fail ("wait", e, CSR_EXIT_INTERNAL);
  if (x->print_output && (x->out_dropped || x->err_dropped))
    fprintf (stderr,
             "csrun sandbox wait: %llu bytes of stdout and %llu of stderr were dropped in the "
             "middle (--max-output)\n",
             (unsigned long long)x->out_dropped, (unsigned long long)x->err_dropped);
  if (out_err)
    fprintf (stderr, "csrun sandbox wait: the output was not all kept: %s\n", out_err);
  if (tmsg)
    fprintf (stderr, "csrun sandbox exec: %s\n", tmsg);
  else if (note)
    fprintf (stderr, "%s\n", note);
  return exit_code;
}
