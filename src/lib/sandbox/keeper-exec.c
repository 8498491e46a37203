/* csrun — the keeper's side of exec (keeper.h): the request, the execs'
 * deadlines and their end, reported to the client that asked. */
#include "config.h"
#include "keeper.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/json-gen.h"
#include "../util/json.h"

/* The sandbox's environment, then the exec's KEY=VALUE entries. */
static char **
exec_env (const struct keeper *k, char **extra)
{
  size_t n = 0, m = 0;
  while (k->spec->env[n])
    n++;
  while (extra && extra[m])
    m++;
  char **v = calloc (n + m + 1, sizeof *v);
  if (v == NULL)
    return NULL;
  size_t c = 0;
  for (size_t i = 0; i < n + m; i++)
    {
      char *kv = i < n ? k->spec->env[i] : extra[i - n];
      const char *eq = strchr (kv, '=');
      if (eq == NULL)
        continue;
      size_t kl = (size_t)(eq - kv) + 1, j;
      for (j = 0; j < c; j++)
        if (strncmp (v[j], kv, kl) == 0)
          break;
      v[j] = kv;
      if (j == c)
        c++;
    }
  return v;
}

struct keeper_exec *
keeper_exec_start (struct keeper *k, yajl_val req, const int *fds, size_t n_fds, csr_error **err)
{
  if (!k->running)
    {
      csr_error_set (err, 0, "the sandbox is stopped (csrun sandbox start ID)");
      return NULL;
    }
  /* stdin, stdout, stderr; then (issue 15) one for each number of "fds"
   * (3 and up, rising: the others below the highest are closed). */
  yajl_val more = csr_json_get (req, "fds");
  size_t n_more = more && YAJL_IS_ARRAY (more) ? more->u.array.len : 0;
  if (n_fds != 3 + n_more)
    {
      csr_error_set (err, 0, "exec: expected 3 descriptors and one for each of \"fds\"");
      return NULL;
    }
  int more_fds[CSR_SBX_MAX_EXTRA_FDS];
  size_t n_extra = 0;
  for (size_t i = 0; i < n_more; i++)
    {
      yajl_val v = more->u.array.values[i];
      long long num = v && YAJL_IS_INTEGER (v) ? YAJL_GET_INTEGER (v) : -1;
      if (num < 3 + (long long)n_extra || num >= 3 + CSR_SBX_MAX_EXTRA_FDS)
        {
          csr_error_set (err, 0, "exec: \"fds\" must rise from 3 to 7");
          return NULL;
        }
      while (3 + (long long)n_extra < num)
        more_fds[n_extra++] = -1;
      more_fds[n_extra++] = fds[3 + i];
    }
  size_t slot = 0;
  while (slot < KEEPER_MAX_EXECS && k->execs[slot].used)
    slot++;
  if (slot == KEEPER_MAX_EXECS)
    {
      csr_error_set (err, 0, "too many execs at once in this sandbox");
      return NULL;
    }
  char **argv = keeper_strv (csr_json_get (req, "argv"));
  char **extra = keeper_strv (csr_json_get (req, "env"));
  if (argv == NULL || argv[0] == NULL || extra == NULL)
    {
      keeper_strv_free (argv);
      keeper_strv_free (extra);
      csr_error_set (err, 0, "exec: no program");
      return NULL;
    }
  char **envp = exec_env (k, extra);
  const char *cwd = csr_json_str (csr_json_get (req, "cwd"));
  struct csr_sbx_exec_req r = {
    .argv = argv,
    .envp = envp,
    .cwd = cwd && *cwd ? cwd : k->spec->workdir,
    .uid = (uid_t)csr_json_int (req, "uid", 0),
    .gid = (gid_t)csr_json_int (req, "gid", 0),
    .fds = { fds[0], fds[1], fds[2] },
    .n_extra = n_extra,
    .tty = YAJL_IS_TRUE (csr_json_get (req, "tty")),
  };
  memcpy (r.extra, more_fds, n_extra * sizeof *more_fds);
  struct keeper_exec *e = &k->execs[slot];
  struct csr_sbx_target tg;
  keeper_target (k, &tg);
  int rc = envp ? csr_sbx_exec_spawn (&tg, &r, &e->x, err) : csr_error_set (err, ENOMEM, "exec");
  keeper_strv_free (argv);
  keeper_strv_free (extra);
  free (envp);
  if (rc < 0)
    return NULL;
  e->used = true;
  e->client = -1;
  e->on_end = NULL;
  e->arg = NULL;
  e->t0_ms = csr_mono_ms ();
  long long tmo = csr_json_int (req, "timeout_ms", 0);
  e->timeout_ms = tmo > 0 ? tmo : 0;
  e->deadline_ms = tmo > 0 ? e->t0_ms + (uint64_t)tmo : 0;
  k->n_execs++;
  return e;
}

void
keeper_op_exec (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  /* --detach: the output goes to files, the caller gets an id (keeper-detach.c). */
  if (YAJL_IS_TRUE (csr_json_get (req, "detach")))
    return keeper_detach_exec (k, fd, req, fds, n_fds);
  csr_error *err = NULL;
  struct keeper_exec *e = keeper_exec_start (k, req, fds, n_fds, &err);
  if (e == NULL)
    {
      keeper_reply_error (fd, csr_error_text (err));
      csr_error_free (err);
      return;
    }
  e->client = fd;
  *keep = true;
}

void
keeper_exec_gen_result (struct csr_jgen *w, const struct keeper_exec *e)
{
  const struct csr_sbx_exec *x = &e->x;
  int st = x->status;
  csr_jgen_kv_int (w, "exit_code", WIFEXITED (st) ? WEXITSTATUS (st) : -1);
  csr_jgen_kv_int (w, "signal", WIFSIGNALED (st) ? WTERMSIG (st) : 0);
  csr_jgen_str (w, "timed_out");
  csr_jgen_bool (w, x->timed_out);
  csr_jgen_str (w, "exec_failed");
  csr_jgen_bool (w, x->exec_failed);
  csr_jgen_str (w, "setup_failed");
  csr_jgen_bool (w, x->setup_failed);
  csr_jgen_kv_int (w, "duration_ms", (long long)(csr_mono_ms () - e->t0_ms));
  csr_jgen_kv_int (w, "pid", x->pid);
  if (x->cpu_ms >= 0)
    csr_jgen_kv_int (w, "cpu_ms", x->cpu_ms);
  if (x->maxrss_kib >= 0)
    csr_jgen_kv_int (w, "maxrss_kib", x->maxrss_kib);
  csr_jgen_kv_int (w, "timeout_ms", e->timeout_ms);
}

static void
end_exec (struct keeper *k, struct keeper_exec *e)
{
  if (e->on_end)
    e->on_end (k, e);
  else
    {
      struct csr_jgen w;
      if (csr_jgen_init (&w, false, NULL) == 0)
        {
          csr_jgen_map_open (&w);
          keeper_exec_gen_result (&w, e);
          csr_jgen_map_close (&w);
          keeper_reply_gen (e->client, &w);
        }
      close (e->client);
    }
  e->client = -1;
  e->used = false;
  k->n_execs--;
  k->last_activity_ms = csr_mono_ms ();
}

void
keeper_exec_ready (struct keeper *k, struct keeper_exec *e)
{
  if (csr_sbx_exec_poll (&e->x) == 1)
    end_exec (k, e);
}

void
keeper_execs_kill (struct keeper *k)
{
  for (size_t i = 0; i < KEEPER_MAX_EXECS; i++)
    if (k->execs[i].used && !k->execs[i].x.have_status)
      csr_sbx_exec_kill (&k->execs[i].x);
}

void
keeper_execs_release (struct keeper *k)
{
  for (size_t i = 0; i < KEEPER_MAX_EXECS; i++)
    if (k->execs[i].used)
      {
        if (k->execs[i].x.status_fd >= 0)
          close (k->execs[i].x.status_fd);
        if (k->execs[i].client >= 0)
          close (k->execs[i].client);
        if (k->execs[i].x.helper > 0)
          waitpid (k->execs[i].x.helper, NULL, 0);
        k->execs[i].used = false;
      }
}
