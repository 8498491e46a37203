/* csrun — execute_python_code: a call is a worker process forked by the
 * server (as csrun batch's items are) that runs the snippet pipeline with
 * the server's preloaded request, and sends back, on its record pipe,
 * progress records (a healed attempt starts) and one result record: the
 * tool result (CodeShield's text, csrun run --json's document, isError),
 * cut to fit the largest message.  Cancelling a call writes to its own
 * interrupt pipe: the capture loop stops that jail, and only that one. */
#include "config.h"
#include "mcp-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/base64.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/filearg.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "../util/log.h"
#include "tool-impl.h"

/* ------------------------------------------------------------ the arguments */

/* Where the file PATH goes in the jail (malloc'ed), or NULL and *WHY. */
static char *
file_dest (const char *path, const char **why)
{
  *why = NULL;
  if (strchr (path, ':'))
    {
      *why = "':' is not allowed in a path";
      return NULL;
    }
  char *dest = NULL;
  if (path[0] == '/' ? (dest = strdup (path)) == NULL : asprintf (&dest, "/work/%s", path) < 0)
    {
      *why = "out of memory";
      return NULL;
    }
  bool under = (csr_path_under (dest, "/work") && strcmp (dest, "/work") != 0)
               || (csr_path_under (dest, "/tmp") && strcmp (dest, "/tmp") != 0);
  if (!csr_jail_path_ok (dest) || !under || strcmp (dest, "/work/snippet.py") == 0)
    {
      *why = "must be relative to /work, or absolute below /work or /tmp, without '.' or '..' "
             "components (and not /work/snippet.py)";
      free (dest);
      return NULL;
    }
  return dest;
}

/* The bytes of file I (its content, decoded); -1 with X's error. */
static int
file_bytes (yajl_val f, char **data, size_t *len, struct csr_jpath *x)
{
  const char *content = csr_json_str (csr_json_get (f, "content"));
  const char *enc = csr_json_str (csr_json_get (f, "encoding"));
  if (enc && strcmp (enc, "base64") == 0)
    {
      size_t bad = 0;
      if (csr_base64_decode (content, strlen (content), data, len, &bad) < 0)
        {
          size_t saved = csr_jpath_push_key (x, "content");
          int rc = errno == ENOMEM ? csr_jpath_oom (x)
                                   : csr_jpath_fail (x, "not base64 (at offset %zu)", bad);
          csr_jpath_pop (x, saved);
          return rc;
        }
      return 0;
    }
  *len = strlen (content);
  *data = strdup (content);
  return *data ? 0 : csr_jpath_oom (x);
}

int
csr_mcp_code_check (yajl_val args, const struct csr_mcp_limits *lim, struct csr_jpath *x)
{
  const char *code = csr_json_str (csr_json_get (args, "code"));
  size_t saved = csr_jpath_push_key (x, "code");
  csr_error *e = NULL;
  size_t len = strlen (code);
  if (lim->max_code && len > lim->max_code)
    return csr_jpath_fail (x, "%zu bytes: larger than the server's --max-code-size (%llu)", len,
                           (unsigned long long)lim->max_code);
  if (csr_snippet_check_code ("the code", code, len, &e) < 0)
    {
      int rc = csr_jpath_fail (x, "%s", e->msg);
      csr_error_free (e);
      return rc;
    }
  csr_jpath_pop (x, saved);
  return 0;
}

int
csr_mcp_python_check (yajl_val args, const struct csr_mcp_limits *lim, struct csr_jpath *x)
{
  if (csr_mcp_code_check (args, lim, x) < 0)
    return -1;
  size_t saved;
  yajl_val files = csr_json_get (args, "files");
  size_t n = files && YAJL_IS_ARRAY (files) ? files->u.array.len : 0;
  uint64_t total = 0;
  saved = csr_jpath_push_key (x, "files");
  for (size_t i = 0; i < n; i++)
    {
      yajl_val f = files->u.array.values[i];
      size_t s2 = csr_jpath_push_index (x, i);
      const char *why = NULL;
      cleanup_free char *dest = file_dest (csr_json_str (csr_json_get (f, "path")), &why);
      if (dest == NULL)
        {
          csr_jpath_push_key (x, "path");
          return csr_jpath_fail (x, "%s", why);
        }
      for (size_t k = 0; k < i; k++)
        {
          const char *w2;
          cleanup_free char *other
              = file_dest (csr_json_str (csr_json_get (files->u.array.values[k], "path")), &w2);
          if (other && strcmp (other, dest) == 0)
            {
              csr_jpath_push_key (x, "path");
              return csr_jpath_fail (x, "%s is also files[%zu]'s path", dest, k);
            }
        }
      cleanup_free char *data = NULL;
      size_t dlen = 0;
      if (file_bytes (f, &data, &dlen, x) < 0)
        return -1;
      total += dlen;
      if (lim->max_file_bytes && total > lim->max_file_bytes)
        return csr_jpath_fail (x,
                               "the files are larger than %zu bytes in all (the server's "
                               "--in-max)",
                               lim->max_file_bytes);
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, saved);
  return 0;
}

/* ------------------------------------------------------------ the text */

/* S without leading and trailing white space (as Python's str.strip()):
 * malloc'ed, its length in *LEN. */
static char *
strip (const char *s, size_t *len)
{
  const char *b = s ? s : "";
  while (*b == ' ' || *b == '\n' || *b == '\t' || *b == '\r' || *b == '\f' || *b == '\v')
    b++;
  size_t n = strlen (b);
  while (n > 0
         && (b[n - 1] == ' ' || b[n - 1] == '\n' || b[n - 1] == '\t' || b[n - 1] == '\r'
             || b[n - 1] == '\f' || b[n - 1] == '\v'))
    n--;
  *len = n;
  return strndup (b, n);
}

static yajl_val
last_attempt (yajl_val doc)
{
  yajl_val a = csr_json_get (doc, "attempts");
  if (a == NULL || !YAJL_IS_ARRAY (a) || a->u.array.len == 0)
    return NULL;
  return a->u.array.values[a->u.array.len - 1];
}

/* Append a line "KEY: VALUE" to *S. */
static void
add_line (char **s, const char *key, const char *value, size_t vlen)
{
  char *n = NULL;
  if (*s == NULL)
    return;
  if (asprintf (&n, "%s\n%s: %.*s", *s, key, (int)vlen, value) < 0)
    n = NULL;
  free (*s);
  *s = n;
}

char *
mcp_python_text (yajl_val doc, bool *is_error)
{
  const char *status = csr_json_str (csr_json_get (doc, "status"));
  yajl_val last = last_attempt (doc);
  char *text = NULL;
  size_t len = 0;
  *is_error = true;
  if (status && (strcmp (status, "ok") == 0 || strcmp (status, "healed") == 0))
    {
      *is_error = false;
      return strip (csr_json_str (csr_json_get (last, "stdout")), &len);
    }
  if (status && strcmp (status, "error") == 0)
    {
      const char *msg = csr_json_str (csr_json_get (doc, "error"));
      if (asprintf (&text, "error_type: CsrunError\nmessage: %s", msg ? msg : "csrun failed") < 0)
        return NULL;
      return text;
    }
  /* CodeShield's report (create_code_execution_tool). */
  text = strdup ("The Python script did not execute successfully.");
  yajl_val d = csr_json_get (doc, "diagnosis");
  if (d == NULL)
    d = csr_json_get (last, "diagnosis");
  const char *type = csr_json_str (csr_json_get (d, "error_type"));
  if (type)
    {
      add_line (&text, "error_type", type, strlen (type));
      yajl_val line = csr_json_get (d, "line");
      if (line && YAJL_IS_INTEGER (line))
        add_line (&text, "root_cause_line", YAJL_GET_NUMBER (line),
                  strlen (YAJL_GET_NUMBER (line)));
      const char *msg = csr_json_str (csr_json_get (d, "message"));
      if (msg && *msg)
        add_line (&text, "message", msg, strlen (msg));
    }
  cleanup_free char *err = strip (csr_json_str (csr_json_get (last, "stderr")), &len);
  if (err && len > 0)
    add_line (&text, "stderr", err, len);
  if (YAJL_IS_TRUE (csr_json_get (last, "timed_out")))
    add_line (&text, "timed_out", "true", 4);
  if (YAJL_IS_TRUE (csr_json_get (csr_json_get (last, "silent_failure"), "detected")))
    add_line (&text, "silent_failure_detected", "true", 4);
  return text;
}

/* ------------------------------------------------------------ the result, cut to fit */

/* The first N bytes of S end on a character boundary: fewer, to the start
 * of the character that would be split. */
static size_t
utf8_floor (const char *s, size_t n)
{
  while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
    n--;
  return n;
}

/* S cut to its first and last LIMIT/2 bytes with a marker in between
 * (malloc'ed), or NULL when it is short enough already. */
static char *
cut (const char *s, size_t limit)
{
  size_t len = strlen (s);
  if (len <= limit)
    return NULL;
  size_t head = utf8_floor (s, limit / 2);
  size_t tail_at = len - limit / 2;
  while (tail_at < len && ((unsigned char)s[tail_at] & 0xc0) == 0x80)
    tail_at++;
  char *r = NULL;
  if (asprintf (&r, "%.*s\n[... csrun mcp: %zu bytes cut to fit the response ...]\n%s", (int)head,
                s, tail_at - head, s + tail_at)
      < 0)
    return NULL;
  return r;
}

/* Every string in V longer than LIMIT, cut. */
static void
cut_strings (yajl_val v, size_t limit)
{
  if (v == NULL)
    return;
  if (YAJL_IS_STRING (v))
    {
      char *c = cut (v->u.string, limit);
      if (c)
        {
          free (v->u.string);
          v->u.string = c;
        }
    }
  else if (YAJL_IS_OBJECT (v))
    for (size_t i = 0; i < v->u.object.len; i++)
      cut_strings (v->u.object.values[i], limit);
  else if (YAJL_IS_ARRAY (v))
    for (size_t i = 0; i < v->u.array.len; i++)
      cut_strings (v->u.array.values[i], limit);
}

char *
mcp_tool_result (const char *text, yajl_val doc, bool structured, bool is_error, size_t *len)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_str (&w, "content");
  csr_jgen_array_open (&w);
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "type", "text");
  csr_jgen_kv_str (&w, "text", text);
  csr_jgen_map_close (&w);
  csr_jgen_array_close (&w);
  if (structured && doc)
    {
      csr_jgen_str (&w, "structuredContent");
      csr_jgen_tree (&w, doc);
    }
  csr_jgen_str (&w, "isError");
  csr_jgen_bool (&w, is_error);
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "the tool result", len, NULL);
}

char *
mcp_python_tool_result (yajl_val doc, bool structured, size_t max, size_t *len)
{
  bool is_error = true;
  char *text = mcp_python_text (doc, &is_error);
  if (text == NULL)
    return NULL;
  return mcp_run_result_fit (text, doc, structured, is_error, max, len);
}

char *
mcp_run_result_fit (char *text_in, yajl_val doc, bool structured, bool is_error, size_t max,
                    size_t *len)
{
  cleanup_free char *text = text_in;
  size_t limit = 0; /* 0: nothing cut yet */
  for (;;)
    {
      char *r = mcp_tool_result (text, doc, structured, is_error, len);
      if (r == NULL || *len <= max)
        return r;
      free (r);
      if (limit > 0 && limit <= 64)
        break;
      limit = limit == 0 ? max / 4 : limit / 2;
      cut_strings (doc, limit);
      char *t = cut (text, limit);
      if (t)
        {
          free (text);
          text = t;
        }
    }
  /* Thousands of small strings: only what the schema requires is kept. */
  char yerr[64];
  cleanup_yajl_val yajl_val stub
      = yajl_tree_parse ("{\"version\":1,\"status\":\"error\",\"attempts\":[]}", yerr, sizeof yerr);
  yajl_val st = csr_json_get (doc, "status"), st2 = csr_json_get (stub, "status");
  if (st && YAJL_IS_STRING (st) && st2)
    {
      free (st2->u.string);
      st2->u.string = strdup (st->u.string);
    }
  return mcp_tool_result (text, stub, structured, is_error, len);
}

/* ------------------------------------------------------------ the worker */

enum
{
  REC_PROGRESS = 'P',
  REC_RESULT = 'R',
};

/* One record: its type, its length (4 bytes, host order), its bytes. */
static int
write_record (int fd, char type, const char *data, size_t len)
{
  char head[5];
  uint32_t n = (uint32_t)len;
  head[0] = type;
  memcpy (head + 1, &n, 4);
  if (csr_write_all (fd, head, sizeof head, NULL) < 0)
    return -1;
  return csr_write_all (fd, data, len, NULL);
}

static void
on_next_attempt (void *data, const struct csr_attempt *failed, int next)
{
  int fd = *(int *)data;
  const struct csr_diagnosis *d = failed->diagnosis;
  const struct csr_patch *p = failed->patch;
  char msg[200];
  snprintf (msg, sizeof msg, "attempt %d failed (%s); %s%s: attempt %d", failed->number,
            d && d->error_type ? d->error_type : "failed", p ? "healed by " : "running it again",
            p ? (p->rules    ? p->rules
                 : p->source ? p->source
                             : "a patch")
              : "",
            next);
  write_record (fd, REC_PROGRESS, msg, strlen (msg));
}

/* The call's files, written below DIR (0700, made here) as 0, 1, ...: the
 * host never sees the model's names.  Appended to *IN (*N entries). */
static int
write_files (yajl_val files, const char *dir, struct csr_in_arg **in, size_t *n, csr_error **err)
{
  size_t count = files && YAJL_IS_ARRAY (files) ? files->u.array.len : 0;
  struct csr_in_arg *v = calloc (*n + count + 1, sizeof *v);
  if (v == NULL)
    return csr_error_set (err, ENOMEM, "files");
  memcpy (v, *in, *n * sizeof *v);
  for (size_t i = 0; i < count; i++)
    {
      yajl_val f = files->u.array.values[i];
      struct csr_jpath x = { .err = err, .what = "files" };
      char *data = NULL;
      size_t len = 0;
      const char *why;
      struct csr_in_arg *a = &v[*n + i];
      a->dest = file_dest (csr_json_str (csr_json_get (f, "path")), &why);
      if (a->dest == NULL || asprintf (&a->src, "%s/%zu", dir, i) < 0
          || file_bytes (f, &data, &len, &x) < 0)
        return csr_error_set (err, ENOMEM, "files[%zu]", i);
      cleanup_close int fd = open (a->src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      int rc = fd < 0 ? csr_error_errno (err, "create %s", a->src)
                      : csr_write_all (fd, data, len, err);
      free (data);
      if (rc < 0 || close (steal_fd (&fd)) < 0)
        return rc < 0 ? rc : csr_error_errno (err, "write %s", a->src);
    }
  *in = v;
  *n += count;
  return 0;
}

/* The run of ARGS with the server's request; 0, or -1 with *ERR (nothing
 * ran to a verdict; RES holds what was known). */
static int
run (const struct csr_mcp_config *cfg, yajl_val args, int out, int intr, char *tmp,
     struct csr_snippet_result *res, csr_error **err)
{
  struct csr_snippet_request req = *cfg->base;
  static int record_fd;
  record_fd = out;
  req.preloaded = cfg->preloaded;
  req.name = "the code";
  req.code = csr_json_str (csr_json_get (args, "code"));
  req.code_len = strlen (req.code);
  req.args = NULL;
  req.n_args = 0;
  yajl_val t = csr_json_get (args, "timeout");
  if (t && YAJL_IS_NUMBER (t))
    req.timeout_s = csr_mcp_number (t);
  req.stdin_fd = -1;
  req.live_out = req.live_err = -1;
  req.interrupt_fd = intr;
  req.on_next_attempt = on_next_attempt;
  req.on_next_attempt_data = &record_fd;
  yajl_val files = csr_json_get (args, "files");
  if (files && YAJL_IS_ARRAY (files) && files->u.array.len > 0)
    {
      if (mkdtemp (tmp) == NULL)
        {
          csr_error_errno (err, "cannot make a directory for the files (%s)", tmp);
          tmp[0] = '\0';
          return -1;
        }
      struct csr_in_arg *in = (struct csr_in_arg *)req.inputs;
      size_t n = req.n_inputs;
      if (write_files (files, tmp, &in, &n, err) < 0)
        return -1;
      req.inputs = in;
      req.n_inputs = n;
      if (csr_files_args_check (req.inputs, req.n_inputs, req.mounts, req.n_mounts, err) < 0)
        return csr_error_wrap (err, "files");
    }
  else
    tmp[0] = '\0';
  return csr_snippet_run (&req, res, err);
}

/* In the forked worker: run the call and send its result; never returns. */
__attribute__ ((noreturn)) static void
worker (const struct csr_mcp_config *cfg, yajl_val args, bool structured, int out, int intr)
{
  const char *tmpdir = getenv ("TMPDIR");
  char tmp[4096];
  snprintf (tmp, sizeof tmp, "%s/csrun-mcp-files.XXXXXX",
            tmpdir && tmpdir[0] == '/' ? tmpdir : "/tmp");
  struct csr_snippet_result res;
  memset (&res, 0, sizeof res);
  csr_error *e = NULL;
  int rc = run (cfg, args, out, intr, tmp, &res, &e);
  struct csr_run_result *r = &res.loop.result;
  if (rc < 0)
    {
      r->status = CSR_STATUS_ERROR;
      r->error = csr_error_text (e);
    }
  if (tmp[0])
    csr_rm_rf (tmp, NULL);
  cleanup_free char *doc = NULL;
  size_t dlen = 0;
  if (csr_result_to_json (r, &doc, &dlen, &e) < 0)
    _exit (1);
  char yerr[128];
  yajl_val tree = yajl_tree_parse (doc, yerr, sizeof yerr);
  size_t len = 0;
  cleanup_free char *result
      = tree ? mcp_python_tool_result (tree, structured, cfg->max_frame - 1024, &len) : NULL;
  if (result == NULL)
    _exit (1);
  _exit (write_record (out, REC_RESULT, result, len) < 0 ? 1 : 0);
}

/* ------------------------------------------------------------ the server's side */

int
mcp_python_start (struct csr_mcp_session *s, struct mcp_job *j, csr_error **err)
{
  int rp[2], ip[2];
  if (pipe2 (rp, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe");
  if (pipe2 (ip, O_CLOEXEC | O_NONBLOCK) < 0)
    {
      close (rp[0]);
      close (rp[1]);
      return csr_error_errno (err, "pipe");
    }
  sigset_t all, old;
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old);
  pid_t pid = fork ();
  if (pid == 0)
    {
      /* The server's handlers write to the server's pipe: not ours. */
      signal (SIGTERM, SIG_DFL);
      signal (SIGINT, SIG_IGN);
      signal (SIGHUP, SIG_IGN);
      signal (SIGPIPE, SIG_IGN);
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (getppid () == 1)
        _exit (1);
      mcp_child_close (s, j);
      close (rp[0]);
      close (ip[1]);
      sigprocmask (SIG_SETMASK, &old, NULL);
      worker (s->cfg, j->args, mcp_structured (s), rp[1], ip[0]);
    }
  int saved = errno;
  sigprocmask (SIG_SETMASK, &old, NULL);
  close (rp[1]);
  close (ip[0]);
  if (pid < 0)
    {
      close (rp[0]);
      close (ip[1]);
      errno = saved;
      return csr_error_errno (err, "fork");
    }
  j->pid = pid;
  j->fd_main = rp[0];
  j->fd_intr = ip[1];
  j->main.max = s->cfg->max_frame + 65536;
  return 0;
}

/* The complete records at the front of J's buffer: progress is told, the
 * result stays for mcp_python_finish. */
void
mcp_python_records (struct csr_mcp_session *s, struct mcp_job *j)
{
  for (;;)
    {
      struct mcp_buf *b = &j->main;
      if (b->len < 5 || b->data[0] != REC_PROGRESS)
        return;
      uint32_t n;
      memcpy (&n, b->data + 1, 4);
      if (b->len < 5 + (size_t)n)
        return;
      char msg[200];
      snprintf (msg, sizeof msg, "%.*s", (int)n, b->data + 5);
      snprintf (j->phase, sizeof j->phase, "%s", msg);
      mcp_progress (s, j, msg);
      memmove (b->data, b->data + 5 + n, b->len - 5 - n);
      b->len -= 5 + n;
    }
}

void
mcp_python_finish (struct csr_mcp_session *s, struct mcp_job *j)
{
  mcp_python_records (s, j);
  struct mcp_buf *b = &j->main;
  uint32_t n = 0;
  if (b->len >= 5)
    memcpy (&n, b->data + 1, 4);
  if (b->len >= 5 && b->data[0] == REC_RESULT && b->len == 5 + (size_t)n && !b->overflow)
    {
      b->data[b->len] = '\0';
      mcp_send_result (s, j, b->data + 5);
      return;
    }
  char why[200];
  if (WIFSIGNALED (j->status))
    snprintf (why, sizeof why,
              "error_type: CsrunError\nmessage: the worker of this call was "
              "killed by signal %d",
              WTERMSIG (j->status));
  else
    snprintf (why, sizeof why,
              "error_type: CsrunError\nmessage: the worker of this call ended "
              "without a result (exit status %d)",
              WEXITSTATUS (j->status));
  csr_log (CSR_LOG_WARNING, "mcp: call %s: %s", j->id, why + 23);
  mcp_send_text_result (s, j->id, why, true);
}

void
mcp_python_cancel (struct mcp_job *j)
{
  /* The capture loop reads a signal number: the jail is stopped. */
  unsigned char sig = SIGTERM;
  if (j->fd_intr >= 0 && write (j->fd_intr, &sig, 1) < 0)
    {
      /* full: already asked */
    }
}
