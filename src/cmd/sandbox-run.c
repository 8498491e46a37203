/* csrun sandbox run: Python through the gate/scan/classify/heal pipeline,
 * every attempt inside a sandbox (an exec, or a cell of a session); csrun
 * sandbox session ls|rm|save|load.  The body is csrun run's (csr_run_main);
 * what differs is the launcher (src/lib/sandbox/run.h), where the snippet
 * may come from (a file of the sandbox, :PATH) and where its fix goes. */
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
#include "common.h"
#include "run-opts.h"
#include "sandbox.h"
#include "sandbox/run.h"
#include "sandbox/sandbox.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/json-gen.h"
#include "util/json.h"
#include "util/termsafe.h"

/* The largest session save csrun moves (a pickle of a session's globals). */
#define SESSION_SAVE_MAX (1ULL << 30)

struct sbx_run
{
  struct run_opts ro;
  const char *id;
  const char *session;
  int dirfd;
  struct csr_sbx_launcher sl;
  const char *env[CSR_MAX_ENV + 1]; /* --env for execs, KEY=VALUE */
  char *owned[CSR_MAX_ENV + 1];
  const char *in_path; /* :PATH: the snippet is this file of the sandbox */
  char *real;          /* its path there */
  char sha256[65];     /* of what was read */
  struct csr_sandbox_report rep;
  char note[600];
};

enum
{
  OPT_SESSION = 2000,
};

static struct argp_option run_options[] = {
  { "session", OPT_SESSION, "NAME", 0,
    "Run the snippet as a cell of the session NAME: a persistent interpreter of the sandbox "
    "(started by its first cell), whose globals survive between cells",
    0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_run (int key, char *arg, struct argp_state *state)
{
  struct sbx_run *x = state->input;
  switch (key)
    {
    case ARGP_KEY_INIT:
      state->child_inputs[0] = &x->ro;
      break;
    case OPT_SESSION:
      if (!csr_sbx_session_name_ok (arg))
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "invalid --session '%s' (1 to 64 letters, digits, '_', '.', '-')", arg);
      x->session = arg;
      break;
    case ARGP_KEY_ARG:
      if (x->id == NULL)
        {
          x->id = arg;
          break;
        }
      /* FILE, then everything else belongs to the snippet. */
      x->ro.file = arg;
      x->ro.req.args = &state->argv[state->next];
      x->ro.req.n_args = state->argc - state->next;
      state->next = state->argc;
      break;
    case ARGP_KEY_END:
      sbx_need_id (state, x->id);
      if (x->ro.file == NULL)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "missing FILE (a Python file, - for stdin, or :PATH in the sandbox)");
      if (x->session && x->ro.req.n_env > 0)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--env does not apply to a session (its environment is the sandbox's; set "
                      "os.environ in a cell)");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

/* ------------------------------------------------------------ hooks of csr_run_main */

/* :PATH: the snippet is the sandbox's file. */
static int
read_code (struct run_opts *o, const char *name, char **code, size_t *len, csr_error **err)
{
  struct sbx_run *x = o->hook_data;
  if (csr_sbx_read_snippet (x->dirfd, x->in_path, o->req.max_code, code, len, &x->real, x->sha256,
                            err)
      < 0)
    {
      int st = (*err)->status;
      csr_error_wrap (err, "cannot read the snippet '%s'", name);
      return st == ESRCH                              ? SBX_EXIT_REFUSED
             : st == 0 || st == E2BIG || st == ENOENT ? CSR_EXIT_USAGE
                                                      : CSR_EXIT_INTERNAL;
    }
  x->rep.path = x->real;
  return 0;
}

/* A stopped sandbox, a busy session: refused (exit 1). */
static int
failed (struct run_opts *o, csr_error *err, int code)
{
  struct sbx_run *x = o->hook_data;
  if (!x->sl.refused)
    return code;
  if (err)
    err->status = 0; /* the keeper's words say it */
  return SBX_EXIT_REFUSED;
}

/* Before the result is printed: what the session did, and the fix of a
 * file of the sandbox written back when the final attempt succeeded. */
static int
after_run (struct run_opts *o, struct csr_snippet_result *res)
{
  struct sbx_run *x = o->hook_data;
  const struct csr_run_result *r = &res->loop.result;
  x->rep.cell = x->sl.cell;
  x->rep.session_started = x->sl.session_started;
  x->rep.session_lost = x->sl.session_lost;
  res->loop.result.sandbox = &x->rep;
  if (x->real == NULL)
    return 0;
  if (r->status == CSR_STATUS_OK)
    x->rep.write_note = "the snippet succeeded as it was: nothing to write";
  else if (r->status != CSR_STATUS_HEALED || r->final_code == NULL)
    x->rep.write_note = "the final attempt did not succeed: the file is left as it was";
  else
    {
      csr_error *e = NULL;
      if (csr_sbx_write_back (x->dirfd, x->real, x->sha256, r->final_code, strlen (r->final_code),
                              &e)
          < 0)
        {
          snprintf (x->note, sizeof x->note, "the healed version was not written: %s",
                    csr_error_text (e));
          csr_error_free (e);
          x->rep.write_note = x->note;
          return CSR_EXIT_INTERNAL;
        }
      x->rep.written = true;
    }
  return 0;
}

/* After the output (not with --json): the write-back and a lost session. */
static void
after_print (struct run_opts *o, const struct csr_run_result *r)
{
  struct sbx_run *x = o->hook_data;
  (void)r;
  if (x->rep.session_lost)
    csr_say ("csrun sandbox run",
             "session %s was lost (its interpreter was killed): its next cell starts a new one",
             x->session);
  if (x->rep.written && !o->quiet)
    csr_say ("csrun sandbox run", "the healed version replaced %s in the sandbox", x->real);
  else if (x->real && !x->rep.written && x->rep.write_note == x->note)
    csr_say ("csrun sandbox run", "%s", x->note);
}

/* --env KEY copies csrun's own value (as csrun run); unset: left out. */
static int
resolve_env (struct sbx_run *x)
{
  size_t n = 0;
  for (size_t i = 0; i < x->ro.req.n_env; i++)
    {
      const char *kv = x->ro.env[i];
      if (strchr (kv, '=') == NULL)
        {
          const char *v = getenv (kv);
          if (v == NULL)
            continue;
          if (asprintf (&x->owned[n], "%s=%s", kv, v) < 0)
            return -1;
          kv = x->owned[n];
        }
      x->env[n++] = kv;
    }
  x->env[n] = NULL;
  return 0;
}

int
cmd_sandbox_run (int argc, char **argv)
{
  static struct sbx_run x; /* the result points into it until the end */
  memset (&x, 0, sizeof x);
  run_opts_defaults (&x.ro);
  x.dirfd = -1;
  static const char doc[]
      = "Run a Python snippet through csrun run's gate, silent-failure scan, diagnosis and "
        "healing, every attempt inside the sandbox ID (its files, working directory, "
        "environment and limits); with --session, as a cell of a persistent interpreter.\v"
        "FILE is a host file (never changed), - for standard input, or :PATH a file of the "
        "sandbox (relative to its working directory), which is replaced by its healed version "
        "when the final attempt succeeds.  Exit status as csrun run's (0, 1, 2, 3 blocked, 124 "
        "timeout, 125); 1 also when the sandbox is stopped or the session busy.  See "
        "csrun-sandbox(1).";
  struct argp_child children[]
      = { { run_opts_sandbox_argp (), 0, "Options of csrun run (see csrun-run(1)):", 0 },
          { NULL, 0, NULL, 0 } };
  struct argp argp
      = { run_options, parse_run, "ID FILE|-|:PATH [ARGS...]", doc, children, NULL, NULL };
  if (argp_parse (&argp, argc, argv, ARGP_IN_ORDER, NULL, &x) != 0)
    return CSR_EXIT_USAGE;
  int code;
  char id[CSR_SANDBOX_ID_LEN + 1];
  x.dirfd = sbx_enter ("run", x.id, id, &code);
  if (x.dirfd < 0)
    return code;
  struct csr_sandbox_spec spec;
  csr_error *e = NULL;
  if (csr_sandbox_spec_read (x.dirfd, &spec, &e) < 0)
    {
      close (x.dirfd);
      return sbx_fail ("run", e, CSR_EXIT_INTERNAL);
    }
  if (resolve_env (&x) < 0)
    {
      csr_sandbox_spec_release (&spec);
      close (x.dirfd);
      return sbx_fail ("run", NULL, CSR_EXIT_INTERNAL);
    }
  csr_sbx_launcher_init (&x.sl, x.dirfd, &spec, x.session, x.env);
  struct run_opts *o = &x.ro;
  o->req.launcher = &x.sl.l;
  o->req.rootfs = spec.rootfs_dir; /* the healer looks for modules in its tree */
  o->req.tmp_size = 256ULL << 20;  /* the sandbox's /tmp (keeper.c); /work is its layer */
  o->req.limits = (struct csr_limits_request){ .memory = spec.memory,
                                               .pids = spec.pids,
                                               .cpu_millis = spec.cpu_millis };
  o->hook_data = &x;
  o->failed = failed;
  o->after_run = after_run;
  o->after_print = after_print;
  o->sandbox = &x.rep;
  x.rep.id = id;
  x.rep.session = x.session;
  if (o->file[0] == ':')
    {
      x.in_path = o->file + 1;
      if (*x.in_path == '\0')
        {
          csr_sandbox_spec_release (&spec);
          close (x.dirfd);
          fprintf (stderr, "csrun sandbox run: ':' needs a PATH in the sandbox\n");
          return CSR_EXIT_USAGE;
        }
      o->read_code = read_code;
    }
  int rc = csr_run_main ("csrun sandbox run", o);
  csr_sandbox_spec_release (&spec);
  close (x.dirfd);
  free (x.real);
  for (size_t i = 0; x.owned[i]; i++)
    free (x.owned[i]);
  return rc;
}

/* ------------------------------------------------------------ csrun sandbox session */

struct session_opts
{
  const char *action, *id, *name, *file;
  bool json;
};

enum
{
  OPT_S_JSON = 2100,
};

static struct argp_option session_options[] = {
  { "json", OPT_S_JSON, NULL, 0, "Print JSON", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_session (int key, char *arg, struct argp_state *state)
{
  struct session_opts *o = state->input;
  switch (key)
    {
    case OPT_S_JSON:
      o->json = true;
      break;
    case ARGP_KEY_ARG:
      if (o->action == NULL)
        o->action = arg;
      else if (o->id == NULL)
        o->id = arg;
      else if (o->name == NULL)
        o->name = arg;
      else if (o->file == NULL)
        o->file = arg;
      else
        sbx_arg_extra (state, arg);
      break;
    case ARGP_KEY_END:
      {
        const char *a = o->action;
        bool ls = a && strcmp (a, "ls") == 0, rm = a && strcmp (a, "rm") == 0;
        bool io = a && (strcmp (a, "save") == 0 || strcmp (a, "load") == 0);
        if (!ls && !rm && !io)
          argp_failure (state, CSR_EXIT_USAGE, 0, "give ls, rm, save or load");
        else if (o->id == NULL)
          argp_failure (state, CSR_EXIT_USAGE, 0, "missing the sandbox's ID (or name)");
        else if (!ls && o->name == NULL)
          argp_failure (state, CSR_EXIT_USAGE, 0, "missing the session's NAME");
        else if (io && o->file == NULL)
          argp_failure (state, CSR_EXIT_USAGE, 0, "missing FILE (or -)");
        else if ((ls && o->name) || (rm && o->file))
          argp_failure (state, CSR_EXIT_USAGE, 0, "too many arguments");
        else if (o->name && !csr_sbx_session_name_ok (o->name))
          argp_failure (state, CSR_EXIT_USAGE, 0, "invalid session name '%s'", o->name);
        break;
      }
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

/* A session command's error: the keeper's words (its errno, which chose
 * the exit code, is in them). */
static int
session_fail (const char *cmd, csr_error *e)
{
  int st = e ? e->status : 0;
  int code = st == ENOENT || st == EINVAL ? CSR_EXIT_USAGE
             : st == ESRCH || st == EBUSY ? SBX_EXIT_REFUSED
                                          : CSR_EXIT_INTERNAL;
  bool words = st == ENOENT || st == ESRCH || st == EBUSY || st == EINVAL;
  fprintf (stderr, "csrun sandbox %s: %s\n", cmd,
           e == NULL ? "out of memory"
           : words   ? e->msg
                     : csr_error_text (e));
  csr_error_free (e);
  return code;
}

static int
session_ls (int d, const struct session_opts *o)
{
  char *reply = NULL;
  csr_error *e = NULL;
  if (csr_sbx_session_ls (d, &reply, &e) < 0)
    return session_fail ("session ls", e);
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (reply, ebuf, sizeof ebuf);
  free (reply);
  yajl_val list = csr_json_get (t, "sessions");
  struct csr_jgen w;
  if (o->json && csr_jgen_init (&w, false, &e) < 0)
    return sbx_fail ("session ls", e, CSR_EXIT_INTERNAL);
  if (o->json)
    csr_jgen_array_open (&w);
  else
    printf ("%-20s  %-8s  %-5s  %6s  %-20s  %s\n", "NAME", "PID", "STATE", "CELLS", "CREATED",
            "IDLE");
  for (size_t i = 0; list && YAJL_IS_ARRAY (list) && i < list->u.array.len; i++)
    {
      yajl_val s = list->u.array.values[i];
      const char *name = csr_json_str (csr_json_get (s, "name"));
      const char *st = csr_json_str (csr_json_get (s, "state"));
      char ct[32];
      sbx_fmt_time (csr_json_int (s, "created", 0), ct, sizeof ct);
      long long p = csr_json_int (s, "pid", 0);
      long long n = csr_json_int (s, "cells", 0);
      long long im = csr_json_int (s, "idle_ms", 0);
      if (o->json)
        {
          csr_jgen_map_open (&w);
          csr_jgen_kv_str (&w, "name", name ? name : "");
          csr_jgen_kv_int (&w, "pid", p);
          csr_jgen_kv_str (&w, "state", st ? st : "?");
          csr_jgen_kv_int (&w, "cells", n);
          csr_jgen_kv_str (&w, "created", ct);
          csr_jgen_kv_int (&w, "idle_ms", im);
          csr_jgen_map_close (&w);
        }
      else
        printf ("%-20s  %-8lld  %-5s  %6lld  %-20s  %llds\n", name ? name : "?", p, st ? st : "?",
                n, ct, im / 1000);
    }
  if (o->json)
    {
      csr_jgen_array_close (&w);
      return sbx_print_json (&w, "session ls", "the listing");
    }
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}

/* The session's report: as it is (--json), else one line. */
static void
print_report (FILE *f, const char *report, bool json)
{
  if (json)
    {
      fprintf (f, "%s\n", report);
      return;
    }
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (report, ebuf, sizeof ebuf);
  static const char *const keys[] = { "saved", "loaded", "modules" };
  /* Names and reasons from the sandbox: shown inert. */
  for (size_t k = 0; k < 3; k++)
    {
      yajl_val a = csr_json_get (t, keys[k]);
      if (a == NULL || !YAJL_IS_ARRAY (a))
        continue;
      fprintf (f, "%s:", keys[k]);
      for (size_t i = 0; i < a->u.array.len; i++)
        {
          cleanup_free char *n = csr_termsafe_str (csr_json_str (a->u.array.values[i]) ?: "?");
          fprintf (f, " %s", n ? n : "?");
        }
      fprintf (f, "\n");
    }
  yajl_val sk = csr_json_get (t, "skipped");
  for (size_t i = 0; sk && YAJL_IS_ARRAY (sk) && i < sk->u.array.len; i++)
    {
      cleanup_free char *n
          = csr_termsafe_str (csr_json_str (csr_json_get (sk->u.array.values[i], "name")) ?: "?");
      cleanup_free char *why
          = csr_termsafe_str (csr_json_str (csr_json_get (sk->u.array.values[i], "why")) ?: "?");
      fprintf (f, "skipped: %s: %s\n", n ? n : "?", why ? why : "?");
    }
  yajl_val om = csr_json_get (t, "omitted");
  if (om && YAJL_IS_INTEGER (om) && YAJL_GET_INTEGER (om) > 0)
    fprintf (f, "omitted: %lld more names (the report is cut)\n", (long long)YAJL_GET_INTEGER (om));
}

static int
session_save (int d, const struct session_opts *o)
{
  bool to_stdout = strcmp (o->file, "-") == 0;
  cleanup_free char *tmp = NULL;
  int fd = STDOUT_FILENO;
  if (!to_stdout)
    {
      /* Beside FILE, renamed over it once complete: never half a save. */
      if (asprintf (&tmp, "%s.csrun-tmp-%d", o->file, (int)getpid ()) < 0)
        return sbx_fail ("session save", NULL, CSR_EXIT_INTERNAL);
      fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0)
        {
          fprintf (stderr, "csrun sandbox session save: %s: %s\n", tmp, strerror (errno));
          return CSR_EXIT_USAGE;
        }
    }
  char *report = NULL;
  csr_error *e = NULL;
  int rc = csr_sbx_session_save (d, o->name, fd, SESSION_SAVE_MAX, &report, &e);
  if (!to_stdout)
    {
      if (rc == 0 && (fsync (fd) < 0 || close (fd) < 0))
        rc = csr_error_errno (&e, "%s", tmp);
      else if (rc < 0)
        close (fd);
      if (rc == 0 && rename (tmp, o->file) < 0)
        rc = csr_error_errno (&e, "rename to %s", o->file);
      if (rc < 0)
        unlink (tmp);
    }
  if (rc < 0)
    {
      free (report);
      return session_fail ("session save", e);
    }
  print_report (to_stdout ? stderr : stdout, report, o->json);
  free (report);
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}

static int
session_load (int d, const struct session_opts *o)
{
  bool from_stdin = strcmp (o->file, "-") == 0;
  cleanup_close int fd = from_stdin ? dup (STDIN_FILENO) : open (o->file, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      fprintf (stderr, "csrun sandbox session load: %s: %s\n", o->file, strerror (errno));
      return CSR_EXIT_USAGE;
    }
  char *report = NULL;
  csr_error *e = NULL;
  if (csr_sbx_session_load (d, o->name, fd, SESSION_SAVE_MAX, &report, &e) < 0)
    return session_fail ("session load", e);
  print_report (stdout, report, o->json);
  free (report);
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}

int
cmd_sandbox_session (int argc, char **argv)
{
  struct session_opts o = { 0 };
  static const char doc[]
      = "The sessions of a sandbox (persistent interpreters, see csrun sandbox run --session): "
        "ls ID lists them, rm ID NAME ends one, save ID NAME FILE|- writes its picklable "
        "globals (a pickle), load ID NAME FILE|- puts such a save into a session (started "
        "when it does not run).\vSee csrun-sandbox(1).";
  struct argp argp = { session_options,
                       parse_session,
                       "ls ID | rm ID NAME | save ID NAME FILE|- "
                       "| load ID NAME FILE|-",
                       doc,
                       NULL,
                       NULL,
                       NULL };
  if (argp_parse (&argp, argc, argv, 0, NULL, &o) != 0)
    return CSR_EXIT_USAGE;
  int code;
  char id[CSR_SANDBOX_ID_LEN + 1];
  cleanup_close int d = sbx_enter ("session", o.id, id, &code);
  if (d < 0)
    return code;
  if (strcmp (o.action, "ls") == 0)
    return session_ls (d, &o);
  if (strcmp (o.action, "save") == 0)
    return session_save (d, &o);
  if (strcmp (o.action, "load") == 0)
    return session_load (d, &o);
  csr_error *e = NULL;
  if (csr_sbx_session_rm (d, o.name, &e) < 0)
    return session_fail ("session rm", e);
  if (o.json)
    printf ("{\"id\":\"%s\",\"session\":\"%s\",\"ok\":true}\n", id, o.name);
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}
