/* csrun — a sandbox's sessions, the keeper's part (session.h): start the
 * interpreters, hand each cell to its session, relay the session's checked
 * report, interrupt a cell whose caller went away (its timeout), end the
 * sessions with the sandbox. */
#include "config.h"
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../supervisor/launch.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fdpass.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "run.h"

/* After the interrupt, how long a cell has to stop before its session is
 * killed (and reported lost). */
#define INTERRUPT_GRACE_MS 2000
#define REPLY_MAX (64 * 1024)
#define DEFAULT_SAVE_TIMEOUT_MS (120 * 1000)

struct session
{
  bool used;
  char name[CSR_SBX_SESSION_NAME_MAX + 1];
  struct csr_sbx_exec x; /* the interpreter (exec.c) */
  int ctl;               /* our end of the control channel */
  int client;            /* the caller waiting for the reply to a cell; -1: none */
  bool busy;             /* a request is with the interpreter */
  bool started_now;      /* the cell that is running started the interpreter */
  int timer;             /* after an interrupt: when to give up; -1 */
  long long cells;
  int64_t created;
  uint64_t last_ms;
  char *rbuf; /* REPLY_MAX + 1 */
  size_t rlen;
  /* A save or load under way (keeper_session_save/load): its callback
   * (NULL once forgotten), its timeout, whether it was interrupted. */
  bool calling, interrupted;
  keeper_session_done_fn done;
  void *done_arg;
  int call_timeout_ms;
};
static struct session sessions[KEEPER_MAX_SESSIONS];

static struct session *
find (const char *name)
{
  for (size_t i = 0; i < KEEPER_MAX_SESSIONS; i++)
    if (sessions[i].used && strcmp (sessions[i].name, name) == 0)
      return &sessions[i];
  return NULL;
}

size_t
keeper_session_names (struct keeper *k, const char **names, size_t max)
{
  (void)k;
  size_t n = 0;
  for (size_t i = 0; i < KEEPER_MAX_SESSIONS && n < max; i++)
    if (sessions[i].used)
      names[n++] = sessions[i].name;
  return n;
}

/* ------------------------------------------------------------ end */

static void
cancel_timer (struct keeper *k, struct session *s)
{
  if (s->timer >= 0)
    {
      keeper_unwatch (k, s->timer);
      close (s->timer);
      s->timer = -1;
    }
}

/* The request with the interpreter is over: the caller's connection goes. */
static void
request_done (struct keeper *k, struct session *s)
{
  cancel_timer (k, s);
  if (s->client >= 0)
    {
      keeper_unwatch (k, s->client);
      close (s->client);
      s->client = -1;
    }
  if (s->busy)
    k->n_busy--;
  s->busy = false;
  s->started_now = false;
  s->last_ms = k->last_activity_ms = csr_mono_ms ();
}

/* The session is gone (or is killed now): a waiting caller hears that its
 * cell was lost, the interpreter's process group is killed, its slot freed. */
static void
lose (struct keeper *k, struct session *s, const char *why)
{
  fprintf (stderr, "csrun sandbox %s: session %s ended: %s\n", k->spec->id, s->name, why);
  /* A save or load waiting for it hears why, once the slot is free. */
  keeper_session_done_fn done = s->calling ? s->done : NULL;
  void *done_arg = s->done_arg;
  csr_error *e = NULL;
  if (done)
    {
      if (s->interrupted)
        csr_error_set (&e, ETIMEDOUT,
                       "session %s: no answer in %d ms, nor after its interrupt (it was killed)",
                       s->name, s->call_timeout_ms);
      else
        csr_error_set (&e, EPIPE, "session %s ended (%s)", s->name, why);
    }
  /* Its pid (the status pipe's first record), to kill its process group. */
  if (s->x.status_fd >= 0 && s->x.pid == 0)
    {
      int fd = s->x.status_fd;
      if (csr_sbx_exec_poll (&s->x) == 1)
        keeper_unwatch (k, fd);
    }
  if (s->client >= 0)
    {
      char reply[256];
      snprintf (reply, sizeof reply,
                "{\"exit_code\":-1,\"signal\":%d,\"lost\":true,\"started\":%s,\"cell\":%lld}",
                SIGKILL, s->started_now ? "true" : "false", s->cells + 1);
      keeper_reply (s->client, reply);
    }
  request_done (k, s);
  if (s->x.status_fd >= 0)
    {
      keeper_unwatch (k, s->x.status_fd);
      if (!s->x.have_status)
        csr_sbx_exec_kill (&s->x);
      close (s->x.status_fd);
      s->x.status_fd = -1;
    }
  else if (!s->x.have_status)
    csr_sbx_exec_kill (&s->x);
  if (s->x.helper > 0)
    while (waitpid (s->x.helper, NULL, 0) < 0 && errno == EINTR)
      ;
  if (s->ctl >= 0)
    {
      keeper_unwatch (k, s->ctl);
      close (s->ctl);
    }
  free (s->rbuf);
  memset (s, 0, sizeof *s);
  s->ctl = s->client = s->timer = -1;
  if (done)
    done (k, done_arg, NULL, e);
  csr_error_free (e);
}

/* ------------------------------------------------------------ the interpreter's side */

static void on_ctl (struct keeper *k, int fd, short revents, void *arg);
static void call_reply (struct keeper *k, struct session *s);

static void
on_status (struct keeper *k, int fd, short revents, void *arg)
{
  (void)fd, (void)revents;
  struct session *s = arg;
  if (csr_sbx_exec_poll (&s->x) == 1)
    {
      s->x.status_fd = -1; /* closed by the poll */
      keeper_unwatch (k, fd);
      lose (k, s,
            s->x.exec_failed ? "the sandbox has no /usr/bin/python3" : "the interpreter ended");
    }
}

static int
start (struct keeper *k, struct session *s, const char *name, csr_error **err)
{
  memset (s, 0, sizeof *s);
  s->ctl = s->client = s->timer = -1;
  s->x.status_fd = -1;
  snprintf (s->name, sizeof s->name, "%s", name);
  if ((s->rbuf = malloc (REPLY_MAX + 1)) == NULL)
    return csr_error_set (err, ENOMEM, "session");
  int sp[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
    {
      free (s->rbuf);
      return csr_error_errno (err, "socketpair");
    }
  cleanup_close int theirs = sp[1];
  cleanup_close int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  char *argv[]
      = { (char *)"/usr/bin/python3", (char *)"-I",        (char *)"-S", (char *)"-u", (char *)"-c",
          (char *)csr_session_py,     (char *)csr_gate_py, NULL };
  struct csr_sbx_exec_req r = {
    .argv = argv,
    .envp = k->spec->env,
    .cwd = k->spec->workdir,
    .fds = { devnull, devnull, devnull },
    .extra = { theirs },
    .n_extra = 1,
  };
  struct csr_sbx_target t;
  keeper_target (k, &t);
  if (devnull < 0 || csr_sbx_exec_spawn (&t, &r, &s->x, err) < 0)
    {
      if (devnull < 0)
        csr_error_errno (err, "/dev/null");
      close (sp[0]);
      free (s->rbuf);
      return -1;
    }
  s->ctl = sp[0];
  /* Sends wait (the interpreter reads them at once, or is stuck: lost). */
  struct timeval tv = { 5, 0 };
  setsockopt (s->ctl, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  s->used = true;
  s->created = (int64_t)time (NULL);
  s->last_ms = csr_mono_ms ();
  if (keeper_watch (k, s->x.status_fd, POLLIN, on_status, s) < 0
      || keeper_watch (k, s->ctl, POLLIN, on_ctl, s) < 0)
    {
      lose (k, s, "the keeper watches too many descriptors");
      return csr_error_set (err, EMFILE, "the keeper watches too many descriptors");
    }
  return 0;
}

/* Send one request line with descriptors to S's interpreter. */
static int
send_request (struct session *s, const char *line, const int *fds, size_t n_fds)
{
  return csr_send_fds (s->ctl, line, strlen (line), fds, n_fds);
}

/* Read what the interpreter sent: 1 with a whole line in S->rbuf (its
 * length in *LEN), 0 not yet, -1 at its end, on an error or a line too
 * long. */
static int
read_reply (struct session *s, size_t *len)
{
  for (;;)
    {
      char *nl = memchr (s->rbuf, '\n', s->rlen);
      if (nl)
        {
          *nl = '\0';
          *len = (size_t)(nl - s->rbuf);
          return 1;
        }
      if (s->rlen >= REPLY_MAX)
        return -1;
      ssize_t r = recv (s->ctl, s->rbuf + s->rlen, REPLY_MAX - s->rlen, MSG_DONTWAIT);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && errno == EAGAIN)
        return 0;
      if (r <= 0)
        return -1;
      s->rlen += (size_t)r;
    }
}

/* Drop the line read (and what followed it: one reply per request). */
static void
consume (struct session *s)
{
  s->rlen = 0;
}

static long long
jint (yajl_val t, const char *key, long long lo, long long hi, bool *bad)
{
  yajl_val v = csr_json_get (t, key);
  if (v == NULL || !YAJL_IS_INTEGER (v) || YAJL_GET_INTEGER (v) < lo || YAJL_GET_INTEGER (v) > hi)
    {
      *bad = true;
      return 0;
    }
  return YAJL_GET_INTEGER (v);
}

/* A cell's report, checked (the interpreter runs the sandbox's code), as
 * the reply for the caller. */
static void
relay_cell (struct keeper *k, struct session *s, const char *line)
{
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (line, ebuf, sizeof ebuf);
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  if (t && msg)
    {
      keeper_reply_errorf (s->client, "session %s: %s", s->name, msg);
      request_done (k, s);
      return;
    }
  bool bad = t == NULL;
  long long status = jint (t, "status", 0, 255, &bad);
  long long cpu = jint (t, "cpu_ms", 0, INT32_MAX, &bad);
  long long cell = jint (t, "cell", 1, INT64_MAX, &bad);
  yajl_val intr = csr_json_get (t, "interrupted");
  if (bad || !(YAJL_IS_TRUE (intr) || YAJL_IS_FALSE (intr)))
    {
      lose (k, s, "its report of a cell was not what csrun sends");
      return;
    }
  s->cells = cell;
  char reply[256];
  snprintf (reply, sizeof reply,
            "{\"exit_code\":%lld,\"signal\":0,\"interrupted\":%s,\"cpu_ms\":%lld,\"cell\":%lld,"
            "\"started\":%s,\"lost\":false}",
            status, YAJL_IS_TRUE (intr) ? "true" : "false", cpu, cell,
            s->started_now ? "true" : "false");
  keeper_reply (s->client, reply);
  request_done (k, s);
}

static void
on_ctl (struct keeper *k, int fd, short revents, void *arg)
{
  (void)fd, (void)revents;
  struct session *s = arg;
  size_t len;
  int rc = read_reply (s, &len);
  if (rc == 0)
    return;
  if (rc > 0 && s->calling)
    return call_reply (k, s);
  if (rc < 0 || !s->busy || s->client < 0)
    {
      lose (k, s, rc < 0 ? "its control channel closed" : "it sent a report nobody asked for");
      return;
    }
  relay_cell (k, s, s->rbuf);
  if (s->used)
    consume (s);
}

/* ------------------------------------------------------------ interrupts */

static void
on_timer (struct keeper *k, int fd, short revents, void *arg)
{
  (void)fd, (void)revents;
  lose (k, arg, "a cell did not stop after its interrupt");
}

/* The caller went away (its timeout, an interrupt): the cell gets
 * KeyboardInterrupt, and INTERRUPT_GRACE_MS to stop. */
static void
on_client (struct keeper *k, int fd, short revents, void *arg)
{
  (void)revents;
  struct session *s = arg;
  keeper_unwatch (k, fd);
  if (s->x.pid > 0)
    kill (s->x.pid, SIGINT);
  s->timer = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  struct itimerspec its
      = { .it_value = { INTERRUPT_GRACE_MS / 1000, (INTERRUPT_GRACE_MS % 1000) * 1000000L } };
  if (s->timer < 0 || timerfd_settime (s->timer, 0, &its, NULL) < 0
      || keeper_watch (k, s->timer, POLLIN, on_timer, s) < 0)
    {
      if (s->timer >= 0)
        close (s->timer);
      s->timer = -1;
      lose (k, s, "a cell was interrupted and no timer could be armed");
    }
}

/* ------------------------------------------------------------ requests */

/* Session NAME (valid), started when it does not run: NULL after replying
 * an error on FD. */
static struct session *
get_session (struct keeper *k, int fd, const char *name, bool *started, csr_error **err)
{
  *started = false;
  struct session *s = find (name);
  if (s)
    return s;
  for (size_t i = 0; i < KEEPER_MAX_SESSIONS; i++)
    if (!sessions[i].used)
      {
        if (start (k, &sessions[i], name, err) < 0)
          return NULL;
        *started = true;
        return &sessions[i];
      }
  (void)fd;
  csr_error_set (err, 0, "too many sessions in this sandbox (at most %d)", KEEPER_MAX_SESSIONS);
  if (*err)
    (*err)->status = EAGAIN;
  return NULL;
}

static const char *
request_name (yajl_val req)
{
  const char *name = csr_json_str (csr_json_get (req, "name"));
  return name && csr_sbx_session_name_ok (name) ? name : NULL;
}

static void
op_run (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  if (!k->running)
    return keeper_reply_error (fd, "the sandbox is stopped (csrun sandbox start ID)");
  const char *name = request_name (req);
  const char *policy = csr_json_str (csr_json_get (req, "policy"));
  char **args = keeper_strv (csr_json_get (req, "args"));
  if (name == NULL || policy == NULL || args == NULL || n_fds != 5)
    {
      keeper_strv_free (args);
      return keeper_reply_error (fd, "session-run: a session name, a policy, args and 5 "
                                     "descriptors are needed");
    }
  struct session *s = find (name);
  if (s && s->busy)
    {
      keeper_strv_free (args);
      return keeper_reply_errorf (fd,
                                  "session %s is busy: a cell is running (a session runs one "
                                  "cell at a time)",
                                  name);
    }
  csr_error *e = NULL;
  bool started = false;
  if (s == NULL && (s = get_session (k, fd, name, &started, &e)) == NULL)
    {
      keeper_strv_free (args);
      keeper_reply_error (fd, e->status == EAGAIN ? e->msg : csr_error_text (e));
      csr_error_free (e);
      return;
    }
  struct csr_jgen w;
  cleanup_free char *line = NULL;
  if (csr_jgen_init (&w, false, NULL) == 0)
    {
      csr_jgen_map_open (&w);
      csr_jgen_kv_str (&w, "op", "cell");
      csr_jgen_kv_str (&w, "policy", policy);
      csr_jgen_kv_strv (&w, "args", (const char *const *)args);
      csr_jgen_map_close (&w);
      char *doc = csr_jgen_finish (&w, "cell", NULL, NULL);
      if (doc && asprintf (&line, "%s\n", doc) < 0)
        line = NULL;
      free (doc);
    }
  keeper_strv_free (args);
  if (line == NULL)
    return keeper_reply_error (fd, "out of memory");
  s->busy = true;
  s->started_now = started;
  s->client = fd;
  k->n_busy++;
  *keep = true;
  if (send_request (s, line, fds, 5) < 0)
    {
      lose (k, s, "a cell could not be sent to it");
      return;
    }
  if (keeper_watch (k, fd, POLLRDHUP, on_client, s) < 0)
    lose (k, s, "the keeper watches too many descriptors");
}

static void
op_ls (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)req, (void)fds, (void)n_fds, (void)keep;
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return keeper_reply_error (fd, "out of memory");
  uint64_t now = csr_mono_ms ();
  csr_jgen_map_open (&w);
  csr_jgen_str (&w, "sessions");
  csr_jgen_array_open (&w);
  for (size_t i = 0; i < KEEPER_MAX_SESSIONS; i++)
    {
      const struct session *s = &sessions[i];
      if (!s->used)
        continue;
      csr_jgen_map_open (&w);
      csr_jgen_kv_str (&w, "name", s->name);
      csr_jgen_kv_int (&w, "pid", s->x.pid);
      csr_jgen_kv_str (&w, "state", s->busy ? "busy" : "idle");
      csr_jgen_kv_int (&w, "cells", s->cells);
      csr_jgen_kv_int (&w, "created", s->created);
      csr_jgen_kv_int (&w, "idle_ms", s->busy ? 0 : (long long)(now - s->last_ms));
      csr_jgen_map_close (&w);
    }
  csr_jgen_array_close (&w);
  csr_jgen_map_close (&w);
  (void)k;
  char *doc = csr_jgen_finish (&w, "reply", NULL, NULL);
  if (doc)
    keeper_reply (fd, doc);
  free (doc);
}

static void
op_rm (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)fds, (void)n_fds, (void)keep;
  const char *name = request_name (req);
  struct session *s = name ? find (name) : NULL;
  if (s == NULL)
    return keeper_reply_errorf (fd, "no such session: '%s'",
                                csr_json_str (csr_json_get (req, "name")) ?: "");
  lose (k, s, "csrun sandbox session rm");
  keeper_reply (fd, "{\"ok\":true}");
}

/* ------------------------------------------------------------ save and load */

/* The reply to a save or load: its callback, with the report or the
 * error, once the session is free again. */
static void
call_reply (struct keeper *k, struct session *s)
{
  keeper_session_done_fn done = s->done;
  void *arg = s->done_arg;
  s->done = NULL;
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (s->rbuf, ebuf, sizeof ebuf);
  if (t == NULL || !YAJL_IS_OBJECT (t))
    {
      /* Its callback hears it from here (lose would say "ended"). */
      csr_error *e = NULL;
      csr_error_set (&e, EPROTO, "session %s: its report was not what csrun sends (it was killed)",
                     s->name);
      lose (k, s, "its report of a save or load was not what csrun sends");
      if (done)
        done (k, arg, NULL, e);
      csr_error_free (e);
      return;
    }
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  bool interrupted = s->interrupted;
  int timeout_ms = s->call_timeout_ms;
  csr_error *e = NULL;
  /* (Done as the interrupt was sent: done all the same.) */
  if (msg && interrupted)
    csr_error_set (&e, ETIMEDOUT, "session %s: no answer in %d ms: interrupted (it goes on)",
                   s->name, timeout_ms);
  else if (msg)
    csr_error_set (&e, 0, "session %s: %s", s->name, msg);
  consume (s);
  s->calling = s->interrupted = false;
  request_done (k, s);
  if (done)
    done (k, arg, e ? NULL : t, e);
  csr_error_free (e);
}

/* A save or load took too long: interrupted, then (the second time) killed. */
static void
on_call_timer (struct keeper *k, int fd, short revents, void *arg)
{
  (void)revents;
  struct session *s = arg;
  uint64_t ticks;
  if (read (fd, &ticks, sizeof ticks) < 0 && errno == EAGAIN)
    return;
  if (s->interrupted)
    return lose (k, s, "a save or load did not stop after its interrupt");
  s->interrupted = true;
  if (s->x.pid > 0)
    kill (s->x.pid, SIGINT);
  struct itimerspec its
      = { .it_value = { INTERRUPT_GRACE_MS / 1000, (INTERRUPT_GRACE_MS % 1000) * 1000000L } };
  if (timerfd_settime (s->timer, 0, &its, NULL) < 0)
    lose (k, s, "a save or load was interrupted and no timer could be armed");
}

/* Send OP with FD to S, and come back when it replies (or not in time). */
static int
call_start (struct keeper *k, struct session *s, const char *op, int fd, int timeout_ms,
            keeper_session_done_fn done, void *arg, csr_error **err)
{
  char line[64];
  snprintf (line, sizeof line, "{\"op\":\"%s\"}\n", op);
  if (timeout_ms <= 0)
    timeout_ms = 1;
  s->timer = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  struct itimerspec its = { .it_value = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L } };
  if (s->timer < 0 || timerfd_settime (s->timer, 0, &its, NULL) < 0
      || keeper_watch (k, s->timer, POLLIN, on_call_timer, s) < 0)
    {
      csr_error_errno (err, "session %s: a timer", s->name);
      if (s->timer >= 0)
        close (s->timer);
      s->timer = -1;
      return -1;
    }
  s->busy = true;
  k->n_busy++;
  if (send_request (s, line, &fd, 1) < 0)
    {
      csr_error_set (err, EPIPE, "session %s: the interpreter is gone", s->name);
      lose (k, s, "a request could not be sent to it");
      return -1;
    }
  s->calling = true;
  s->interrupted = false;
  s->done = done;
  s->done_arg = arg;
  s->call_timeout_ms = timeout_ms;
  return 0;
}

static struct session *
ready_session (struct keeper *k, const char *name, bool create, csr_error **err)
{
  if (!k->running)
    return csr_error_set (err, ESRCH, "the sandbox is stopped"), NULL;
  if (!csr_sbx_session_name_ok (name))
    return csr_error_set (err, EINVAL, "invalid session name '%s'", name), NULL;
  struct session *s = find (name);
  if (s == NULL && !create)
    return csr_error_set (err, ENOENT, "no such session: '%s'", name), NULL;
  bool started;
  if (s == NULL && (s = get_session (k, -1, name, &started, err)) == NULL)
    return NULL;
  if (s->busy)
    return csr_error_set (err, EBUSY, "session %s is busy: %s", name,
                          s->calling ? "a save or load is under way" : "a cell is running"),
           NULL;
  return s;
}

int
keeper_session_save (struct keeper *k, const char *name, int fd, int timeout_ms,
                     keeper_session_done_fn done, void *arg, csr_error **err)
{
  struct session *s = ready_session (k, name, false, err);
  return s ? call_start (k, s, "save", fd, timeout_ms, done, arg, err) : -1;
}

int
keeper_session_load (struct keeper *k, const char *name, int fd, int timeout_ms,
                     keeper_session_done_fn done, void *arg, csr_error **err)
{
  struct session *s = ready_session (k, name, true, err);
  return s ? call_start (k, s, "load", fd, timeout_ms, done, arg, err) : -1;
}

void
keeper_session_forget (struct keeper *k, void *arg)
{
  (void)k;
  for (size_t i = 0; i < KEEPER_MAX_SESSIONS; i++)
    if (sessions[i].used && sessions[i].calling && sessions[i].done_arg == arg)
      sessions[i].done = NULL;
}

/* The CLI's session save and load: the reply goes to the caller's
 * connection (ARG) when the session has answered. */
static void
reply_saved_loaded (struct keeper *k, void *arg, yajl_val report, const csr_error *err)
{
  (void)k;
  int fd = (int)(intptr_t)arg;
  if (report == NULL)
    keeper_reply_error (fd, err && err->msg ? err->msg : "out of memory");
  else
    {
      struct csr_jgen w;
      char *doc = NULL;
      if (csr_jgen_init (&w, false, NULL) == 0)
        {
          csr_jgen_tree (&w, report);
          doc = csr_jgen_finish (&w, "reply", NULL, NULL);
        }
      if (doc)
        keeper_reply (fd, doc);
      else
        keeper_reply_error (fd, "out of memory");
      free (doc);
    }
  close (fd);
}

static void
op_save_load (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool load, bool *keep)
{
  const char *name = csr_json_str (csr_json_get (req, "name"));
  if (name == NULL || n_fds != 1)
    return keeper_reply_error (fd, "session-save/load: a session name and a descriptor");
  yajl_val t = csr_json_get (req, "timeout_ms");
  int tmo = t && YAJL_IS_INTEGER (t) && YAJL_GET_INTEGER (t) > 0 && YAJL_GET_INTEGER (t) < INT32_MAX
                ? (int)YAJL_GET_INTEGER (t)
                : DEFAULT_SAVE_TIMEOUT_MS;
  csr_error *e = NULL;
  void *arg = (void *)(intptr_t)fd;
  int rc = load ? keeper_session_load (k, name, fds[0], tmo, reply_saved_loaded, arg, &e)
                : keeper_session_save (k, name, fds[0], tmo, reply_saved_loaded, arg, &e);
  if (rc < 0)
    keeper_reply_error (fd, e->msg); /* the caller's message; its errno is in the words */
  else
    *keep = true;
  csr_error_free (e);
}

static void
op_save (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  op_save_load (k, fd, req, fds, n_fds, false, keep);
}

static void
op_load (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  op_save_load (k, fd, req, fds, n_fds, true, keep);
}

/* ------------------------------------------------------------ the part */

static int
init (struct keeper *k, csr_error **err)
{
  (void)k, (void)err;
  for (size_t i = 0; i < KEEPER_MAX_SESSIONS; i++)
    {
      memset (&sessions[i], 0, sizeof sessions[i]);
      sessions[i].ctl = sessions[i].client = sessions[i].timer = -1;
      sessions[i].x.status_fd = -1;
    }
  return 0;
}

/* stop, rm, idle, TTL: the sessions end with the sandbox. */
static void
stopping (struct keeper *k)
{
  for (size_t i = 0; i < KEEPER_MAX_SESSIONS; i++)
    if (sessions[i].used)
      lose (k, &sessions[i], "the sandbox stopped");
}

static const struct keeper_op session_ops[] = {
  { "session-run", op_run, true },   { "session-ls", op_ls, false },
  { "session-rm", op_rm, true },     { "session-save", op_save, true },
  { "session-load", op_load, true }, { NULL, NULL, false },
};

const struct keeper_part keeper_part_session
    = { "session", session_ops, init, NULL, stopping, stopping };
