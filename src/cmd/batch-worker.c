/* csrun batch: one item in a forked worker process: its request (the batch's
 * run options and the item's manifest overrides), the snippet pipeline, and
 * its report line (the document of `csrun run --json` with the item's
 * label, path, digests, index and try) written to the parent's pipe. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "batch.h"
#include "cmd.h"
#include "common.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/json-gen.h"
#include "util/json.h"
#include "util/parse.h"
#include "util/stopsig.h"

/* The item's fields appended to the result document D (LEN bytes, "{...}\n"). */
static char *
add_fields (const char *d, size_t len, const struct batch_item *it, unsigned try,
            const char *code_sha256, size_t *out_len)
{
  struct csr_jgen w;
  csr_error *e = NULL;
  if (csr_jgen_init (&w, false, &e) < 0)
    {
      csr_error_free (e);
      return NULL;
    }
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "path", it->path);
  if (code_sha256)
    csr_jgen_kv_str (&w, "code_sha256", code_sha256);
  csr_jgen_kv_str (&w, "options_sha256", it->options_sha256);
  csr_jgen_kv_int (&w, "index", (long long)it->index);
  csr_jgen_kv_int (&w, "try", try);
  csr_jgen_map_close (&w);
  size_t elen = 0;
  cleanup_free char *extra = csr_jgen_finish (&w, "the batch fields", &elen, &e);
  csr_jgen_release (&w);
  csr_error_free (e);
  while (len > 0 && (d[len - 1] == '\n' || d[len - 1] == ' '))
    len--;
  if (extra == NULL || len < 2 || d[len - 1] != '}' || elen < 2)
    return NULL;
  while (elen > 0 && extra[elen - 1] == '\n')
    elen--;
  bool empty = len == 2;
  char *r = NULL;
  if (asprintf (&r, "%.*s%s%.*s\n", (int)(len - 1), d, empty ? "" : ",", (int)(elen - 1), extra + 1)
      < 0)
    return NULL;
  *out_len = strlen (r);
  return r;
}

char *
batch_error_line (const struct batch_item *it, unsigned try, int status, const char *why,
                  size_t *len)
{
  struct csr_run_result r;
  memset (&r, 0, sizeof r);
  r.status = (enum csr_status)status;
  r.interrupt_signal = status == CSR_STATUS_INTERRUPTED ? SIGKILL : 0;
  r.error = why;
  r.file = it->path;
  r.label = it->label;
  cleanup_free char *doc = NULL;
  size_t dlen = 0;
  csr_error *e = NULL;
  if (csr_result_to_json (&r, &doc, &dlen, &e) < 0)
    {
      csr_error_free (e);
      return NULL;
    }
  return add_fields (doc, dlen, it, try, NULL, len);
}

/* Write the whole LINE to FD and end the worker. */
__attribute__ ((noreturn)) static void
finish (int fd, const char *line, size_t len)
{
  csr_error *e = NULL;
  int rc = line && csr_write_all (fd, line, len, &e) == 0 ? 0 : 1;
  _exit (rc);
}

__attribute__ ((noreturn)) static void
fail (int fd, const struct batch_item *it, unsigned try, const char *why)
{
  size_t len = 0;
  cleanup_free char *line = batch_error_line (it, try, CSR_STATUS_ERROR, why, &len);
  finish (fd, line, len);
}

/* The item's overrides on top of REQ.  Checked when the manifest was read:
 * a failure here is unexpected (a changed file, memory). */
static int
apply_manifest (const struct batch_opts *o, const struct batch_item *it, struct run_opts *ro,
                yajl_val v, char *why, size_t why_len)
{
  struct csr_snippet_request *req = &ro->req;
  csr_error *e = NULL;
  yajl_val a = csr_json_get (v, "args");
  if (a)
    {
      char **args = calloc (a->u.array.len + 1, sizeof *args);
      if (args == NULL)
        return -1;
      for (size_t i = 0; i < a->u.array.len; i++)
        args[i] = a->u.array.values[i]->u.string;
      req->args = args;
      req->n_args = (int)a->u.array.len;
    }
  yajl_val env = csr_json_get (v, "env");
  if (env)
    {
      size_t n = req->n_env + env->u.array.len;
      if (n > CSR_MAX_ENV)
        return snprintf (why, why_len, "too many env entries (at most %d)", CSR_MAX_ENV), -1;
      const char **list = calloc (n + 1, sizeof *list);
      if (list == NULL)
        return -1;
      memcpy (list, req->env, req->n_env * sizeof *list);
      for (size_t i = 0; i < env->u.array.len; i++)
        list[req->n_env + i] = env->u.array.values[i]->u.string;
      req->env = list;
      req->n_env = n;
    }
  yajl_val in = csr_json_get (v, "in");
  if (in)
    {
      size_t n = req->n_inputs + in->u.array.len;
      struct csr_in_arg *list = calloc (n + 1, sizeof *list);
      if (list == NULL)
        return -1;
      memcpy (list, req->inputs, req->n_inputs * sizeof *list);
      for (size_t i = 0; i < in->u.array.len; i++)
        {
          const char *spec = in->u.array.values[i]->u.string;
          cleanup_free char *abs = NULL;
          /* relative to the manifest's directory, like "path" */
          const char *slash = strrchr (o->manifest, '/');
          if (spec[0] != '/' && slash
              && asprintf (&abs, "%.*s/%s", (int)(slash - o->manifest), o->manifest, spec) < 0)
            return -1;
          if (csr_in_arg_parse (abs ? abs : spec, &list[req->n_inputs + i], &e) < 0)
            {
              snprintf (why, why_len, "in: %s", csr_error_text (e));
              csr_error_free (e);
              return -1;
            }
        }
      req->inputs = list;
      req->n_inputs = n;
      if (csr_files_args_check (req->inputs, req->n_inputs, req->mounts, req->n_mounts, &e) < 0)
        {
          snprintf (why, why_len, "%s", csr_error_text (e));
          csr_error_free (e);
          return -1;
        }
    }
  const char *s = csr_json_str (csr_json_get (v, "timeout"));
  if (s && csr_parse_duration (s, 86400, &req->timeout_s, &e) < 0)
    {
      snprintf (why, why_len, "timeout: %s", csr_error_text (e));
      csr_error_free (e);
      return -1;
    }
  if (csr_json_get (v, "memory"))
    {
      req->limits.memory = it->memory;
      req->limits.explicit_mask |= CSR_LIMIT_MEMORY;
    }
  s = csr_json_str (csr_json_get (v, "out"));
  if (s)
    req->out_dir = s; /* instead of OUTDIR/<label> */
  s = csr_json_str (csr_json_get (v, "stdin"));
  if (s)
    ro->stdin_file = s;
  (void)it;
  return 0;
}

void
batch_worker (const struct batch_opts *o, const struct batch_item *it, unsigned try, int out_fd,
              int interrupt_fd)
{
  /* Die with the batch (SIGKILL of csrun must not leave workers). */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  /* SIGINT, SIGTERM, SIGHUP (from the parent's stop, or a terminal's
   * Ctrl-C to the whole process group): the signal's number on the
   * worker's own stop pipe (the batch's was closed at the fork), which the
   * capture loop polls (the jail stops, the item is "interrupted"). */
  int ip = csr_stopsig_open (NULL);
  if (ip >= 0)
    interrupt_fd = ip; /* else the parent's pipe: closed when it stops */
  csr_stopsig_catch (NULL);
  signal (SIGPIPE, SIG_IGN);
  /* The parent blocked them around fork: a signal sent since is handled now. */
  sigset_t set;
  csr_stopsig_set (&set);
  sigprocmask (SIG_UNBLOCK, &set, NULL);

  struct run_opts ro = o->run;
  ro.req.env = o->run.env;
  ro.req.allow = o->run.allow;
  ro.req.silent_patterns = o->run.silent_patterns;
  ro.req.llm = &ro.llm;
  ro.req.preloaded = o->preloaded;
  ro.req.launcher = o->pool ? csr_pool_launcher (o->pool) : NULL;
  char why[512] = "";
  cleanup_yajl_val yajl_val v = NULL;
  if (it->line)
    {
      char yerr[128];
      v = yajl_tree_parse (it->line, yerr, sizeof yerr);
      if (v == NULL || apply_manifest (o, it, &ro, v, why, sizeof why) < 0)
        fail (out_fd, it, try, why[0] ? why : "the manifest line can no longer be read");
    }
  /* --out DIR: this item's files in DIR/<label> (the manifest's "out": there). */
  cleanup_free char *out_dir = NULL;
  if (o->run.req.out_dir && (it->line == NULL || !csr_json_get (v, "out")))
    {
      cleanup_free char *name = batch_out_name (it->label);
      csr_error *e = NULL;
      if (name == NULL || asprintf (&out_dir, "%s/%s", o->run.req.out_dir, name) < 0)
        fail (out_fd, it, try, "out of memory");
      char *slash = strrchr (out_dir, '/');
      *slash = '\0';
      if (csr_mkdir_p (out_dir, 0755, &e) < 0)
        {
          snprintf (why, sizeof why, "cannot make the output directory: %s", csr_error_text (e));
          fail (out_fd, it, try, why);
        }
      *slash = '/';
      ro.req.out_dir = out_dir;
    }
  int in_fd = -1;
  if (ro.stdin_file)
    {
      in_fd = open (ro.stdin_file, O_RDONLY | O_CLOEXEC);
      if (in_fd < 0)
        {
          snprintf (why, sizeof why, "cannot read the stdin file '%s': %s", ro.stdin_file,
                    strerror (errno));
          fail (out_fd, it, try, why);
        }
    }
  ro.req.stdin_fd = in_fd;
  ro.req.interrupt_fd = interrupt_fd;
  ro.file = it->path;
  ro.label = it->label;

  /* The digest of the code as read (what --resume compares). */
  cleanup_free char *code = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  if (csr_read_file (it->path, ro.req.max_code, &code, &len, &e) < 0)
    {
      snprintf (why, sizeof why, "cannot read the snippet '%s': %s", it->path, csr_error_text (e));
      fail (out_fd, it, try, why);
    }
  char digest[CSR_SHA256_HEX_LEN + 1] = "";
  if (csr_sha256_buf (code, len, digest, &e) < 0)
    fail (out_fd, it, try, csr_error_text (e));
  ro.req.name = it->path;
  ro.req.code = code;
  ro.req.code_len = len;

  struct csr_snippet_result s;
  memset (&s, 0, sizeof s);
  int rc = csr_snippet_run (&ro.req, &s, &e);
  struct csr_run_result *r = &s.loop.result;
  r->file = it->path;
  r->args = ro.req.args;
  r->n_args = ro.req.n_args > 0 ? (size_t)ro.req.n_args : 0;
  r->label = it->label;
  if (rc < 0 && e && e->status == ECANCELED)
    _exit (BATCH_WORKER_CANCELLED); /* the batch stopped first: not run */
  if (rc < 0)
    {
      /* Bad input (the code is not UTF-8, an --in file is missing...) or
       * csrun failed: the item's result is an error. */
      r->status = CSR_STATUS_ERROR;
      r->error = csr_error_text (e);
    }
  cleanup_free char *doc = NULL;
  size_t dlen = 0;
  csr_error *je = NULL;
  if (csr_result_to_json (r, &doc, &dlen, &je) < 0)
    fail (out_fd, it, try, csr_error_text (je));
  size_t llen = 0;
  char *line = add_fields (doc, dlen, it, try, digest, &llen);
  if (line == NULL)
    fail (out_fd, it, try, "cannot add the batch fields to the result");
  finish (out_fd, line, llen);
}
