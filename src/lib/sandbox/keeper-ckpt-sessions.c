/* csrun — the sessions of a checkpoint, the keeper's side (ckpt-sessions.h):
 * saves drained from pipes into files, files fed into pipes for loads, the
 * sessions' reports checked and kept for the checkpoint's JSON. */
#include "config.h"
#include "ckpt-sessions.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../jail/idmap.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "run.h"
#include "session.h"

#define DIR_NAME "ckpt-sessions"
#define CHUNK (64 * 1024)
#define PIPE_BYTES (1024 * 1024)
#define CHUNKS_PER_WAKE 16 /* then the poll loop again: other clients are served */
#define CHUNKS_AFTER_REPLY 64
#define NAME_CUT 200              /* bytes of a name from a session's report */
#define WHY_CUT 400               /* bytes of a reason */
#define REPORT_BUDGET (16 * 1024) /* bytes kept of a session's report */

struct item
{
  char name[CSR_SBX_SESSION_NAME_MAX + 1];
  int pipe;       /* save: the read end; load: the write end; -1 when closed */
  int file;       /* save: the unnamed file written; load: the file fed */
  uint64_t bytes; /* save: written to the file; load: fed to the pipe */
  uint64_t size;  /* load: the file's */
  bool pending;   /* counted in cs.pending: its call started, not done yet */
  bool replied;   /* the session answered */
  char *error;    /* why it was not saved or loaded (the first reason) */
  char *report;   /* the session's report, checked: a JSON object's text */
};

static struct
{
  bool load;
  struct item items[CSR_CKPT_MAX_SESSIONS];
  size_t n, pending;
  int event; /* an eventfd: every session is done */
  ckpt_sessions_done_fn done;
} cs = { .event = -1 };

/* ------------------------------------------------------------ items */

static void
close_pipe (struct keeper *k, struct item *it)
{
  if (it->pipe >= 0)
    {
      keeper_unwatch (k, it->pipe);
      close (it->pipe);
      it->pipe = -1;
    }
}

/* Once it answered and its pipe is closed: no longer pending; the last one
 * wakes the poll loop (DONE runs from there). */
static void
check_done (struct item *it)
{
  if (!it->pending || !it->replied || it->pipe >= 0)
    return;
  it->pending = false;
  if (--cs.pending == 0 && cs.event >= 0)
    {
      uint64_t one = 1;
      if (write (cs.event, &one, sizeof one) < 0)
        {
          /* An eventfd write fails only on overflow: it is readable then. */
        }
    }
}

/* IT is not saved or loaded, for the reason FMT (the first reason is kept);
 * its pipe closed (a session still writing gets EPIPE). */
__attribute__ ((format (printf, 3, 4))) static void
item_fail (struct keeper *k, struct item *it, const char *fmt, ...)
{
  if (it->error == NULL)
    {
      va_list ap;
      va_start (ap, fmt);
      char *why = NULL;
      if (vasprintf (&why, fmt, ap) < 0)
        why = NULL;
      va_end (ap);
      /* The session's own errors name it already. */
      size_t nl = strlen (it->name);
      bool named = why && strncmp (why, "session ", 8) == 0 && strncmp (why + 8, it->name, nl) == 0
                   && (why[8 + nl] == ':' || why[8 + nl] == ' ');
      if (why == NULL || named || asprintf (&it->error, "session %s: %s", it->name, why) < 0)
        it->error = why ? why : strdup ("out of memory");
      else
        free (why);
      /* The session's own words can be long. */
      if (it->error && strlen (it->error) > WHY_CUT)
        strcpy (it->error + WHY_CUT - 3, "...");
    }
  close_pipe (k, it);
  check_done (it);
}

static void
on_event (struct keeper *k, int fd, short revents, void *arg)
{
  (void)revents, (void)arg;
  uint64_t v;
  if (read (fd, &v, sizeof v) < 0 && errno == EAGAIN)
    return;
  keeper_unwatch (k, fd);
  if (cs.done)
    cs.done (k);
}

static void on_data (struct keeper *k, int fd, short revents, void *arg);
static void on_feed (struct keeper *k, int fd, short revents, void *arg);
static void on_saved (struct keeper *k, void *arg, yajl_val report, const csr_error *err);
static void on_loaded (struct keeper *k, void *arg, yajl_val report, const csr_error *err);

/* A pipe for IT's save (the keeper reads) or load (the keeper writes): the
 * keeper's end, non-blocking, in IT->pipe; the session's end returned, or
 * -1 (IT failed). */
static int
item_pipe (struct keeper *k, struct item *it)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return item_fail (k, it, "a pipe for its save: %s", strerror (errno)), -1;
  it->pipe = p[cs.load ? 1 : 0];
  int theirs = p[cs.load ? 0 : 1];
  /* Fewer wake-ups for a large save (the most an unprivileged pipe gets by
   * default; a smaller pipe only costs time). */
  (void)fcntl (it->pipe, F_SETPIPE_SZ, PIPE_BYTES);
  if (fcntl (it->pipe, F_SETFL, O_NONBLOCK) < 0)
    {
      close (theirs);
      return item_fail (k, it, "a pipe for its save: %s", strerror (errno)), -1;
    }
  return theirs;
}

/* Start IT's save or load with the session's end of its pipe THEIRS
 * (closed here): then it is pending, its pipe watched. */
static void
item_call (struct keeper *k, struct item *it, int theirs, int timeout_ms)
{
  csr_error *e = NULL;
  int rc = cs.load ? keeper_session_load (k, it->name, theirs, timeout_ms, on_loaded, it, &e)
                   : keeper_session_save (k, it->name, theirs, timeout_ms, on_saved, it, &e);
  close (theirs);
  if (rc < 0)
    {
      item_fail (k, it, "%s", e && e->msg ? e->msg : "out of memory");
      csr_error_free (e);
      return;
    }
  it->pending = true;
  cs.pending++;
  if (keeper_watch (k, it->pipe, cs.load ? POLLOUT : POLLIN, cs.load ? on_feed : on_data, it) < 0)
    item_fail (k, it, "the keeper watches too many descriptors");
}

/* ------------------------------------------------------------ reports */

/* A session's report, checked: what is kept of it fits REPORT_BUDGET
 * bytes (so that checkpoint.json, with 32 sessions, stays readable); the
 * names left out are counted in "omitted". */
struct checker
{
  struct csr_jgen w;
  size_t used;
  long long omitted;
};

/* S cut to MAX bytes (a sequence cut in two is repaired by the generator). */
static void
gen_cut (struct checker *c, const char *s, size_t max)
{
  char buf[WHY_CUT + 4];
  size_t n = strnlen (s, max + 1);
  c->used += (n <= max ? n : max + 3) + 8; /* and its quotes, escapes, comma: about */
  if (n <= max)
    return csr_jgen_str (&c->w, s);
  memcpy (buf, s, max);
  strcpy (buf + max, "...");
  csr_jgen_str (&c->w, buf);
}

static bool
room (struct checker *c)
{
  return c->used < REPORT_BUDGET;
}

/* KEY: the strings of the array A (others dropped), while there is room. */
static void
gen_names (struct checker *c, const char *key, yajl_val a)
{
  csr_jgen_str (&c->w, key);
  csr_jgen_array_open (&c->w);
  for (size_t i = 0; a && YAJL_IS_ARRAY (a) && i < a->u.array.len; i++)
    {
      const char *s = csr_json_str (a->u.array.values[i]);
      if (s && room (c))
        gen_cut (c, s, NAME_CUT);
      else if (s)
        c->omitted++;
    }
  csr_jgen_array_close (&c->w);
}

/* The session's report R, checked: only the lists a report has. */
static char *
check_report (yajl_val r, bool load)
{
  struct checker c = { 0 };
  if (csr_jgen_init (&c.w, false, NULL) < 0)
    return NULL;
  csr_jgen_map_open (&c.w);
  /* What was not saved or loaded first: it is the news. */
  csr_jgen_str (&c.w, "skipped");
  csr_jgen_array_open (&c.w);
  yajl_val sk = csr_json_get (r, "skipped");
  for (size_t i = 0; sk && YAJL_IS_ARRAY (sk) && i < sk->u.array.len; i++)
    {
      const char *n = csr_json_str (csr_json_get (sk->u.array.values[i], "name"));
      const char *why = csr_json_str (csr_json_get (sk->u.array.values[i], "why"));
      if (n == NULL)
        continue;
      if (!room (&c))
        {
          c.omitted++;
          continue;
        }
      csr_jgen_map_open (&c.w);
      csr_jgen_str (&c.w, "name");
      gen_cut (&c, n, NAME_CUT);
      csr_jgen_str (&c.w, "why");
      gen_cut (&c, why ? why : "?", WHY_CUT);
      csr_jgen_map_close (&c.w);
    }
  csr_jgen_array_close (&c.w);
  if (load)
    gen_names (&c, "loaded", csr_json_get (r, "loaded"));
  else
    {
      gen_names (&c, "modules", csr_json_get (r, "modules"));
      gen_names (&c, "saved", csr_json_get (r, "saved"));
    }
  /* And those the session left out of its report (it has 64 KiB). */
  yajl_val om = csr_json_get (r, "omitted");
  if (om && YAJL_IS_INTEGER (om) && YAJL_GET_INTEGER (om) > 0
      && YAJL_GET_INTEGER (om) < (1LL << 40))
    c.omitted += YAJL_GET_INTEGER (om);
  if (c.omitted)
    csr_jgen_kv_int (&c.w, "omitted", c.omitted);
  csr_jgen_map_close (&c.w);
  return csr_jgen_finish (&c.w, "a session's report", NULL, NULL);
}

char *
ckpt_sessions_json (void)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return NULL;
  csr_jgen_array_open (&w);
  for (size_t i = 0; i < cs.n; i++)
    {
      const struct item *it = &cs.items[i];
      csr_jgen_map_open (&w);
      csr_jgen_kv_str (&w, "name", it->name);
      char ebuf[64];
      cleanup_yajl_val yajl_val r
          = it->error || !it->report ? NULL : yajl_tree_parse (it->report, ebuf, sizeof ebuf);
      if (r == NULL)
        {
          csr_jgen_str (&w, "error");
          csr_jgen_str (&w, it->error ? it->error : "no report");
        }
      else
        {
          if (!cs.load)
            csr_jgen_kv_int (&w, "bytes", (long long)it->bytes);
          for (size_t j = 0; j < r->u.object.len; j++)
            {
              csr_jgen_str (&w, r->u.object.keys[j]);
              csr_jgen_tree (&w, r->u.object.values[j]);
            }
        }
      csr_jgen_map_close (&w);
    }
  csr_jgen_array_close (&w);
  return csr_jgen_finish (&w, "the sessions", NULL, NULL);
}

/* ------------------------------------------------------------ set-up */

static void
reset (struct keeper *k, bool load, ckpt_sessions_done_fn done)
{
  ckpt_sessions_release (k);
  cs.load = load;
  cs.done = done;
}

static struct item *
new_item (const char *name)
{
  struct item *it = &cs.items[cs.n++];
  memset (it, 0, sizeof *it);
  snprintf (it->name, sizeof it->name, "%s", name);
  it->pipe = it->file = -1;
  return it;
}

/* The event that ends the wait, once something is pending. */
static int
arm_event (struct keeper *k, csr_error **err)
{
  cs.event = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (cs.event < 0)
    return csr_error_errno (err, "eventfd");
  if (keeper_watch (k, cs.event, POLLIN, on_event, NULL) < 0)
    return csr_error_set (err, EMFILE, "the keeper watches too many descriptors");
  return 0;
}

/* ------------------------------------------------------------ save */

/* Read what the pipe holds: CHUNKS at most (then the poll loop again),
 * until its end (the session closed it: done), or until it is empty; after
 * the session answered (FINAL) an empty pipe still open means someone in
 * the sandbox kept it. */
static void
drain (struct keeper *k, struct item *it, int chunks, bool final)
{
  static char buf[CHUNK];
  for (int i = 0; i < chunks && it->pipe >= 0; i++)
    {
      ssize_t r = read (it->pipe, buf, sizeof buf);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && errno == EAGAIN)
        {
          if (final)
            item_fail (k, it, "its save was kept open after the session answered");
          return;
        }
      if (r < 0)
        return item_fail (k, it, "read its save: %s", strerror (errno));
      if (r == 0)
        {
          close_pipe (k, it);
          return check_done (it);
        }
      if (it->bytes + (uint64_t)r > CSR_CKPT_SESSION_MAX)
        return item_fail (k, it, "its save is larger than %llu bytes",
                          (unsigned long long)CSR_CKPT_SESSION_MAX);
      csr_error *e = NULL;
      if (csr_write_all (it->file, buf, (size_t)r, &e) < 0)
        {
          item_fail (k, it, "write its save: %s", csr_error_text (e));
          csr_error_free (e);
          return;
        }
      it->bytes += (uint64_t)r;
    }
  if (final && it->pipe >= 0)
    item_fail (k, it, "its save did not end after the session answered");
}

static void
on_data (struct keeper *k, int fd, short revents, void *arg)
{
  (void)fd, (void)revents;
  drain (k, arg, CHUNKS_PER_WAKE, false);
}

static void
on_saved (struct keeper *k, void *arg, yajl_val report, const csr_error *err)
{
  struct item *it = arg;
  it->replied = true;
  if (report == NULL)
    return item_fail (k, it, "%s", err && err->msg ? err->msg : "out of memory");
  if (it->error == NULL && (it->report = check_report (report, false)) == NULL)
    return item_fail (k, it, "out of memory");
  /* The session closed its end before it answered: the rest of its save
   * is in the pipe. */
  if (it->pipe >= 0)
    drain (k, it, CHUNKS_AFTER_REPLY, true);
  check_done (it);
}

/* Start the save of session IT->name into a new unnamed file of DIRFD. */
static void
save_one (struct keeper *k, struct item *it, int dirfd, int timeout_ms)
{
  char leaf[16 + CSR_SBX_SESSION_NAME_MAX];
  snprintf (leaf, sizeof leaf, ".session-%s", it->name);
  it->file = openat (dirfd, leaf, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (it->file < 0 || unlinkat (dirfd, leaf, 0) < 0)
    return item_fail (k, it, "a file for its save: %s", strerror (errno));
  int theirs = item_pipe (k, it);
  if (theirs >= 0)
    item_call (k, it, theirs, timeout_ms);
}

int
ckpt_sessions_save (struct keeper *k, int dirfd, int timeout_ms, ckpt_sessions_done_fn done,
                    csr_error **err)
{
  reset (k, false, done);
  if (!k->running)
    return 0;
  const char *names[CSR_CKPT_MAX_SESSIONS];
  size_t n = keeper_session_names (k, names, CSR_CKPT_MAX_SESSIONS);
  if (n == 0)
    return 0;
  if (arm_event (k, err) < 0)
    return -1;
  /* The names first: a session that ends meanwhile frees its slot. */
  for (size_t i = 0; i < n; i++)
    new_item (names[i]);
  for (size_t i = 0; i < cs.n; i++)
    save_one (k, &cs.items[i], dirfd, timeout_ms);
  return (int)cs.pending;
}

size_t
ckpt_sessions_files (struct csr_ckpt_session_file *files, size_t max)
{
  size_t n = 0;
  for (size_t i = 0; i < cs.n && n < max; i++)
    if (cs.items[i].error == NULL && cs.items[i].report && cs.items[i].file >= 0)
      files[n++] = (struct csr_ckpt_session_file){ cs.items[i].name, cs.items[i].file };
  return n;
}

/* ------------------------------------------------------------ restore */

int
ckpt_sessions_dir (struct keeper *k, bool create, csr_error **err)
{
  int d = k->b->dirfd;
  if (create)
    {
      ckpt_sessions_dir_remove (k);
      if (mkdirat (d, DIR_NAME, 0700) < 0)
        return csr_error_errno (err, "mkdir %s", DIR_NAME);
    }
  int fd = openat (d, DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "open %s", DIR_NAME);
  /* The unpack worker is the sandbox's root (as host root: an unprivileged
   * id), as for the layer. */
  if (create && geteuid () == 0
      && fchown (fd, k->sn.jail.uid_map[0].outside, k->sn.jail.gid_map[0].outside) < 0)
    {
      int saved = errno;
      close (fd);
      errno = saved;
      return csr_error_errno (err, "chown %s", DIR_NAME);
    }
  return fd;
}

void
ckpt_sessions_dir_remove (struct keeper *k)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d/" DIR_NAME, k->b->dirfd);
  csr_error *e = NULL;
  if (csr_rm_rf (path, &e) < 0 && e->status != ENOENT)
    fprintf (stderr, "csrun sandbox %s: %s\n", k->spec->id, csr_error_text (e));
  csr_error_free (e);
}

/* Feed the file to the pipe: CHUNKS_PER_WAKE at most; at its end the pipe
 * is closed (the session's end of the save). */
static void
on_feed (struct keeper *k, int fd, short revents, void *arg)
{
  (void)fd, (void)revents;
  struct item *it = arg;
  static char buf[CHUNK];
  for (int i = 0; i < CHUNKS_PER_WAKE && it->pipe >= 0; i++)
    {
      if (it->bytes >= it->size)
        return close_pipe (k, it); /* not done before its answer */
      size_t want = it->size - it->bytes < CHUNK ? (size_t)(it->size - it->bytes) : CHUNK;
      ssize_t r = pread (it->file, buf, want, (off_t)it->bytes);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return item_fail (k, it, "read its save: %s", r < 0 ? strerror (errno) : "it shrank");
      ssize_t w = write (it->pipe, buf, (size_t)r);
      if (w < 0 && (errno == EINTR || errno == EAGAIN))
        return;
      if (w < 0)
        return close_pipe (k, it); /* it stopped reading (EPIPE): its answer says why */
      it->bytes += (uint64_t)w;
    }
}

static void
on_loaded (struct keeper *k, void *arg, yajl_val report, const csr_error *err)
{
  struct item *it = arg;
  it->replied = true;
  if (report == NULL)
    return item_fail (k, it, "%s", err && err->msg ? err->msg : "out of memory");
  if ((it->report = check_report (report, true)) == NULL)
    return item_fail (k, it, "out of memory");
  close_pipe (k, it);
  check_done (it);
}

/* Start the load of the file LEAF of DIRFD into a new session LEAF. */
static void
load_one (struct keeper *k, struct item *it, int dirfd, int timeout_ms)
{
  struct stat st;
  it->file = openat (dirfd, it->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (it->file < 0 || fstat (it->file, &st) < 0)
    return item_fail (k, it, "open its save: %s", strerror (errno));
  (void)unlinkat (dirfd, it->name, 0);
  if (!S_ISREG (st.st_mode) || (uint64_t)st.st_size > CSR_CKPT_SESSION_MAX)
    return item_fail (k, it, "its save is not a file of at most %llu bytes",
                      (unsigned long long)CSR_CKPT_SESSION_MAX);
  it->size = (uint64_t)st.st_size;
  int theirs = item_pipe (k, it);
  if (theirs >= 0)
    item_call (k, it, theirs, timeout_ms);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

int
ckpt_sessions_load (struct keeper *k, int dirfd, int timeout_ms, ckpt_sessions_done_fn done,
                    csr_error **err)
{
  reset (k, true, done);
  DIR *d = csr_fdopendir_or_close (fcntl (dirfd, F_DUPFD_CLOEXEC, 3));
  if (d == NULL)
    return csr_error_errno (err, "read %s", DIR_NAME);
  char *names[CSR_CKPT_MAX_SESSIONS];
  size_t n = 0;
  struct dirent *de;
  /* The unpack worker wrote only session names, at most that many. */
  while ((de = readdir (d)) != NULL && n < CSR_CKPT_MAX_SESSIONS)
    if (csr_sbx_session_name_ok (de->d_name) && (names[n] = strdup (de->d_name)) != NULL)
      n++;
  closedir (d);
  if (n == 0)
    return 0;
  qsort (names, n, sizeof *names, cmp_str);
  int rc = arm_event (k, err);
  for (size_t i = 0; i < n; i++)
    {
      if (rc == 0)
        new_item (names[i]);
      free (names[i]);
    }
  if (rc < 0)
    return -1;
  for (size_t i = 0; i < cs.n; i++)
    load_one (k, &cs.items[i], dirfd, timeout_ms);
  return (int)cs.pending;
}

/* ------------------------------------------------------------ the end */

void
ckpt_sessions_release (struct keeper *k)
{
  for (size_t i = 0; i < cs.n; i++)
    {
      struct item *it = &cs.items[i];
      keeper_session_forget (k, it);
      close_pipe (k, it);
      if (it->file >= 0)
        close (it->file);
      free (it->error);
      free (it->report);
      memset (it, 0, sizeof *it);
      it->pipe = it->file = -1;
    }
  if (cs.event >= 0)
    {
      keeper_unwatch (k, cs.event);
      close (cs.event);
    }
  cs.event = -1;
  cs.n = cs.pending = 0;
  cs.done = NULL;
}
