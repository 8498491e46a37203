/* csrun — the warm pool: a launcher over zygotes (pool.h, jail/zygote.h). */
#include "config.h"
#include "pool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../jail/zygote.h"
#include "../util/log.h"
#include "../util/clock.h"
#include "gatecode.h"

struct csr_pool
{
  struct csr_launcher launcher; /* data: this pool */
  struct csr_zygote z[CSR_POOL_MAX_ZYGOTES];
  unsigned n;
  unsigned slot;
  const char *test_break; /* CSRUN_TEST_WARM_BREAK: tests of the refusal only */
};

/* This process's go-ahead (csr_pool_set_run_gate), -1 once passed. */
static int run_gate = -1;

void
csr_pool_set_run_gate (int fd)
{
  run_gate = fd;
}

/* Wait for the go-ahead, before any code goes to the jail P is starting. */
static int
run_gate_pass (struct csr_launched *p, csr_error **err)
{
  if (run_gate < 0)
    return 0;
  uint64_t t0 = (uint64_t)csr_mono_ms ();
  char c;
  ssize_t n;
  while ((n = read (run_gate, &c, 1)) < 0 && errno == EINTR)
    ;
  close (run_gate);
  run_gate = -1;
  p->waited_ms = (uint64_t)csr_mono_ms () - t0;
  if (n != 1)
    return csr_error_set (err, ECANCELED, "the batch stopped before this item ran");
  return 0;
}

/* An attempt in a warm jail: csr_launched.priv is this marker (NULL: a
 * one-shot jail's). */
static char warm_marker;

static struct csr_warm
as_warm (const struct csr_launched *p)
{
  return (struct csr_warm){ .jail = p->jail, .payload = -1, .go = -1 };
}

/* A warm jail for R, checked, with R's code sent: 0, or -1 with *ERR (the
 * jail is gone). */
static int
start_warm (struct csr_pool *pool, const struct csr_launch_req *r, struct csr_launched *p,
            csr_error **err)
{
  const struct csr_zygote *z = &pool->z[pool->slot % pool->n];
  struct csr_warm w;
  if (csr_zygote_spawn (z, r->spec, r->args, r->n_args, pool->test_break, &w, err) < 0)
    return -1;
  if (csr_zygote_check (z, &w, r->spec, err) < 0 || run_gate_pass (p, err) < 0
      || csr_zygote_go (&w, r->policy_json, r->code, r->code_len, err) < 0)
    {
      csr_warm_release (&w);
      return -1;
    }
  p->jail = w.jail;
  p->exit_fd = w.jail.pidfd;
  p->priv = &warm_marker;
  p->warm = true;
  return 0;
}

static int
pool_start (const struct csr_launcher *l, const struct csr_launch_req *r, struct csr_launched *p,
            csr_error **err)
{
  struct csr_pool *pool = l->data;
  const char *unfit = r->policy_json == NULL || r->code == NULL ? "not a gated attempt"
                                                                : csr_zygote_unfit (r->spec);
  if (unfit == NULL)
    {
      csr_error *e = NULL;
      if (start_warm (pool, r, p, &e) == 0)
        return 0;
      if (e && e->status == ECANCELED)
        {
          /* Not a refusal: nothing is to run. */
          if (err && *err == NULL)
            *err = e;
          else
            csr_error_free (e);
          return -1;
        }
      /* Refused: nothing of the attempt ran; a one-shot jail runs it. */
      snprintf (p->warm_refused, sizeof p->warm_refused, "%s", csr_error_text (e));
      csr_warn ("a warm jail was refused (%s): the attempt runs in a one-shot jail",
                csr_error_text (e));
      csr_error_free (e);
    }
  p->priv = NULL;
  p->warm = false;
  if (run_gate_pass (p, err) < 0)
    return -1;
  return csr_launcher_jail.start (&csr_launcher_jail, r, p, err);
}

static bool
pool_ended (struct csr_launched *p)
{
  return p->priv ? false : csr_launcher_jail.ended (p);
}

static int
pool_wait (struct csr_launched *p, struct csr_jail_exit *ex, csr_error **err)
{
  if (p->priv == NULL)
    return csr_launcher_jail.wait (p, ex, err);
  struct csr_warm w = as_warm (p);
  return csr_warm_wait (&w, ex, err);
}

static void
pool_release (struct csr_launched *p)
{
  if (p->priv == NULL)
    {
      csr_launcher_jail.release (p);
      return;
    }
  struct csr_warm w = as_warm (p);
  csr_warm_release (&w);
  p->jail = w.jail;
}

int
csr_pool_start (const struct csr_snippet_result *pre, unsigned n, struct csr_pool **out,
                csr_error **err)
{
  *out = NULL;
  if (n == 0 || n > CSR_POOL_MAX_ZYGOTES)
    return csr_error_set (err, EINVAL, "a pool of %u zygotes", n);
  if (pre->gate_code_fd <= 0)
    return csr_error_set (err, 0, "no precompiled gate for the zygotes");
  struct csr_pool *pool = calloc (1, sizeof *pool);
  if (pool == NULL)
    return csr_error_set (err, ENOMEM, "allocate the pool");
  pool->launcher = csr_launcher_jail;
  pool->launcher.name = "warm";
  pool->launcher.start = pool_start;
  pool->launcher.ended = pool_ended;
  /* kill_payload and kill: the one-shot jail's (a warm jail's init is pid
   * 1 inside too, and its pidfd is in csr_launched.jail). */
  pool->launcher.wait = pool_wait;
  pool->launcher.release = pool_release;
  pool->launcher.data = pool;
  pool->test_break = getenv ("CSRUN_TEST_WARM_BREAK");
  if (pool->test_break && pool->test_break[0] == '\0')
    pool->test_break = NULL;
  for (unsigned i = 0; i < n; i++)
    {
      if (csr_zygote_start (&pre->base, csr_gate_boot_def_py, pre->gate_code_fd, &pool->z[i], err)
          < 0)
        goto fail;
      pool->n = i + 1;
      /* One warm jail from start to its check, no code: what this host
       * can't do shows here, not in the first item. */
      struct csr_file snippet = { "snippet.py", "", 0, 0444 };
      struct jail_snippet s = pre->base;
      s.files = &snippet;
      s.n_files = 1;
      struct csr_warm w;
      int rc = csr_zygote_spawn (&pool->z[i], &s, NULL, 0, NULL, &w, err);
      if (rc == 0)
        {
          rc = csr_zygote_check (&pool->z[i], &w, &s, err);
          csr_warm_release (&w);
        }
      if (rc < 0)
        goto fail;
    }
  *out = pool;
  return 0;
fail:
  csr_error_wrap (err, "warm jails");
  csr_pool_stop (pool);
  return -1;
}

const struct csr_launcher *
csr_pool_launcher (struct csr_pool *p)
{
  return &p->launcher;
}

void
csr_pool_use_slot (struct csr_pool *p, unsigned slot)
{
  p->slot = slot;
}

void
csr_pool_stop (struct csr_pool *p)
{
  if (p == NULL)
    return;
  for (unsigned i = 0; i < p->n; i++)
    csr_zygote_stop (&p->z[i]);
  free (p);
}
