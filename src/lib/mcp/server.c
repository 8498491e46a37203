/* csrun — the MCP server's session (server.h): the poll loop over the
 * client's input, the output queue, the signal pipe and the calls' workers;
 * the lifecycle, tools/list and tools/call; cancellation and progress. */
#include "config.h"
#include "mcp-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "../util/log.h"
#include "../util/stopsig.h"
#include "../util/syscalls.h"

const char *const csr_mcp_protocol_versions[]
    = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL };

/* Ids longer than this are refused: a response must fit in its frame. */
#define MAX_ID_LEN 256
/* Stop reading requests while this much output waits for the client. */
#define MAX_PENDING_OUTPUT (64u << 20)
/* A cancelled call's worker has this long to stop its jail and end. */
#define CANCEL_GRACE_MS 5000
/* After the input ended: how long running calls have to end. */
#define STOP_GRACE_MS 8000

static const char instructions[]
    = "csrun runs Python in disposable, rootless Linux jails. execute_python_code runs a whole "
      "program and returns its standard output; a failing program is diagnosed and repaired "
      "when that is safe (at most 3 attempts), and a failure comes back as a report. The jail "
      "has no network and none of the host's files; pass input files with 'files'. For state "
      "across calls, create a sandbox (sandbox_create), run Python in it (sandbox_run, with a "
      "session to keep variables between calls) and commands (sandbox_exec), move files in and "
      "out (sandbox_write_file, sandbox_read_file, sandbox_list_files), and save it "
      "(sandbox_checkpoint) to make a new sandbox from it later (sandbox_restore).";

/* ------------------------------------------------------------ small things */

void
mcp_buf_add (struct mcp_buf *b, const char *data, size_t len)
{
  if (b->len + len > b->max)
    {
      b->overflow = true;
      len = b->max > b->len ? b->max - b->len : 0;
    }
  if (csr_buf_reserve (&b->data, &b->cap, b->len + len + 1, 4096) < 0)
    {
      b->overflow = true;
      return;
    }
  memcpy (b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
}

void
mcp_buf_release (struct mcp_buf *b)
{
  free (b->data);
  memset (b, 0, sizeof *b);
}

bool
mcp_structured (const struct csr_mcp_session *s)
{
  return strcmp (s->protocol, "2025-06-18") >= 0;
}

void
mcp_send (struct csr_mcp_session *s, char *line, size_t len)
{
  if (line == NULL)
    {
      csr_log (CSR_LOG_ERROR, "mcp: out of memory for a message: it is lost");
      return;
    }
  if (s->out_broken)
    {
      free (line);
      return;
    }
  if (csr_rpc_outq_push (&s->out, line, len) < 0)
    csr_log (CSR_LOG_ERROR, "mcp: out of memory for a message: it is lost");
}

static void send_error (struct csr_mcp_session *s, const char *id, int code, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

static void
send_error (struct csr_mcp_session *s, const char *id, int code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *msg = NULL;
  int r = vasprintf (&msg, fmt, ap);
  va_end (ap);
  if (r < 0)
    return;
  size_t len = 0;
  csr_log (CSR_LOG_WARNING, "mcp: %s%s%s%s", id ? "request " : "", id ? id : "", id ? ": " : "",
           msg);
  char *line = csr_rpc_error_line (id, code, msg, &len);
  mcp_send (s, line, len);
  free (msg);
}

static void
send_result_text (struct csr_mcp_session *s, const char *id, const char *result)
{
  size_t len = 0;
  char *line = csr_rpc_result_line (id, result, &len);
  mcp_send (s, line, len);
}

void
mcp_send_result (struct csr_mcp_session *s, const struct mcp_job *j, const char *result)
{
  send_result_text (s, j->id, result);
}

void
mcp_send_text_result (struct csr_mcp_session *s, const char *id, const char *text, bool is_error)
{
  size_t len = 0;
  cleanup_free char *r = mcp_tool_result (text, NULL, false, is_error, &len);
  if (r)
    send_result_text (s, id, r);
}

void
mcp_progress (struct csr_mcp_session *s, struct mcp_job *j, const char *message)
{
  yajl_val token
      = csr_json_get (csr_json_get (csr_json_get (j->tree, "params"), "_meta"), "progressToken");
  if (token == NULL || j->cancelled || j->done)
    return;
  double t = (double)(csr_mono_ms () - j->t0_ms) / 1000.0;
  /* Progress only ever grows. */
  if (t <= j->last_progress)
    t = j->last_progress + 0.001;
  j->last_progress = t;
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return;
  csr_jgen_map_open (&w);
  csr_jgen_str (&w, "progressToken");
  csr_jgen_tree (&w, token);
  csr_jgen_str (&w, "progress");
  csr_jgen_double (&w, t);
  if (strcmp (s->protocol, "2025-03-26") >= 0)
    csr_jgen_kv_str (&w, "message", message);
  csr_jgen_map_close (&w);
  cleanup_free char *params = csr_jgen_finish (&w, "a progress notification", NULL, NULL);
  size_t len = 0;
  char *line = params ? csr_rpc_notification_line ("notifications/progress", params, &len) : NULL;
  if (line)
    mcp_send (s, line, len);
}

/* Close what J holds open. */
static void
job_close (struct mcp_job *j)
{
  int *fds[] = { &j->fd_main, &j->fd_err, &j->fd_intr, &j->fd_pid };
  for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
}

void
mcp_child_close (struct csr_mcp_session *s, const struct mcp_job *self)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0 && s->in_fd == 0)
    dup2 (null, 0);
  else if (s->in_fd > 2)
    close (s->in_fd);
  if (null > 2)
    close (null);
  if (s->out_fd > 2)
    close (s->out_fd);
  csr_stopsig_close ();
  for (struct mcp_job *j = s->jobs; j; j = j->next)
    if (j != self)
      job_close (j);
}

void
csr_mcp_session_sandbox (struct csr_mcp_session *s, const char *id, bool created)
{
  for (size_t i = 0; i < s->n_sandboxes; i++)
    if (strcmp (s->sandboxes[i], id) == 0)
      {
        if (!created)
          {
            free (s->sandboxes[i]);
            s->sandboxes[i] = s->sandboxes[--s->n_sandboxes];
          }
        return;
      }
  if (!created)
    return;
  char **nv = realloc (s->sandboxes, (s->n_sandboxes + 1) * sizeof *nv);
  if (nv == NULL || (nv[s->n_sandboxes] = strdup (id)) == NULL)
    {
      if (nv)
        s->sandboxes = nv;
      csr_log (CSR_LOG_WARNING, "mcp: out of memory: sandbox %s will not be removed at the end",
               id);
      return;
    }
  s->sandboxes = nv;
  s->n_sandboxes++;
}

/* ------------------------------------------------------------ jobs */

static void
job_free (struct mcp_job *j)
{
  job_close (j);
  mcp_buf_release (&j->main);
  mcp_buf_release (&j->err);
  if (j->tree)
    yajl_tree_free (j->tree);
  free (j->id);
  free (j);
}

static void
job_remove (struct csr_mcp_session *s, struct mcp_job *j)
{
  for (struct mcp_job **p = &s->jobs; *p; p = &(*p)->next)
    if (*p == j)
      {
        *p = j->next;
        break;
      }
  if (j->started)
    s->n_running--;
  if (j->tool->creates_sandbox)
    s->creating--;
  s->n_jobs--;
  job_free (j);
}

static struct mcp_job *
job_find (struct csr_mcp_session *s, const char *id)
{
  for (struct mcp_job *j = s->jobs; j; j = j->next)
    if (strcmp (j->id, id) == 0 && !j->cancelled)
      return j;
  return NULL;
}

static void
job_cancel (struct csr_mcp_session *s, struct mcp_job *j, const char *why)
{
  if (j->cancelled)
    return;
  csr_log (CSR_LOG_INFO, "mcp: call %s (%s) cancelled: %s", j->id, j->tool->name, why);
  j->cancelled = true;
  if (!j->started)
    {
      job_remove (s, j);
      return;
    }
  if (j->tool->command)
    mcp_command_cancel (j);
  else
    mcp_python_cancel (j);
  j->kill_at_ms = csr_mono_ms () + CANCEL_GRACE_MS;
}

static void
job_start (struct csr_mcp_session *s, struct mcp_job *j)
{
  csr_error *e = NULL;
  j->started = true;
  s->n_running++;
  j->t0_ms = csr_mono_ms ();
  j->next_tick_ms = j->t0_ms + (int64_t)(s->cfg->progress_interval_s * 1000);
  snprintf (j->phase, sizeof j->phase, "%s", j->tool->command ? "running" : "attempt 1");
  int rc = j->tool->command ? mcp_command_start (s, j, &e) : mcp_python_start (s, j, &e);
  if (rc == 0 && (j->fd_pid = csr_pidfd_open (j->pid)) >= 0)
    fcntl (j->fd_pid, F_SETFD, FD_CLOEXEC);
  if (rc == 0)
    {
      fcntl (j->fd_main, F_SETFL, O_NONBLOCK);
      if (j->fd_err >= 0)
        fcntl (j->fd_err, F_SETFL, O_NONBLOCK);
      csr_debug ("mcp: call %s (%s) started: pid %d", j->id, j->tool->name, (int)j->pid);
      return;
    }
  char *text = NULL;
  if (asprintf (&text, "error_type: CsrunError\nmessage: cannot start the call: %s",
                csr_error_text (e))
      >= 0)
    {
      csr_log (CSR_LOG_WARNING, "mcp: call %s: %s", j->id, text + 23);
      mcp_send_text_result (s, j->id, text, true);
      free (text);
    }
  csr_error_free (e);
  job_remove (s, j);
}

static void
start_waiting (struct csr_mcp_session *s)
{
  for (struct mcp_job *j = s->jobs, *next; j && s->n_running < s->cfg->jobs && !s->eof; j = next)
    {
      next = j->next;
      if (!j->started)
        job_start (s, j);
    }
}

/* Read what FD has (non-blocking) into B; closes *FD at its end. */
static void
job_read (int *fd, struct mcp_buf *b, bool keep_tail)
{
  char buf[65536];
  for (;;)
    {
      ssize_t r = read (*fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && errno == EAGAIN)
        return;
      if (r <= 0)
        {
          close (*fd);
          *fd = -1;
          return;
        }
      if (keep_tail && b->len + (size_t)r > b->max && b->len > b->max / 2)
        {
          /* Only the end of stderr matters: drop its older half. */
          size_t drop = b->len - b->max / 2;
          memmove (b->data, b->data + drop, b->len - drop);
          b->len -= drop;
        }
      mcp_buf_add (b, buf, (size_t)r);
    }
}

/* J's worker is gone (EXITED: its pidfd says it has ended), or closed its
 * pipes: reap it, answer the call (unless it was cancelled). */
static void
job_end (struct csr_mcp_session *s, struct mcp_job *j, bool exited)
{
  if (j->fd_main >= 0)
    job_read (&j->fd_main, &j->main, false);
  if (j->fd_err >= 0)
    job_read (&j->fd_err, &j->err, true);
  /* What a command left in its group (the leader, a zombie until it is
   * reaped, keeps the group's id from being reused). */
  if (exited && j->tool->command && j->pid > 0)
    kill (-j->pid, SIGKILL);
  while (waitpid (j->pid, &j->status, 0) < 0 && errno == EINTR)
    ;
  int64_t ms = csr_mono_ms () - j->t0_ms;
  csr_debug ("mcp: call %s (%s) ended after %llu ms%s", j->id, j->tool->name,
             (unsigned long long)ms, j->cancelled ? " (cancelled: no response)" : "");
  if (!j->cancelled)
    {
      if (j->tool->command)
        mcp_command_finish (s, j);
      else
        mcp_python_finish (s, j);
    }
  else if (j->tool->command && j->tool->creates_sandbox)
    mcp_command_adopt (s, j);
  j->done = true;
  job_remove (s, j);
}

/* Progress ticks and cancellation deadlines; the poll timeout until the next. */
static int
job_timers (struct csr_mcp_session *s)
{
  int64_t now = csr_mono_ms ();
  int64_t next = -1;
  for (struct mcp_job *j = s->jobs; j; j = j->next)
    {
      if (!j->started)
        continue;
      if (j->kill_at_ms && now >= j->kill_at_ms)
        {
          csr_log (CSR_LOG_WARNING, "mcp: call %s did not stop in time: killed", j->id);
          kill (j->tool->command ? -j->pid : j->pid, SIGKILL);
          j->kill_at_ms = 0;
        }
      if (j->kill_at_ms)
        next = next < 0 || j->kill_at_ms - now < next ? j->kill_at_ms - now : next;
      if (s->cfg->progress_interval_s <= 0 || j->cancelled)
        continue;
      if (now >= j->next_tick_ms)
        {
          char msg[260];
          snprintf (msg, sizeof msg, "%s, %.0f s", j->phase, (double)(now - j->t0_ms) / 1000.0);
          mcp_progress (s, j, msg);
          j->next_tick_ms = now + (int64_t)(s->cfg->progress_interval_s * 1000);
        }
      int64_t d = j->next_tick_ms - now;
      next = next < 0 || d < next ? d : next;
    }
  if (s->eof && s->stop_deadline_ms)
    {
      int64_t d = now >= s->stop_deadline_ms ? 0 : s->stop_deadline_ms - now;
      next = next < 0 || d < next ? d : next;
    }
  return next < 0 ? -1 : next > 60000 ? 60000 : (int)next;
}

/* ------------------------------------------------------------ methods */

static void
do_initialize (struct csr_mcp_session *s, struct csr_rpc_msg *m)
{
  if (s->initialized)
    {
      send_error (s, m->id, CSR_RPC_INVALID_REQUEST,
                  "Invalid Request: the session is initialized already");
      return;
    }
  csr_error *e = NULL;
  struct csr_jpath x = { .err = &e, .what = "params" };
  csr_jpath_push_key (&x, "params");
  cleanup_free char *asked = NULL;
  if (m->params == NULL)
    csr_jpath_fail (&x, "required field is missing");
  else
    csr_jpath_get_string (&x, m->params, "protocolVersion", true, &asked);
  if (e)
    {
      send_error (s, m->id, CSR_RPC_INVALID_PARAMS, "Invalid params: %s", csr_error_text (e));
      csr_error_free (e);
      return;
    }
  const char *v = csr_mcp_protocol_versions[0];
  for (const char *const *p = csr_mcp_protocol_versions; *p; p++)
    if (strcmp (*p, asked) == 0)
      v = *p;
  snprintf (s->protocol, sizeof s->protocol, "%s", v);
  s->initialized = true;
  yajl_val ci = csr_json_get (m->params, "clientInfo");
  csr_log (CSR_LOG_INFO, "mcp: client %s %s asked for protocol %s: %s",
           csr_json_str (csr_json_get (ci, "name")) ?: "?",
           csr_json_str (csr_json_get (ci, "version")) ?: "?", asked, v);
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "protocolVersion", v);
  csr_jgen_str (&w, "capabilities");
  csr_jgen_map_open (&w);
  csr_jgen_str (&w, "tools");
  csr_jgen_map_open (&w);
  csr_jgen_str (&w, "listChanged");
  csr_jgen_bool (&w, false);
  csr_jgen_map_close (&w);
  csr_jgen_map_close (&w);
  csr_jgen_str (&w, "serverInfo");
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "name", "csrun");
  if (strcmp (v, "2025-06-18") >= 0)
    csr_jgen_kv_str (&w, "title", "csrun: Python in disposable jails");
  csr_jgen_kv_str (&w, "version", s->cfg->version);
  csr_jgen_map_close (&w);
  csr_jgen_kv_str (&w, "instructions", instructions);
  csr_jgen_map_close (&w);
  cleanup_free char *r = csr_jgen_finish (&w, "the initialize result", NULL, NULL);
  if (r)
    send_result_text (s, m->id, r);
}

static void
do_tools_list (struct csr_mcp_session *s, struct csr_rpc_msg *m)
{
  yajl_val cursor = csr_json_get (m->params, "cursor");
  if (cursor && !YAJL_IS_STRING (cursor) && !YAJL_IS_NULL (cursor))
    {
      send_error (s, m->id, CSR_RPC_INVALID_PARAMS,
                  "Invalid params: params.cursor: expected a string, got %s",
                  csr_json_type_name (cursor));
      return;
    }
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return;
  csr_mcp_gen_tools (&w, CSR_MCP_FORMAT_MCP, &s->cfg->limits, s->protocol);
  cleanup_free char *r = csr_jgen_finish (&w, "the tool list", NULL, NULL);
  if (r)
    send_result_text (s, m->id, r);
}

/* The tools' names, for an error. */
static void
tool_names (char *buf, size_t size)
{
  buf[0] = '\0';
  for (const struct csr_mcp_tool *t = csr_mcp_tools; t->name; t++)
    snprintf (buf + strlen (buf), size - strlen (buf), "%s%s", buf[0] ? ", " : "", t->name);
}

/* Whether a tools/call may start now: else it is answered here. */
static bool
call_allowed (struct csr_mcp_session *s, struct csr_rpc_msg *m, const struct csr_mcp_tool *t)
{
  char text[300];
  if (s->n_jobs >= s->cfg->max_queue)
    snprintf (text, sizeof text,
              "error_type: CsrunError\nmessage: too many calls in progress (%u, csrun mcp "
              "--max-queue): wait for one to end",
              s->n_jobs);
  else if (t->creates_sandbox && s->n_sandboxes + s->creating >= s->cfg->max_sandboxes)
    snprintf (text, sizeof text,
              "error_type: CsrunError\nmessage: this session has %zu sandboxes (at most %u, "
              "csrun mcp --max-sandboxes): remove one with sandbox_terminate first",
              s->n_sandboxes + s->creating, s->cfg->max_sandboxes);
  else
    return true;
  csr_log (CSR_LOG_WARNING, "mcp: call %s (%s) refused: %s", m->id, t->name, text + 32);
  mcp_send_text_result (s, m->id, text, true);
  return false;
}

static void
do_tools_call (struct csr_mcp_session *s, struct csr_rpc_msg *m)
{
  char names[256];
  if (m->params == NULL)
    {
      send_error (s, m->id, CSR_RPC_INVALID_PARAMS,
                  "Invalid params: params: required field is missing (name, arguments)");
      return;
    }
  yajl_val name = csr_json_get (m->params, "name");
  if (name == NULL || !YAJL_IS_STRING (name))
    {
      send_error (s, m->id, CSR_RPC_INVALID_PARAMS, "Invalid params: params.name: %s%s",
                  name ? "expected a string, got " : "required field is missing",
                  name ? csr_json_type_name (name) : "");
      return;
    }
  const struct csr_mcp_tool *t = csr_mcp_tool_find (name->u.string);
  if (t == NULL)
    {
      tool_names (names, sizeof names);
      {
        send_error (s, m->id, CSR_RPC_INVALID_PARAMS,
                    "Invalid params: params.name: unknown tool '%.100s' (the tools are %s)",
                    name->u.string, names);
        return;
      }
    }
  yajl_val meta = csr_json_get (m->params, "_meta");
  yajl_val token = csr_json_get (meta, "progressToken");
  if ((meta && !YAJL_IS_OBJECT (meta))
      || (token && !YAJL_IS_STRING (token)
          && !(YAJL_IS_NUMBER (token) && !strpbrk (token->u.number.r, ".eE"))))
    {
      send_error (s, m->id, CSR_RPC_INVALID_PARAMS, "Invalid params: params._meta%s: expected %s",
                  meta && token ? ".progressToken" : "",
                  meta && token ? "a string or an integer" : "an object");
      return;
    }
  yajl_val args = csr_json_get (m->params, "arguments");
  csr_error *e = NULL;
  if (csr_mcp_args_check (t, args, &s->cfg->limits, &e) < 0)
    {
      /* SEP-1303 (2025-11-25): the model sees what was wrong and can try
       * again; before it, a protocol error. */
      if (strcmp (s->protocol, "2025-11-25") >= 0)
        {
          char *text = NULL;
          if (asprintf (&text, "Invalid arguments for %s: %s", t->name, csr_error_text (e)) >= 0)
            {
              csr_log (CSR_LOG_WARNING, "mcp: call %s: %s", m->id, text);
              mcp_send_text_result (s, m->id, text, true);
              free (text);
            }
        }
      else
        send_error (s, m->id, CSR_RPC_INVALID_PARAMS, "Invalid params: %s", csr_error_text (e));
      csr_error_free (e);
      return;
    }
  if (!call_allowed (s, m, t))
    return;
  struct mcp_job *j = calloc (1, sizeof *j);
  if (j == NULL)
    {
      send_error (s, m->id, CSR_RPC_INTERNAL_ERROR, "Internal error: out of memory");
      return;
    }
  j->fd_main = j->fd_err = j->fd_intr = j->fd_pid = -1;
  j->tool = t;
  j->id = steal_pointer (&m->id);
  j->tree = steal_pointer (&m->tree);
  j->args = csr_json_get (csr_json_get (j->tree, "params"), "arguments");
  struct mcp_job **p = &s->jobs;
  while (*p)
    p = &(*p)->next;
  *p = j;
  s->n_jobs++;
  if (t->creates_sandbox)
    s->creating++;
  csr_debug ("mcp: call %s: %s", j->id, t->name);
  start_waiting (s);
}

static void
do_cancelled (struct csr_mcp_session *s, struct csr_rpc_msg *m)
{
  yajl_val rid = csr_json_get (m->params, "requestId");
  struct csr_jgen w;
  if (rid == NULL || (!YAJL_IS_STRING (rid) && !YAJL_IS_NUMBER (rid))
      || csr_jgen_init (&w, false, NULL) < 0)
    {
      csr_log (CSR_LOG_WARNING, "mcp: notifications/cancelled without a valid requestId: ignored");
      return;
    }
  csr_jgen_tree (&w, rid);
  cleanup_free char *id = csr_jgen_finish (&w, "an id", NULL, NULL);
  struct mcp_job *j = id ? job_find (s, id) : NULL;
  const char *reason = csr_json_str (csr_json_get (m->params, "reason"));
  if (j)
    job_cancel (s, j, reason ? reason : "no reason given");
  else
    csr_debug ("mcp: cancellation of %s: no such call in progress", id ? id : "?");
}

static void
handle_line (struct csr_mcp_session *s, const char *line, size_t len)
{
  s->lines++;
  size_t blank = strspn (line, " \t\r");
  if (blank == len)
    return; /* an empty line is no message */
  struct csr_rpc_msg m;
  csr_rpc_parse (line, len, &m);
  if (m.kind == CSR_RPC_INVALID)
    send_error (s, m.id, m.error_code, "%s", m.error_message);
  else if (m.id && strlen (m.id) > MAX_ID_LEN)
    send_error (s, NULL, CSR_RPC_INVALID_REQUEST, "Invalid Request: id: longer than %d bytes",
                MAX_ID_LEN);
  else if (m.kind == CSR_RPC_REQUEST && job_find (s, m.id))
    send_error (s, m.id, CSR_RPC_INVALID_REQUEST,
                "Invalid Request: id %s is the id of a call in progress", m.id);
  else if (m.kind == CSR_RPC_RESPONSE)
    csr_debug ("mcp: a response to no request of ours (line %lu): ignored", s->lines);
  else if (m.kind == CSR_RPC_NOTIFICATION)
    {
      if (strcmp (m.method, "notifications/cancelled") == 0)
        do_cancelled (s, &m);
      else
        csr_debug ("mcp: notification %s", m.method);
    }
  else if (strcmp (m.method, "initialize") == 0)
    do_initialize (s, &m);
  else if (strcmp (m.method, "ping") == 0)
    send_result_text (s, m.id, "{}");
  else if (strcmp (m.method, "tools/list") == 0 || strcmp (m.method, "tools/call") == 0)
    {
      if (!s->initialized)
        send_error (s, m.id, CSR_RPC_INVALID_REQUEST,
                    "Invalid Request: %s before initialize: the session starts with initialize",
                    m.method);
      else if (strcmp (m.method, "tools/list") == 0)
        do_tools_list (s, &m);
      else
        do_tools_call (s, &m);
    }
  else
    send_error (s, m.id, CSR_RPC_METHOD_NOT_FOUND,
                "Method not found: '%.100s' (this server has tools only: initialize, ping, "
                "tools/list, tools/call)",
                m.method);
  csr_rpc_msg_release (&m);
}

/* ------------------------------------------------------------ the loop */

static void
begin_stop (struct csr_mcp_session *s, const char *why)
{
  if (s->eof)
    return;
  csr_log (CSR_LOG_INFO, "mcp: %s: stopping", why);
  s->eof = true;
  s->stop_deadline_ms = csr_mono_ms () + STOP_GRACE_MS;
  for (struct mcp_job *j = s->jobs, *next; j; j = next)
    {
      next = j->next;
      /* A sandbox being made is let finish (within the grace period): its
       * id is known then, and it is removed with the session's others. */
      if (!(j->started && j->tool->creates_sandbox))
        job_cancel (s, j, why);
    }
}

static void
read_input (struct csr_mcp_session *s)
{
  char buf[65536];
  ssize_t r = read (s->in_fd, buf, sizeof buf);
  if (r < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  char *line;
  size_t len;
  int rc;
  if (r <= 0)
    {
      while ((rc = csr_rpc_reader_last (&s->rd, &line, &len)) != 0)
        if (rc == 1)
          handle_line (s, line, len);
      begin_stop (s, r == 0 ? "the input ended" : "the input failed");
      return;
    }
  if (csr_rpc_reader_feed (&s->rd, buf, (size_t)r) < 0)
    {
      send_error (s, NULL, CSR_RPC_INTERNAL_ERROR, "Internal error: out of memory reading");
      return;
    }
  while ((rc = csr_rpc_reader_next (&s->rd, &line, &len)) != 0)
    {
      if (rc == 2)
        send_error (s, NULL, CSR_RPC_INVALID_REQUEST,
                    "Invalid Request: a message longer than %zu bytes (csrun mcp "
                    "--max-request): dropped",
                    s->cfg->max_request);
      else
        handle_line (s, line, len);
      if (s->out.pending > MAX_PENDING_OUTPUT)
        break; /* the rest waits for the client to read */
    }
}

#define MAX_POLL 2048

static int
poll_once (struct csr_mcp_session *s)
{
  struct pollfd p[MAX_POLL];
  struct mcp_job *owner[MAX_POLL];
  int kind[MAX_POLL];
  nfds_t n = 0;
  p[n++] = (struct pollfd){ csr_stopsig_fd (), POLLIN, 0 };
  bool reading = !s->eof && s->out.pending <= MAX_PENDING_OUTPUT;
  p[n++] = (struct pollfd){ reading ? s->in_fd : -1, POLLIN, 0 };
  p[n++] = (struct pollfd){ s->out.first && !s->out_broken ? s->out_fd : -1, POLLOUT, 0 };
  for (struct mcp_job *j = s->jobs; j && n + 3 <= MAX_POLL; j = j->next)
    {
      if (!j->started)
        continue;
      int fds[3] = { j->fd_main, j->fd_err, j->fd_pid };
      for (int k = 0; k < 3; k++)
        if (fds[k] >= 0)
          {
            owner[n] = j;
            kind[n] = k;
            p[n++] = (struct pollfd){ fds[k], POLLIN, 0 };
          }
    }
  int timeout = job_timers (s);
  int r = poll (p, n, timeout);
  if (r < 0)
    return errno == EINTR ? 0 : -1;
  if (p[0].revents)
    {
      int sig = csr_stopsig_take ();
      if (sig)
        {
          s->stop_signal = s->stop_signal ? s->stop_signal : sig;
          begin_stop (s, strsignal (sig));
        }
    }
  if (p[2].revents & (POLLOUT | POLLERR | POLLHUP))
    if (csr_rpc_outq_write (&s->out, s->out_fd) < 0)
      {
        s->out_broken = true;
        csr_rpc_outq_release (&s->out);
        begin_stop (s, "the client stopped reading");
      }
  if (p[1].revents)
    read_input (s);
  for (nfds_t i = 3; i < n; i++)
    {
      if (p[i].revents == 0)
        continue;
      struct mcp_job *j = owner[i];
      bool live = false;
      for (struct mcp_job *q = s->jobs; q && !live; q = q->next)
        live = q == j;
      if (!live)
        continue;
      if (kind[i] == 0 && j->fd_main >= 0)
        {
          job_read (&j->fd_main, &j->main, false);
          if (!j->tool->command)
            mcp_python_records (s, j);
        }
      else if (kind[i] == 1 && j->fd_err >= 0)
        job_read (&j->fd_err, &j->err, true);
      else if (kind[i] == 2 && j->fd_pid >= 0)
        {
          /* It ended: what its pipes hold is read now, whatever holds them. */
          close (j->fd_pid);
          j->fd_pid = -1;
          job_end (s, j, true);
          continue;
        }
      if (j->fd_main < 0 && j->fd_err < 0 && j->fd_pid < 0)
        job_end (s, j, false);
    }
  return 0;
}

/* At the end: the sandboxes this session made go too (unless kept). */
static void
remove_sandboxes (struct csr_mcp_session *s)
{
  for (size_t i = 0; i < s->n_sandboxes; i++)
    {
      if (!s->cfg->keep_sandboxes)
        {
          const char *argv[] = { "sandbox", "rm", "--force", s->sandboxes[i], NULL };
          int st = mcp_command_run_sync (s->cfg, argv, 30000);
          if (st != 0)
            csr_log (CSR_LOG_WARNING, "mcp: could not remove sandbox %s (csrun sandbox rm)",
                     s->sandboxes[i]);
          else
            csr_debug ("mcp: removed sandbox %s", s->sandboxes[i]);
        }
      free (s->sandboxes[i]);
    }
  free (s->sandboxes);
}

int
csr_mcp_serve (const struct csr_mcp_config *cfg, int in_fd, int out_fd, int *signal_out,
               csr_error **err)
{
  struct csr_mcp_session s;
  memset (&s, 0, sizeof s);
  s.cfg = cfg;
  s.in_fd = in_fd;
  s.out_fd = out_fd;
  snprintf (s.protocol, sizeof s.protocol, "%s", csr_mcp_protocol_versions[0]);
  csr_rpc_reader_init (&s.rd, cfg->max_request);
  if (csr_stopsig_open (err) < 0)
    return -1;
  csr_stopsig_catch (NULL);
  signal (SIGPIPE, SIG_IGN);
  int rc = 0;
  for (;;)
    {
      start_waiting (&s);
      if (s.eof && s.jobs == NULL && (s.out.first == NULL || s.out_broken))
        break;
      if (s.eof && csr_mono_ms () >= s.stop_deadline_ms)
        {
          /* Calls that did not stop in time, and output nobody reads. */
          for (struct mcp_job *j = s.jobs; j; j = j->next)
            if (j->started)
              kill (j->tool->command ? -j->pid : j->pid, SIGKILL);
          while (s.jobs)
            {
              struct mcp_job *j = s.jobs;
              if (j->started)
                while (waitpid (j->pid, NULL, 0) < 0 && errno == EINTR)
                  ;
              job_remove (&s, j);
            }
          break;
        }
      if (poll_once (&s) < 0)
        {
          rc = csr_error_errno (err, "poll");
          break;
        }
    }
  remove_sandboxes (&s);
  csr_rpc_outq_release (&s.out);
  csr_rpc_reader_release (&s.rd);
  csr_stopsig_close ();
  *signal_out = s.stop_signal;
  return rc;
}
