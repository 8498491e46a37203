/* csrun sandbox checkpoint|restore (and checkpoint ls|rm): options -> the
 * checkpoint store (src/lib/sandbox/checkpoint.h) and requests to the
 * keeper -> output and exit code. */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "cmd.h"
#include "sandbox.h"
#include "sandbox/checkpoint.h"
#include "sandbox/sandbox.h"
#include "util/cleanup.h"
#include "util/json-gen.h"
#include "util/json.h"
#include "util/parse.h"
#include "util/termsafe.h"
#include "util/trust.h"

enum
{
  OPT_TTL = 1000,
  OPT_LEAVE_RUNNING,
  OPT_BEFORE,
  OPT_AFTER,
  OPT_NAME,
  OPT_JSON,
  OPT_SESSION_TIMEOUT,
};

struct ckpt_opts
{
  const char *cmd; /* "checkpoint", "restore", "checkpoint ls", "checkpoint rm" */
  const char *id;
  double ttl_s;
  bool leave_running, json;
  const char *hook; /* --before-checkpoint, --after-restore */
  const char *name;
  double session_timeout_s; /* 0: the keeper's default */
};

/* ------------------------------------------------------------ shared */

void
sbx_ckpt_collect (const char *cmd, char ***removed, size_t *n)
{
  if (removed)
    {
      *removed = NULL;
      *n = 0;
    }
  csr_error *e = NULL;
  cleanup_close int ck = csr_ckpt_root (false, NULL, &e);
  if (ck < 0)
    {
      /* No checkpoint directory: nothing to collect. */
      if (ck == CSR_TRUST_REFUSED || e->status != ENOENT)
        fprintf (stderr, "csrun sandbox %s: warning: %s\n", cmd, csr_error_text (e));
      csr_error_free (e);
      return;
    }
  if (csr_ckpt_collect (ck, (int64_t)time (NULL), removed, n, &e) < 0)
    {
      fprintf (stderr, "csrun sandbox %s: warning: %s\n", cmd, csr_error_text (e));
      csr_error_free (e);
    }
}

/* The exit code of a checkpoint error. */
static int ckpt_code (const csr_error *e);

/* Print E under CMD and return its exit code; the errors that are ours
 * (damaged, expired, ...) say it all without the errno's text. */
static int
ckpt_fail (const char *cmd, csr_error *e)
{
  int code = ckpt_code (e);
  if (e
      && (e->status == CSR_CKPT_E_DAMAGED || e->status == CSR_CKPT_E_EXPIRED
          || e->status == CSR_CKPT_E_ROOTFS || e->status == EBUSY || e->status == ENOENT))
    e->status = 0;
  return sbx_fail (cmd, e, code);
}

static int
ckpt_code (const csr_error *e)
{
  if (e == NULL)
    return CSR_EXIT_INTERNAL;
  switch (e->status)
    {
    case ENOENT:
      return CSR_EXIT_USAGE;
    case CSR_CKPT_E_DAMAGED:
      return SBX_EXIT_DAMAGED;
    case CSR_CKPT_E_EXPIRED:
    case CSR_CKPT_E_ROOTFS:
    case EBUSY:
      return SBX_EXIT_REFUSED;
    default:
      return CSR_EXIT_INTERNAL;
    }
}

/* Run /bin/sh -c CMD in the sandbox DIRFD (an exec request), its output on
 * our stderr (stdout is for the id or the JSON); its exit status (128+N for
 * a signal), or -1 with *ERR. */
static int
run_hook (int dirfd, const char *cmd, csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return -1;
  const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
  const char *none[] = { NULL };
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "op", "exec");
  csr_jgen_kv_strv (&w, "argv", argv);
  csr_jgen_kv_strv (&w, "env", none);
  csr_jgen_map_close (&w);
  cleanup_free char *req = csr_jgen_finish (&w, "the exec request", NULL, err);
  if (req == NULL)
    return -1;
  cleanup_close int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  int fds[3] = { devnull, 2, 2 };
  cleanup_yajl_val yajl_val t = NULL;
  if (csr_sandbox_request (dirfd, req, fds, 3, -1, &t, err) < 0)
    return -1;
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  if (t == NULL || msg)
    return csr_error_set (err, EBUSY, "%s", msg ? msg : "the keeper's reply is not JSON");
  if (YAJL_IS_TRUE (csr_json_get (t, "setup_failed")))
    return csr_error_set (err, 0, "the command could not be started in the sandbox");
  long long sig = csr_json_int (t, "signal", 0);
  if (sig)
    return 128 + (int)sig;
  return (int)csr_json_int (t, "exit_code", -1);
}

/* A request with one descriptor whose reply may take long; the parsed
 * reply, or NULL with *ERR (status from the reply's "kind"). */
static yajl_val
long_request (int dirfd, const char *req, int fd, csr_error **err)
{
  yajl_val t;
  if (csr_sandbox_request (dirfd, req, &fd, 1, -1, &t, err) < 0)
    return NULL;
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  if (t && !msg)
    return t;
  const char *kind = csr_json_str (csr_json_get (t, "kind"));
  int st = (int)csr_json_int (t, "status", 0);
  /* The keeper's errno, but for the ones whose exit code means something else here. */
  if (st == ENOENT || st == EBUSY || st == CSR_CKPT_E_DAMAGED || st == CSR_CKPT_E_EXPIRED
      || st == CSR_CKPT_E_ROOTFS)
    st = 0;
  if (kind == NULL && msg && strstr (msg, "busy with"))
    st = EBUSY;
  else if (kind && strcmp (kind, "damaged") == 0)
    st = CSR_CKPT_E_DAMAGED;
  else if (kind && strcmp (kind, "rootfs") == 0)
    st = CSR_CKPT_E_ROOTFS;
  csr_error_set (err, st, "%s", msg ? msg : "the keeper's reply is not JSON");
  yajl_tree_free (t);
  return NULL;
}

#define SESSION_WARNINGS 20 /* lines about sessions on stderr; the rest counted */

/* On stderr: the sessions of the reply T (its "sessions") that were not
 * saved or loaded (WHAT), and their globals left out.  Names and reasons
 * come from the sandbox: shown inert. */
static void
warn_sessions (const char *cmd, yajl_val t, const char *what)
{
  yajl_val ss = csr_json_get (t, "sessions");
  size_t shown = 0, more = 0;
  for (size_t i = 0; ss && YAJL_IS_ARRAY (ss) && i < ss->u.array.len; i++)
    {
      yajl_val s = ss->u.array.values[i];
      cleanup_free char *name = csr_termsafe_str (csr_json_str (csr_json_get (s, "name")));
      const char *err = csr_json_str (csr_json_get (s, "error"));
      if (err)
        {
          cleanup_free char *why = csr_termsafe_str (err);
          if (shown++ < SESSION_WARNINGS)
            fprintf (stderr, "csrun sandbox %s: warning: not %s: %s\n", cmd, what, why ? why : "?");
          else
            more++;
          continue;
        }
      yajl_val sk = csr_json_get (s, "skipped");
      for (size_t j = 0; sk && YAJL_IS_ARRAY (sk) && j < sk->u.array.len; j++)
        {
          if (shown++ >= SESSION_WARNINGS)
            {
              more++;
              continue;
            }
          yajl_val x = sk->u.array.values[j];
          cleanup_free char *g = csr_termsafe_str (csr_json_str (csr_json_get (x, "name")));
          cleanup_free char *why = csr_termsafe_str (csr_json_str (csr_json_get (x, "why")));
          fprintf (stderr, "csrun sandbox %s: warning: session %s: %s not %s: %s\n", cmd,
                   name ? name : "?", g ? g : "?", what, why ? why : "?");
        }
    }
  if (more)
    fprintf (stderr,
             "csrun sandbox %s: warning: %zu more sessions or globals not %s (see --json)\n", cmd,
             more, what);
}

/* ------------------------------------------------------------ options */

static struct argp_option checkpoint_options[] = {
  { "ttl", OPT_TTL, "DURATION", 0,
    "Remove the checkpoint DURATION after it is taken (default: never)", 0 },
  { "leave-running", OPT_LEAVE_RUNNING, NULL, 0,
    "Let the sandbox go on afterwards (default: it is stopped once checkpointed)", 0 },
  { "before-checkpoint", OPT_BEFORE, "CMD", 0,
    "Run /bin/sh -c CMD in the sandbox first; if it fails, no checkpoint", 0 },
  { "session-timeout", OPT_SESSION_TIMEOUT, "DURATION", 0,
    "How long each session may take to save its globals (default 120s); a slower one is "
    "interrupted and left out",
    0 },
  { "json", OPT_JSON, NULL, 0, "Print the checkpoint as JSON", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static struct argp_option restore_options[] = {
  { "name", OPT_NAME, "NAME", 0, "A name for the new sandbox", 0 },
  { "after-restore", OPT_AFTER, "CMD", 0,
    "Run /bin/sh -c CMD in the new sandbox once it is ready; if it fails, the sandbox is removed",
    0 },
  { "session-timeout", OPT_SESSION_TIMEOUT, "DURATION", 0,
    "How long each session may take to load its globals (default 120s); a slower one is "
    "interrupted",
    0 },
  { "json", OPT_JSON, NULL, 0, "Print the new sandbox as JSON", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static struct argp_option list_options[] = {
  { "json", OPT_JSON, NULL, 0, "Print JSON", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_ckpt (int key, char *arg, struct argp_state *state)
{
  struct ckpt_opts *o = state->input;
  csr_error *e = NULL;
  switch (key)
    {
    case OPT_TTL:
      if (csr_parse_duration (arg, 3660.0 * 86400, &o->ttl_s, &e) < 0 || o->ttl_s <= 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --ttl '%s'", arg);
      break;
    case OPT_LEAVE_RUNNING:
      o->leave_running = true;
      break;
    case OPT_SESSION_TIMEOUT:
      if (csr_parse_duration (arg, 86400.0, &o->session_timeout_s, &e) < 0
          || o->session_timeout_s < 0.001)
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --session-timeout '%s'", arg);
      break;
    case OPT_BEFORE:
    case OPT_AFTER:
      if (!*arg)
        argp_failure (state, CSR_EXIT_USAGE, 0, "an empty hook command");
      o->hook = arg;
      break;
    case OPT_NAME:
      sbx_check_name (state, arg);
      o->name = arg;
      break;
    case OPT_JSON:
      o->json = true;
      break;
    case ARGP_KEY_ARG:
      sbx_arg_id (state, arg, &o->id, strcmp (o->cmd, "checkpoint ls") != 0);
      break;
    case ARGP_KEY_END:
      if (!o->id && strcmp (o->cmd, "checkpoint ls") != 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "missing the %s's ID",
                      strcmp (o->cmd, "checkpoint") == 0 ? "sandbox" : "checkpoint");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  csr_error_free (e);
  return 0;
}

/* ------------------------------------------------------------ checkpoint */

static int
do_checkpoint (struct ckpt_opts *o)
{
  int code;
  char id[CSR_SANDBOX_ID_LEN + 1];
  cleanup_close int d = sbx_enter ("checkpoint", o->id, id, &code);
  if (d < 0)
    return code;
  csr_error *e = NULL;
  cleanup_close int ck = csr_ckpt_root (true, NULL, &e);
  if (ck < 0)
    return sbx_fail ("checkpoint", e, CSR_EXIT_INTERNAL);
  if (o->hook)
    {
      int st = run_hook (d, o->hook, &e);
      if (st < 0)
        return sbx_fail ("checkpoint", e,
                         e && e->status == EBUSY ? SBX_EXIT_REFUSED : CSR_EXIT_INTERNAL);
      if (st != 0)
        {
          fprintf (stderr,
                   "csrun sandbox checkpoint: --before-checkpoint failed (exit %d): no "
                   "checkpoint taken\n",
                   st);
          return SBX_EXIT_REFUSED;
        }
    }
  char req[200];
  snprintf (req, sizeof req,
            "{\"op\":\"checkpoint\",\"ttl_ms\":%lld,\"leave_running\":%s,"
            "\"session_timeout_ms\":%lld}",
            (long long)(o->ttl_s * 1000), o->leave_running ? "true" : "false",
            (long long)(o->session_timeout_s * 1000));
  cleanup_yajl_val yajl_val t = long_request (d, req, ck, &e);
  if (t == NULL)
    return ckpt_fail ("checkpoint", e);
  const char *cid = csr_json_str (csr_json_get (t, "id"));
  const char *warn = csr_json_str (csr_json_get (t, "warning"));
  if (warn)
    fprintf (stderr, "csrun sandbox checkpoint: warning: %s\n", warn);
  yajl_val total = csr_json_get (t, "not_saved_total");
  if (!o->json && total && YAJL_IS_INTEGER (total) && YAJL_GET_INTEGER (total) > 0)
    fprintf (stderr,
             "csrun sandbox checkpoint: warning: %lld entries not saved (see checkpoint ls "
             "--json)\n",
             (long long)YAJL_GET_INTEGER (total));
  if (!o->json)
    {
      warn_sessions ("checkpoint", t, "saved");
      return sbx_print_done (cid ? cid : "?", false);
    }
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, &e) < 0)
    return sbx_fail ("checkpoint", e, CSR_EXIT_INTERNAL);
  csr_jgen_tree (&w, t);
  return sbx_print_doc (&w, "checkpoint");
}

/* ------------------------------------------------------------ restore */

/* Remove the sandbox ID made by a restore that failed. */
static void
remove_sandbox (int root, const char *id)
{
  cleanup_close int d = openat (root, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  char *reply = NULL;
  if (d >= 0 && csr_sandbox_call (d, "{\"op\":\"rm\"}", 30000, &reply, NULL) == 0)
    for (int i = 0; i < 500 && faccessat (root, id, F_OK, AT_SYMLINK_NOFOLLOW) == 0
                    && csr_sandbox_keeper_alive (d);
         i++)
      usleep (10000);
  free (reply);
  csr_sandbox_reap (root, id, true, NULL);
}

/* The create spec of a sandbox restored from C (named NAME). */
static int
restored_spec (const struct csr_ckpt_spec *c, const char *name, struct csr_sandbox_spec *s)
{
  const struct csr_sandbox_spec *o = &c->s;
  memset (s, 0, sizeof *s);
  size_t n = 0;
  while (o->env && o->env[n])
    n++;
  s->env = calloc (n + 1, sizeof *s->env);
  s->name = name ? strdup (name) : NULL;
  s->rootfs = strdup (o->rootfs);
  s->workdir = strdup (o->workdir);
  if (s->env == NULL || (name && !s->name) || !s->rootfs || !s->workdir)
    return -1;
  for (size_t i = 0; i < n; i++)
    if ((s->env[i] = strdup (o->env[i])) == NULL)
      return -1;
  s->memory = o->memory;
  s->pids = o->pids;
  s->cpu_millis = o->cpu_millis;
  s->idle_timeout_s = o->idle_timeout_s;
  s->ttl_s = o->ttl_s;
  s->host_net = o->host_net;
  s->idle_checkpoint = o->idle_checkpoint;
  /* issue 15: the same package layer and the same cap. */
  s->disk = o->disk;
  size_t nw = 0;
  while (o->with && o->with[nw])
    nw++;
  if (nw && (s->with = calloc (nw + 1, sizeof *s->with)) == NULL)
    return -1;
  for (size_t i = 0; i < nw; i++)
    if ((s->with[i] = strdup (o->with[i])) == NULL)
      return -1;
  return 0;
}

/* The new sandbox NEW_ID checked ready (an exec starts in it), then the
 * --after-restore hook. */
static int
ready_and_hook (int root, const char *new_id, const char *hook, csr_error **err)
{
  cleanup_close int d = openat (root, new_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (d < 0)
    return csr_error_errno (err, "open the new sandbox");
  /* A rootfs without /bin/sh gives 127: the exec was set up all the same. */
  if (run_hook (d, ":", err) < 0)
    return csr_error_wrap (err, "the restored sandbox is not ready");
  if (hook)
    {
      int st = run_hook (d, hook, err);
      if (st < 0)
        return csr_error_wrap (err, "--after-restore");
      if (st != 0)
        return csr_error_set (err, EBUSY,
                              "--after-restore failed (exit %d): the new sandbox is "
                              "removed",
                              st);
    }
  return 0;
}

static int
print_restored (const struct ckpt_opts *o, const char *ckid, const char *new_id, yajl_val t,
                const char *warning)
{
  if (!o->json)
    {
      warn_sessions ("restore", t, "loaded");
      return sbx_print_done (new_id, false);
    }
  struct csr_jgen w;
  csr_error *e = NULL;
  if (csr_jgen_init (&w, false, &e) < 0)
    return sbx_fail ("restore", e, CSR_EXIT_INTERNAL);
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "id", new_id);
  if (o->name)
    csr_jgen_kv_str (&w, "name", o->name);
  csr_jgen_kv_str (&w, "checkpoint", ckid);
  yajl_val layer = csr_json_get (t, "layer"), notes = csr_json_get (t, "not_saved");
  if (layer)
    {
      csr_jgen_str (&w, "layer");
      csr_jgen_tree (&w, layer);
    }
  csr_jgen_str (&w, "not_restored");
  if (notes)
    csr_jgen_tree (&w, notes);
  else
    {
      csr_jgen_array_open (&w);
      csr_jgen_array_close (&w);
    }
  yajl_val ss = csr_json_get (t, "sessions");
  csr_jgen_str (&w, "sessions");
  if (ss && YAJL_IS_ARRAY (ss))
    csr_jgen_tree (&w, ss);
  else
    {
      csr_jgen_array_open (&w);
      csr_jgen_array_close (&w);
    }
  if (warning)
    csr_jgen_kv_str (&w, "warning", warning);
  csr_jgen_map_close (&w);
  return sbx_print_doc (&w, "restore");
}

static int
do_restore (struct ckpt_opts *o)
{
  csr_error *e = NULL;
  /* Dead sandboxes collected, checkpoints not yet: an expired one is said
   * so before it goes. */
  cleanup_close int root = csr_sandbox_root (NULL, &e);
  if (root < 0)
    return sbx_fail ("restore", e, CSR_EXIT_INTERNAL);
  csr_sandbox_collect (root, NULL, NULL, NULL);
  cleanup_close int ck = csr_ckpt_root (false, NULL, &e);
  if (ck < 0 && ck != CSR_TRUST_REFUSED && e->status == ENOENT)
    {
      csr_error_free (e);
      e = NULL;
      csr_error_set (&e, ENOENT, "no such checkpoint: '%s'", o->id);
    }
  char ckid[CSR_CKPT_ID_LEN + 1];
  if (ck < 0 || csr_ckpt_find (ck, o->id, ckid, &e) < 0)
    return ckpt_fail ("restore", e);
  struct csr_ckpt_info info;
  int lockfd;
  cleanup_close int afd
      = csr_ckpt_open_for_restore (ck, ckid, (int64_t)time (NULL), &info, &lockfd, &e);
  cleanup_close int lk = lockfd;
  if (afd < 0)
    {
      csr_ckpt_info_release (&info);
      if (e->status == CSR_CKPT_E_EXPIRED)
        {
          csr_error_wrap (&e, "refused");
          sbx_ckpt_collect ("restore", NULL, NULL);
        }
      return ckpt_fail ("restore", e);
    }
  csr_ckpt_info_release (&info);
  sbx_ckpt_collect ("restore", NULL, NULL);
  struct csr_ckpt_spec c;
  if (csr_ckpt_read_spec (afd, &c, &e) < 0)
    return ckpt_fail ("restore", e);
  struct stat st;
  cleanup_free char *warning = NULL;
  if (stat (c.s.rootfs, &st) < 0)
    {
      csr_error_set (&e, CSR_CKPT_E_ROOTFS, "the checkpoint's rootfs %s is gone (%s)", c.s.rootfs,
                     strerror (errno));
      csr_ckpt_spec_release (&c);
      return sbx_fail ("restore", e, SBX_EXIT_REFUSED);
    }
  if (c.rootfs_sha256 == NULL
      && asprintf (&warning,
                   "the checkpoint's rootfs is a directory (%s): its contents are not "
                   "compared with the checkpoint's",
                   c.s.rootfs)
             < 0)
    warning = NULL;
  if (warning && !o->json)
    fprintf (stderr, "csrun sandbox restore: warning: %s\n", warning);
  struct csr_sandbox_spec s;
  if (restored_spec (&c, o->name, &s) < 0)
    {
      csr_ckpt_spec_release (&c);
      csr_sandbox_spec_release (&s);
      return sbx_fail ("restore", NULL, CSR_EXIT_INTERNAL);
    }
  if (csr_sandbox_create (root, NULL, &s, &e) < 0)
    {
      csr_ckpt_spec_release (&c);
      csr_sandbox_spec_release (&s);
      return sbx_fail ("restore", e, e && e->status == EEXIST ? CSR_EXIT_USAGE : CSR_EXIT_INTERNAL);
    }
  char new_id[CSR_SANDBOX_ID_LEN + 1];
  snprintf (new_id, sizeof new_id, "%s", s.id);
  csr_sandbox_spec_release (&s);
  struct csr_jgen w;
  cleanup_free char *req = NULL;
  if (csr_jgen_init (&w, false, &e) == 0)
    {
      csr_jgen_map_open (&w);
      csr_jgen_kv_str (&w, "op", "restore");
      csr_jgen_kv_int (&w, "session_timeout_ms", (long long)(o->session_timeout_s * 1000));
      if (c.rootfs_sha256)
        csr_jgen_kv_str (&w, "rootfs_sha256", c.rootfs_sha256);
      csr_jgen_map_close (&w);
      req = csr_jgen_finish (&w, "the restore request", NULL, &e);
    }
  csr_ckpt_spec_release (&c);
  cleanup_close int d = openat (root, new_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_yajl_val yajl_val t = req && d >= 0 ? long_request (d, req, afd, &e) : NULL;
  if (t == NULL || ready_and_hook (root, new_id, o->hook, &e) < 0)
    {
      remove_sandbox (root, new_id);
      if (e == NULL)
        csr_error_set (&e, errno, "open the new sandbox");
      if (e->status == CSR_CKPT_E_ROOTFS)
        csr_error_wrap (&e, "refused");
      return ckpt_fail ("restore", e);
    }
  return print_restored (o, ckid, new_id, t, warning);
}

/* ------------------------------------------------------------ ls, rm */

static int
do_ls (struct ckpt_opts *o)
{
  sbx_ckpt_collect ("checkpoint ls", NULL, NULL);
  csr_error *e = NULL;
  cleanup_close int ck = csr_ckpt_root (false, NULL, &e);
  char **ids = NULL;
  size_t n = 0;
  if (ck < 0 && (ck == CSR_TRUST_REFUSED || e->status != ENOENT))
    return sbx_fail ("checkpoint ls", e, CSR_EXIT_INTERNAL);
  csr_error_freep (&e);
  if (ck >= 0 && csr_ckpt_list (ck, &ids, &n, &e) < 0)
    return sbx_fail ("checkpoint ls", e, CSR_EXIT_INTERNAL);
  struct csr_jgen w;
  if (o->json && csr_jgen_init (&w, false, &e) < 0)
    return sbx_fail ("checkpoint ls", e, CSR_EXIT_INTERNAL);
  if (o->json)
    csr_jgen_array_open (&w);
  else
    printf ("%-32s  %-16s  %-20s  %-20s  %10s  %7s  %s\n", "ID", "SANDBOX", "CREATED", "EXPIRES",
            "SIZE", "FILES", "TRIGGER");
  for (size_t i = 0; i < n; i++)
    {
      struct csr_ckpt_info info;
      int r = csr_ckpt_info_read (ck, ids[i], &info, &e);
      if (o->json)
        {
          csr_jgen_map_open (&w);
          if (r == 0)
            csr_ckpt_info_gen (&w, &info);
          else
            {
              csr_jgen_kv_str (&w, "id", ids[i]);
              csr_jgen_kv_str (&w, "error", csr_error_text (e));
            }
          csr_jgen_map_close (&w);
        }
      else if (r == 0)
        {
          char ct[32], ex[32] = "-";
          sbx_fmt_time (info.created, ct, sizeof ct);
          if (info.expires)
            sbx_fmt_time (info.expires, ex, sizeof ex);
          printf ("%-32s  %-16s  %-20s  %-20s  %10llu  %7llu  %s\n", info.id,
                  info.sandbox_name ? info.sandbox_name : info.sandbox_id, ct, ex,
                  (unsigned long long)info.stats.archive_bytes,
                  (unsigned long long)info.stats.files, info.trigger);
        }
      else
        printf ("%-32s  (unreadable: %s)\n", ids[i], csr_error_text (e));
      csr_error_freep (&e);
      csr_ckpt_info_release (&info);
    }
  csr_sandbox_list_free (ids, n);
  if (!o->json)
    return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
  csr_jgen_array_close (&w);
  return sbx_print_doc (&w, "checkpoint ls");
}

static int
do_rm (struct ckpt_opts *o)
{
  sbx_ckpt_collect ("checkpoint rm", NULL, NULL);
  csr_error *e = NULL;
  cleanup_close int ck = csr_ckpt_root (false, NULL, &e);
  char id[CSR_CKPT_ID_LEN + 1];
  if (ck < 0 && ck != CSR_TRUST_REFUSED && e->status == ENOENT)
    {
      csr_error_freep (&e);
      csr_error_set (&e, ENOENT, "no such checkpoint: '%s'", o->id);
    }
  if (ck < 0 || csr_ckpt_find (ck, o->id, id, &e) < 0 || csr_ckpt_remove (ck, id, &e) < 0)
    return ckpt_fail ("checkpoint rm", e);
  return sbx_print_done (id, o->json);
}

/* ------------------------------------------------------------ entry points */

static int
parse_and_run (struct ckpt_opts *o, struct argp_option *options, const char *args, const char *doc,
               int argc, char **argv, int (*fn) (struct ckpt_opts *))
{
  struct argp argp = { options, parse_ckpt, args, doc, NULL, NULL, NULL };
  if (argp_parse (&argp, argc, argv, 0, NULL, o) != 0)
    return CSR_EXIT_USAGE;
  return fn (o);
}

int
cmd_sandbox_checkpoint (int argc, char **argv)
{
  struct ckpt_opts o = { .cmd = "checkpoint" };
  if (argc > 1 && (strcmp (argv[1], "ls") == 0 || strcmp (argv[1], "rm") == 0))
    {
      bool ls = strcmp (argv[1], "ls") == 0;
      o.cmd = ls ? "checkpoint ls" : "checkpoint rm";
      argv[1] = (char *)(ls ? "csrun sandbox checkpoint ls" : "csrun sandbox checkpoint rm");
      return parse_and_run (
          &o, list_options, ls ? "" : "CKPT",
          ls ? "List the checkpoints: id, sandbox, created, expiry, size, files, trigger "
               "(command or idle).\vSee csrun-sandbox(1)."
             : "Remove a checkpoint.\vSee csrun-sandbox(1).",
          argc - 1, argv + 1, ls ? do_ls : do_rm);
    }
  return parse_and_run (&o, checkpoint_options, "ID",
                        "Save a sandbox's writable layer and spec as a checkpoint and print its "
                        "id (not its processes' memory).  Also: checkpoint ls, checkpoint rm "
                        "CKPT.\vSee csrun-sandbox(1).",
                        argc, argv, do_checkpoint);
}

int
cmd_sandbox_restore (int argc, char **argv)
{
  struct ckpt_opts o = { .cmd = "restore" };
  return parse_and_run (&o, restore_options, "CKPT",
                        "Make a new sandbox from a checkpoint and print its id once it is "
                        "ready.\vSee csrun-sandbox(1).",
                        argc, argv, do_restore);
}
