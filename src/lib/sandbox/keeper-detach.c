/* csrun — detached execs, the keeper's side (`csrun sandbox exec --detach`,
 * `wait`, `exec ls`; keeper.h).
 *
 * A detached exec is an exec (keeper-exec.c) whose stdin is /dev/null and
 * whose stdout and stderr are pipes the keeper reads into two files of the
 * sandbox's state directory, execs/ID/stdout and execs/ID/stderr, bounded
 * as exec --json's output is: the first half of its --max-output goes to
 * the file as it comes, the last half is kept (supervisor/bbuf.h, streamed)
 * and appended at the end, the bytes in between are counted.  Its record
 * (the table below) says how it ended.  `wait` gets the result and both
 * files (their descriptors, SCM_RIGHTS) once it is over, and the record
 * and its files go: a result is collected once.  Finished records nobody
 * collected are kept up to KEEPER_MAX_FINISHED, the first started removed
 * first.
 * What a process left behind by the exec writes after the exec's end is
 * not collected. */
#include "config.h"
#include "keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../supervisor/bbuf.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fdpass.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"

#define KEEPER_MAX_FINISHED 32
#define MAX_DETACHED (KEEPER_MAX_EXECS + KEEPER_MAX_FINISHED)
#define MAX_WAITERS 8
#define DETACH_ID_LEN 16
#define CMD_MAX 256
#define DEFAULT_MAX_OUTPUT (1u << 20)
#define MAX_MAX_OUTPUT (1ULL << 30)

static const char *const stream_names[2] = { "stdout", "stderr" };

struct stream
{
  int pipe; /* our end, non-blocking; -1 once at its end */
  int file; /* execs/ID/NAME, read and write */
  struct csr_bbuf buf;
};

struct detached
{
  bool used;
  char id[DETACH_ID_LEN + 1];
  char cmd[CMD_MAX]; /* argv joined, for exec ls */
  uint64_t seq;      /* start order */
  int64_t started;   /* unix seconds */
  uint64_t t0_ms, ended_ms;
  pid_t pid;
  bool made_dir;         /* execs/ID is ours */
  bool sh;               /* exec --sh (for the note on a missing /bin/sh) */
  struct keeper_exec *e; /* while it runs */
  struct stream s[2];
  char *write_error; /* the first failed write into the files */
  char *result;      /* once over: the JSON object wait gets */
  int waiters[MAX_WAITERS];
  size_t n_waiters;
};

static struct detached recs[MAX_DETACHED];
static uint64_t next_seq;

/* ------------------------------------------------------------ records */

static int
execs_dir (struct keeper *k, csr_error **err)
{
  if (mkdirat (k->b->dirfd, "execs", 0700) < 0 && errno != EEXIST)
    return csr_error_errno (err, "create execs/ in the sandbox's directory");
  int fd = openat (k->b->dirfd, "execs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "open execs/ in the sandbox's directory");
  return fd;
}

/* Remove R and its files. */
static void
drop (struct keeper *k, struct detached *r)
{
  for (int i = 0; i < 2; i++)
    {
      if (r->s[i].pipe >= 0)
        {
          keeper_unwatch (k, r->s[i].pipe);
          close (r->s[i].pipe);
        }
      if (r->s[i].file >= 0)
        close (r->s[i].file);
      csr_bbuf_release (&r->s[i].buf);
    }
  for (size_t i = 0; i < r->n_waiters; i++)
    {
      keeper_unwatch (k, r->waiters[i]);
      close (r->waiters[i]);
    }
  cleanup_close int dfd
      = openat (k->b->dirfd, "execs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_close int rfd
      = dfd < 0 || !r->made_dir
            ? -1
            : openat (dfd, r->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rfd >= 0)
    {
      for (int i = 0; i < 2; i++)
        if (unlinkat (rfd, stream_names[i], 0) < 0 && errno != ENOENT)
          fprintf (stderr, "csrun sandbox: exec %s: remove %s: %s\n", r->id, stream_names[i],
                   strerror (errno));
      if (unlinkat (dfd, r->id, AT_REMOVEDIR) < 0)
        fprintf (stderr, "csrun sandbox: exec %s: remove its directory: %s\n", r->id,
                 strerror (errno));
    }
  free (r->write_error);
  free (r->result);
  memset (r, 0, sizeof *r);
}

/* Make room: the finished records beyond KEEPER_MAX_FINISHED - KEEP go,
 * the first started first. */
static void
prune (struct keeper *k, size_t keep)
{
  for (;;)
    {
      size_t n = 0;
      struct detached *oldest = NULL;
      for (size_t i = 0; i < MAX_DETACHED; i++)
        if (recs[i].used && recs[i].result)
          {
            n++;
            if (oldest == NULL || recs[i].seq < oldest->seq)
              oldest = &recs[i];
          }
      if (n + keep <= KEEPER_MAX_FINISHED || oldest == NULL)
        return;
      fprintf (stderr, "csrun sandbox: exec %s: its result was never collected: removed\n",
               oldest->id);
      drop (k, oldest);
    }
}

static struct detached *
find (const char *id)
{
  size_t len = strlen (id);
  struct detached *hit = NULL;
  int n = 0;
  for (size_t i = 0; i < MAX_DETACHED; i++)
    if (recs[i].used)
      {
        if (strcmp (recs[i].id, id) == 0)
          return &recs[i];
        if (len >= 4 && strncmp (recs[i].id, id, len) == 0)
          hit = &recs[i], n++;
      }
  return n == 1 ? hit : NULL;
}

/* ------------------------------------------------------------ output */

/* Into R's stream I: the bytes that go to the head are written now. */
static void
feed (struct detached *r, int i, const char *data, size_t len)
{
  struct stream *s = &r->s[i];
  size_t head = csr_bbuf_append (&s->buf, data, len);
  csr_error *e = NULL;
  if (head > 0 && r->write_error == NULL && csr_write_all (s->file, data, head, &e) < 0)
    {
      if (asprintf (&r->write_error, "%s: %s", stream_names[i], csr_error_text (e)) < 0)
        r->write_error = NULL;
      csr_error_free (e);
    }
}

/* Read what stream I's pipe has (at most ROUNDS chunks); at its end (or a
 * failure) the pipe is closed. */
static void
read_stream (struct keeper *k, struct detached *r, int i, int rounds)
{
  struct stream *s = &r->s[i];
  char buf[65536];
  while (s->pipe >= 0 && rounds-- > 0)
    {
      ssize_t n = read (s->pipe, buf, sizeof buf);
      if (n > 0)
        {
          feed (r, i, buf, (size_t)n);
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return;
      keeper_unwatch (k, s->pipe);
      close (s->pipe);
      s->pipe = -1;
    }
}

static void
on_output (struct keeper *k, int fd, short revents, void *arg)
{
  (void)revents;
  struct detached *r = arg;
  read_stream (k, r, r->s[0].pipe == fd ? 0 : 1, 16);
}

/* ------------------------------------------------------------ the end, wait */

/* The reply with both files' descriptors (which stay ours). */
static void
deliver (const struct detached *r, int fd)
{
  size_t len = strlen (r->result);
  cleanup_free char *line = malloc (len + 1);
  if (line == NULL)
    return;
  memcpy (line, r->result, len);
  line[len] = '\n';
  int fds[2] = { r->s[0].file, r->s[1].file };
  /* A caller that went away is no concern of ours. */
  (void)csr_send_fds (fd, line, len + 1, fds, 2);
}

static void
finish_output (struct detached *r)
{
  for (int i = 0; i < 2; i++)
    {
      size_t n;
      cleanup_free char *tail = csr_bbuf_tail (&r->s[i].buf, &n);
      csr_error *e = NULL;
      if (tail == NULL)
        {
          if (r->write_error == NULL)
            r->write_error = strdup ("out of memory");
        }
      else if (n > 0 && r->write_error == NULL && csr_write_all (r->s[i].file, tail, n, &e) < 0)
        {
          if (asprintf (&r->write_error, "%s: %s", stream_names[i], csr_error_text (e)) < 0)
            r->write_error = NULL;
          csr_error_free (e);
        }
    }
}

static char *
result_json (const struct detached *r, const struct keeper_exec *e)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "exec", r->id);
  keeper_exec_gen_result (&w, e);
  for (int i = 0; i < 2; i++)
    {
      char key[32];
      snprintf (key, sizeof key, "%s_bytes", stream_names[i]);
      csr_jgen_kv_int (&w, key, (long long)r->s[i].buf.total);
      snprintf (key, sizeof key, "%s_dropped_bytes", stream_names[i]);
      csr_jgen_kv_int (&w, key, (long long)csr_bbuf_dropped (&r->s[i].buf));
    }
  if (r->write_error)
    csr_jgen_kv_str (&w, "output_error", r->write_error);
  csr_jgen_str (&w, "sh");
  csr_jgen_bool (&w, r->sh);
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "the exec's result", NULL, NULL);
}

/* keeper_exec's ON_END: the process is gone (what it wrote is in the pipes). */
static void
detached_end (struct keeper *k, struct keeper_exec *e)
{
  struct detached *r = e->arg;
  for (int i = 0; i < 2; i++)
    {
      /* What it wrote is in the pipe; a process it left behind may write
       * on: a bounded drain. */
      read_stream (k, r, i, 64);
      if (r->s[i].pipe >= 0)
        {
          keeper_unwatch (k, r->s[i].pipe);
          close (r->s[i].pipe);
          r->s[i].pipe = -1;
        }
    }
  finish_output (r);
  r->pid = e->x.pid;
  r->result = result_json (r, e);
  if (r->result == NULL)
    r->result = strdup ("{\"error\":\"out of memory\"}");
  for (int i = 0; i < 2; i++)
    csr_bbuf_release (&r->s[i].buf);
  r->e = NULL;
  r->ended_ms = (uint64_t)csr_mono_ms ();
  if (r->n_waiters > 0)
    {
      for (size_t i = 0; i < r->n_waiters; i++)
        if (r->result)
          deliver (r, r->waiters[i]);
      drop (k, r);
      return;
    }
  prune (k, 0);
}

static void
waiter_gone (struct keeper *k, int fd, short revents, void *arg)
{
  (void)revents;
  struct detached *r = arg;
  for (size_t i = 0; i < r->n_waiters; i++)
    if (r->waiters[i] == fd)
      {
        r->waiters[i] = r->waiters[--r->n_waiters];
        break;
      }
  keeper_unwatch (k, fd);
  close (fd);
}

static void
op_wait (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)fds, (void)n_fds;
  const char *id = csr_json_str (csr_json_get (req, "exec"));
  struct detached *r = id ? find (id) : NULL;
  if (r == NULL)
    return keeper_reply_errorf (fd, "no such exec: '%s' (not detached here, or collected already)",
                                id ? id : "");
  if (r->result)
    {
      deliver (r, fd);
      drop (k, r);
      return;
    }
  if (r->n_waiters == MAX_WAITERS || keeper_watch (k, fd, POLLRDHUP, waiter_gone, r) < 0)
    return keeper_reply_errorf (fd, "exec %s: too many waiting for it", r->id);
  r->waiters[r->n_waiters++] = fd;
  *keep = true;
}

/* ------------------------------------------------------------ exec --detach */

static void
join_argv (yajl_val a, char *out, size_t n)
{
  size_t off = 0;
  out[0] = '\0';
  for (size_t i = 0; a && YAJL_IS_ARRAY (a) && i < a->u.array.len && off + 1 < n; i++)
    {
      const char *s = csr_json_str (a->u.array.values[i]);
      int w = snprintf (out + off, n - off, "%s%s", i ? " " : "", s ? s : "");
      if (w < 0)
        break;
      off += (size_t)w;
    }
  if (off >= n && n > 4)
    memcpy (out + n - 4, "...", 4);
}

/* R's files and pipes; the pipes' write ends into W. */
static int
open_streams (struct detached *r, int dfd, size_t max, int w[2], csr_error **err)
{
  if (mkdirat (dfd, r->id, 0700) < 0)
    return csr_error_errno (err, "create execs/%s", r->id);
  r->made_dir = true;
  cleanup_close int rfd = openat (dfd, r->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rfd < 0)
    return csr_error_errno (err, "open execs/%s", r->id);
  for (int i = 0; i < 2; i++)
    {
      struct stream *s = &r->s[i];
      s->file
          = openat (rfd, stream_names[i], O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (s->file < 0)
        return csr_error_errno (err, "create execs/%s/%s", r->id, stream_names[i]);
      int p[2];
      if (pipe2 (p, O_CLOEXEC) < 0)
        return csr_error_errno (err, "pipe");
      s->pipe = p[0];
      w[i] = p[1];
      if (fcntl (s->pipe, F_SETFL, O_NONBLOCK) < 0)
        return csr_error_errno (err, "pipe");
      if (csr_bbuf_init_streamed (&s->buf, max) < 0)
        return csr_error_set (err, ENOMEM, "exec output");
    }
  return 0;
}

/* Start REQ detached in R (a free record); the error for the reply. */
static int
start (struct keeper *k, struct detached *r, yajl_val req, csr_error **err)
{
  long long max = csr_json_int (req, "max_output", DEFAULT_MAX_OUTPUT);
  if (max < 2 || (unsigned long long)max > MAX_MAX_OUTPUT)
    return csr_error_set (err, 0, "exec: max_output out of range");
  if (csr_sandbox_random_hex (r->id, DETACH_ID_LEN, err) < 0)
    return -1;
  cleanup_close int dfd = execs_dir (k, err);
  if (dfd < 0)
    return -1;
  int w[2] = { -1, -1 };
  cleanup_close int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  int rc = devnull < 0 ? csr_error_errno (err, "/dev/null")
                       : open_streams (r, dfd, (size_t)max, w, err);
  struct keeper_exec *e = NULL;
  if (rc == 0)
    {
      int fds[3] = { devnull, w[0], w[1] };
      e = csr_json_get (req, "fds")
              ? (csr_error_set (err, 0, "exec --detach: no more descriptors"), NULL)
              : keeper_exec_start (k, req, fds, 3, err);
    }
  for (int i = 0; i < 2; i++)
    if (w[i] >= 0)
      close (w[i]);
  if (e == NULL)
    return -1;
  e->on_end = detached_end;
  e->arg = r;
  r->e = e;
  r->used = true;
  r->seq = next_seq++;
  r->started = (int64_t)time (NULL);
  r->t0_ms = (uint64_t)csr_mono_ms ();
  r->sh = YAJL_IS_TRUE (csr_json_get (req, "sh"));
  join_argv (csr_json_get (req, "argv"), r->cmd, sizeof r->cmd);
  for (int i = 0; i < 2; i++)
    if (keeper_watch (k, r->s[i].pipe, POLLIN, on_output, r) < 0)
      {
        /* Not read: the process may block on it; killed rather than stuck. */
        csr_sbx_exec_kill (&e->x);
        fprintf (stderr, "csrun sandbox: exec %s: too many descriptors watched: killed\n", r->id);
      }
  return 0;
}

void
keeper_detach_exec (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds)
{
  (void)fds, (void)n_fds;
  if (!k->running)
    return keeper_reply_error (fd, "the sandbox is stopped (csrun sandbox start ID)");
  prune (k, 1);
  struct detached *r = NULL;
  for (size_t i = 0; i < MAX_DETACHED && r == NULL; i++)
    if (!recs[i].used)
      r = &recs[i];
  if (r == NULL)
    return keeper_reply_error (fd, "too many detached execs in this sandbox");
  r->s[0].pipe = r->s[1].pipe = r->s[0].file = r->s[1].file = -1;
  csr_error *err = NULL;
  if (start (k, r, req, &err) < 0)
    {
      r->used = true; /* for drop: its files and pipes */
      drop (k, r);
      keeper_reply_error (fd, csr_error_text (err));
      csr_error_free (err);
      return;
    }
  char reply[64];
  snprintf (reply, sizeof reply, "{\"exec\":\"%s\"}", r->id);
  keeper_reply (fd, reply);
}

/* ------------------------------------------------------------ exec ls */

static int
cmp_seq (const void *a, const void *b)
{
  const struct detached *x = *(struct detached *const *)a, *y = *(struct detached *const *)b;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
op_execs (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)k, (void)req, (void)fds, (void)n_fds, (void)keep;
  struct detached *list[MAX_DETACHED];
  size_t n = 0;
  for (size_t i = 0; i < MAX_DETACHED; i++)
    if (recs[i].used)
      list[n++] = &recs[i];
  qsort (list, n, sizeof list[0], cmp_seq);
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return keeper_reply_error (fd, "out of memory");
  csr_jgen_map_open (&w);
  csr_jgen_str (&w, "execs");
  csr_jgen_array_open (&w);
  uint64_t now = (uint64_t)csr_mono_ms ();
  for (size_t i = 0; i < n; i++)
    {
      const struct detached *r = list[i];
      csr_jgen_map_open (&w);
      csr_jgen_kv_str (&w, "exec", r->id);
      csr_jgen_kv_str (&w, "state", r->result ? "exited" : "running");
      csr_jgen_kv_str (&w, "command", r->cmd);
      csr_jgen_kv_int (&w, "started", r->started);
      csr_jgen_kv_int (&w, "pid", r->e ? r->e->x.pid : r->pid);
      csr_jgen_kv_int (&w, "duration_ms", (long long)((r->result ? r->ended_ms : now) - r->t0_ms));
      if (r->result)
        {
          char ebuf[64];
          cleanup_yajl_val yajl_val t = yajl_tree_parse (r->result, ebuf, sizeof ebuf);
          if (t)
            {
              csr_jgen_str (&w, "result");
              csr_jgen_tree (&w, t);
            }
        }
      csr_jgen_map_close (&w);
    }
  csr_jgen_array_close (&w);
  csr_jgen_map_close (&w);
  keeper_reply_gen (fd, &w);
}

/* ------------------------------------------------------------ the part */

static void
detach_finish (struct keeper *k)
{
  for (size_t i = 0; i < MAX_DETACHED; i++)
    if (recs[i].used)
      {
        for (int j = 0; j < 2; j++)
          {
            if (recs[i].s[j].pipe >= 0)
              close (recs[i].s[j].pipe);
            if (recs[i].s[j].file >= 0)
              close (recs[i].s[j].file);
            csr_bbuf_release (&recs[i].s[j].buf);
          }
        for (size_t j = 0; j < recs[i].n_waiters; j++)
          {
            keeper_reply_error (recs[i].waiters[j], "the sandbox was removed");
            close (recs[i].waiters[j]);
          }
        free (recs[i].write_error);
        free (recs[i].result);
        memset (&recs[i], 0, sizeof recs[i]);
      }
  (void)k;
}

static const struct keeper_op detach_ops[] = {
  /* Collecting a result is activity; a long wait is not busy work. */
  { "wait", op_wait, true },
  { "execs", op_execs, false },
  { NULL, NULL, false },
};

const struct keeper_part keeper_part_detach
    = { "detach", detach_ops, NULL, NULL, NULL, detach_finish };
