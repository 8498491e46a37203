/* csrun — the checkpoint part of a sandbox's keeper (keeper.h,
 * checkpoint.h): the "checkpoint" and "restore" requests, and the
 * checkpoint taken before an idle sandbox is removed (--idle-action
 * checkpoint).
 *
 * The layer is packed and unpacked by a forked worker whose end the keeper
 * watches (keeper_watch), so that its other clients (ls, inspect) are
 * answered meanwhile; requests that would change the sandbox are refused
 * until it is done (k->busy_with), and it does not count as idle
 * (k->n_busy).  The worker is in a user namespace with the sandbox's id
 * maps: the running sandbox's own (csr_sbx_fork_in), else a new one with
 * the same maps (jail/userns.h), so that it reads and writes owners as the
 * sandbox sees them and has the sandbox root's rights over the layer, which
 * rootless the keeper lacks (a file of mode 0 is unreadable outside).
 *
 * A checkpoint of a running sandbox keeps its processes still while the
 * layer is read (quiesce.h: its cgroup frozen, else SIGSTOP); afterwards
 * they go on (--leave-running) or the sandbox is stopped (the default, as
 * a CRIU checkpoint without --leave-running: what runs after the checkpoint
 * is not in it).  A failed checkpoint leaves the sandbox as it was.
 *
 * Sessions (ckpt-sessions.h): their picklable globals go into the
 * archive's sessions/ (checkpoint.h).  Before the sandbox is made still (a
 * session must run to pickle its globals), each session saves into an
 * unnamed file of the checkpoint's temporary directory, which the worker
 * then packs after the layer (start_checkpoint, then pack_checkpoint once
 * they are done); on restore, the worker writes them into a directory of
 * the state directory, and after the jail started again (restore_done)
 * each is loaded into a new session before the reply (restore_reply).
 * Neither waits in the keeper. */
#include "config.h"
#include "keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../jail/userns.h"
#include "../rootfs/rootfs.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "../util/syscalls.h"
#include "checkpoint.h"
#include "ckpt-sessions.h"
#include "quiesce.h"
#include "session.h"

#define RESULT_MAX (1 << 20)
#define SESSION_TIMEOUT_MS (120 * 1000) /* default of a session's save or load */

enum job_kind
{
  JOB_NONE,
  JOB_CHECKPOINT,
  JOB_RESTORE,
};

/* The one checkpoint or restore in progress. */
static struct
{
  enum job_kind kind;
  pid_t worker;
  int result_fd; /* the worker's report (one JSON line), read until its end */
  char *result;
  size_t len;
  int client; /* the connection to answer; -1: none (idle) */
  int upper_fd;
  /* checkpoint */
  int ckfd;
  struct csr_ckpt_writer w;
  struct csr_quiesce q;
  bool leave_running, was_running;
  int64_t ttl_s;
  char trigger[16];
  int session_timeout_ms; /* each session's save or load */
  bool idle;              /* --idle-action checkpoint of the running sandbox (ckpt_idle) */
  /* restore */
  int archive_fd;
  int sessdir;              /* where the worker writes the sessions' saves */
  struct csr_ckpt_stats st; /* the worker's, while the sessions load */
} job = { .kind = JOB_NONE,
          .result_fd = -1,
          .client = -1,
          .upper_fd = -1,
          .ckfd = -1,
          .archive_fd = -1,
          .sessdir = -1 };

/* The checkpoint directory for --idle-action checkpoint, opened at set-up
 * (the keeper's environment is cleared afterwards). */
static int idle_ckfd = -1;
/* The idle sandbox was checkpointed while it ran (ckpt_idle): its removal
 * takes no other. */
static bool idle_done;

/* What the worker needs (it is a fork: pointers into the keeper are fine). */
struct worker_args
{
  int upper_fd;     /* O_PATH */
  int archive_fd;   /* written (pack) or read (unpack) */
  int result_fd;    /* write end */
  const char *spec; /* pack: spec.json */
  struct csr_ckpt_session_file sessions[CSR_CKPT_MAX_SESSIONS]; /* pack: the saves */
  size_t n_sessions;
  int sessdir; /* unpack: where sessions/NAME go */
};

/* An error reply: the message (without the errno's text: the client adds
 * it once), the errno, and its kind (for the client's exit code). */
static void
reply_kind (int fd, const char *kind, const char *msg, int status)
{
  struct csr_jgen w;
  if (fd < 0 || csr_jgen_init (&w, false, NULL) < 0)
    return;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "error", msg);
  csr_jgen_kv_int (&w, "status", status);
  csr_jgen_kv_str (&w, "kind", kind);
  csr_jgen_map_close (&w);
  char *s = csr_jgen_finish (&w, "reply", NULL, NULL);
  if (s)
    keeper_reply (fd, s);
  free (s);
}

static const char *
kind_of (int status)
{
  return status == CSR_CKPT_E_DAMAGED  ? "damaged"
         : status == CSR_CKPT_E_ROOTFS ? "rootfs"
         : status == ENOSPC            ? "nospace"
                                       : "failed";
}

static void
reply_err (int fd, const csr_error *e)
{
  reply_kind (fd, kind_of (e ? e->status : ENOMEM), e && e->msg ? e->msg : "out of memory",
              e ? e->status : ENOMEM);
}

/* ------------------------------------------------------------ the worker */

/* Its report: {"ok":true, stats...} or {"error":..., "status":N}. */
static int
worker_report (int fd, int rc, const struct csr_ckpt_stats *st, csr_error *e)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return 125;
  csr_jgen_map_open (&w);
  if (rc < 0)
    {
      csr_jgen_kv_str (&w, "error", e && e->msg ? e->msg : "out of memory");
      csr_jgen_kv_int (&w, "status", e ? e->status : ENOMEM);
    }
  else
    {
      csr_jgen_str (&w, "ok");
      csr_jgen_bool (&w, true);
      csr_ckpt_stats_gen (&w, st);
    }
  csr_jgen_map_close (&w);
  size_t len;
  cleanup_free char *s = csr_jgen_finish (&w, "report", &len, NULL);
  if (s == NULL || csr_write_all (fd, s, len, NULL) < 0)
    return 125;
  return rc < 0 ? 1 : 0;
}

/* In the worker: nothing of the keeper's but A's descriptors (and 0-2). */
static void
keep_only (const struct worker_args *a)
{
  int keep[4 + CSR_CKPT_MAX_SESSIONS] = { a->upper_fd, a->archive_fd, a->result_fd, a->sessdir };
  size_t n = 4;
  for (size_t i = 0; i < a->n_sessions; i++)
    keep[n++] = a->sessions[i].fd;
  csr_close_all_but (keep, n);
}

static int
reopen_upper (int opath, csr_error **err)
{
  int fd = openat (opath, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "open the layer");
  return fd;
}

static int
pack_worker (void *arg)
{
  struct worker_args *a = arg;
  struct csr_ckpt_stats st = { 0 };
  csr_error *e = NULL;
  keep_only (a);
  int up = reopen_upper (a->upper_fd, &e);
  int rc = up < 0 ? -1
                  : csr_ckpt_pack (up, a->archive_fd, a->spec, a->sessions, a->n_sessions, &st, &e);
  return worker_report (a->result_fd, rc, &st, e);
}

static int
unpack_worker (void *arg)
{
  struct worker_args *a = arg;
  struct csr_ckpt_stats st = { 0 };
  csr_error *e = NULL;
  umask (0);
  keep_only (a);
  int up = reopen_upper (a->upper_fd, &e);
  int rc = up < 0 ? -1 : csr_ckpt_unpack (a->archive_fd, up, a->sessdir, &st, &e);
  return worker_report (a->result_fd, rc, &st, e);
}

/* Fork FN in the sandbox's user namespace (the running jail's, else a new
 * one with its maps); *RESULT_FD the read end of its report. */
static pid_t
spawn_worker (struct keeper *k, int (*fn) (void *), struct worker_args *a, int *result_fd,
              csr_error **err)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe");
  a->result_fd = p[1];
  pid_t pid;
  if (k->running && k->ns_fds[0] >= 0)
    {
      struct csr_sbx_target t;
      keeper_target (k, &t);
      pid = csr_sbx_fork_in (&t, CSR_SBX_NS_USER, fn, a, err);
    }
  else
    pid = csr_userns_fork (&k->sn.jail, fn, a, err);
  close (p[1]);
  if (pid < 0)
    {
      close (p[0]);
      return -1;
    }
  *result_fd = p[0];
  return pid;
}

/* The report once the worker ended: 0 with *ST filled, or -1 with its
 * error (or how it died). */
static int
parse_report (const char *text, int status, struct csr_ckpt_stats *st, csr_error **err)
{
  char ebuf[128];
  cleanup_yajl_val yajl_val t = text ? yajl_tree_parse (text, ebuf, sizeof ebuf) : NULL;
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  if (msg)
    {
      return csr_error_set (err, (int)csr_json_int (t, "status", 0), "%s", msg);
    }
  if (t == NULL || !YAJL_IS_TRUE (csr_json_get (t, "ok")) || !WIFEXITED (status)
      || WEXITSTATUS (status) != 0)
    return csr_error_set (err, 0, "the checkpoint's worker failed (%s %d)",
                          WIFSIGNALED (status) ? "signal" : "status",
                          WIFSIGNALED (status) ? WTERMSIG (status) : WEXITSTATUS (status));
  csr_ckpt_stats_read (t, st);
  return 0;
}

/* Wait for the worker (it has closed its report or died). */
static int
reap_worker (void)
{
  int st = 0;
  if (job.worker > 0)
    while (waitpid (job.worker, &st, 0) < 0 && errno == EINTR)
      ;
  job.worker = 0;
  return st;
}

/* ------------------------------------------------------------ the job's end */

static void
job_clear (struct keeper *k)
{
  if (job.result_fd >= 0)
    {
      keeper_unwatch (k, job.result_fd);
      close (job.result_fd);
    }
  if (job.upper_fd >= 0)
    close (job.upper_fd);
  if (job.ckfd >= 0)
    close (job.ckfd);
  if (job.archive_fd >= 0)
    close (job.archive_fd);
  if (job.client >= 0)
    {
      keeper_unwatch (k, job.client);
      close (job.client);
    }
  ckpt_sessions_release (k);
  if (job.sessdir >= 0)
    {
      close (job.sessdir);
      ckpt_sessions_dir_remove (k);
    }
  csr_ckpt_stats_release (&job.st);
  free (job.result);
  job.result = NULL;
  job.len = 0;
  job.result_fd = job.upper_fd = job.ckfd = job.archive_fd = job.client = job.sessdir = -1;
  job.idle = false;
  if (job.kind != JOB_NONE)
    {
      k->n_busy--;
      k->busy_with = NULL;
      k->last_activity_ms = csr_mono_ms ();
    }
  job.kind = JOB_NONE;
}

/* A job cut short (the sandbox is stopped or removed under it). */
static void
job_abort (struct keeper *k, const char *why)
{
  if (job.kind == JOB_NONE)
    return;
  if (job.worker > 0)
    kill (job.worker, SIGKILL);
  reap_worker ();
  csr_error *e = NULL;
  if (csr_quiesce_release (&job.q, &e) < 0)
    {
      fprintf (stderr, "csrun sandbox %s: %s\n", k->spec->id, csr_error_text (e));
      csr_error_free (e);
    }
  if (job.kind == JOB_CHECKPOINT)
    csr_ckpt_writer_abort (&job.w);
  if (why)
    reply_kind (job.client, "failed", why, 0);
  job_clear (k);
}

static char *
checkpoint_reply (const struct csr_ckpt_info *info, bool stopped, csr_error *thaw)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_ckpt_info_gen (&w, info);
  csr_jgen_kv_str (&w, "quiesced", job.was_running ? job.q.method : "none");
  csr_jgen_str (&w, "stopped");
  csr_jgen_bool (&w, stopped);
  if (thaw)
    csr_jgen_kv_str (&w, "warning", csr_error_text (thaw));
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "reply", NULL, NULL);
}

static void
checkpoint_done (struct keeper *k, int status)
{
  bool idle = job.idle;
  struct csr_ckpt_info info = { 0 };
  csr_error *e = NULL, *thaw = NULL;
  int rc = parse_report (job.result, status, &info.stats, &e);
  const char *method = job.q.method;
  csr_quiesce_release (&job.q, &thaw);
  job.q.method = method;
  if (rc == 0)
    {
      snprintf (info.id, sizeof info.id, "%s", job.w.id);
      snprintf (info.sandbox_id, sizeof info.sandbox_id, "%s", k->spec->id);
      info.sandbox_name = k->spec->name;
      struct timespec now;
      clock_gettime (CLOCK_REALTIME, &now);
      info.created = (int64_t)now.tv_sec;
      /* Whole seconds, rounded up: never sooner than --ttl. */
      info.expires = job.ttl_s > 0 ? info.created + job.ttl_s + (now.tv_nsec > 0) : 0;
      snprintf (info.trigger, sizeof info.trigger, "%s", job.trigger);
      info.rootfs_source = k->rootfs->source;
      info.rootfs_sha256 = k->rootfs->sha256;
      info.sessions = ckpt_sessions_json ();
      rc = info.sessions ? csr_ckpt_writer_commit (&job.w, &info, &e)
                         : csr_error_set (&e, ENOMEM, "the sessions' report");
    }
  int client = job.client;
  job.client = -1;
  /* Without --leave-running, stopped: nothing after the checkpoint is in it. */
  bool stop = rc == 0 && job.was_running && !job.leave_running;
  char *reply = NULL;
  if (rc < 0)
    {
      csr_ckpt_writer_abort (&job.w);
      reply_err (client, e);
      fprintf (stderr, "csrun sandbox %s: checkpoint failed: %s\n", k->spec->id,
               csr_error_text (e));
      csr_error_free (e);
    }
  else
    {
      fprintf (stderr,
               "csrun sandbox %s: checkpoint %s (%s): %llu files, %llu bytes, archive "
               "%llu bytes\n",
               k->spec->id, info.id, job.trigger, (unsigned long long)info.stats.files,
               (unsigned long long)info.stats.bytes, (unsigned long long)info.stats.archive_bytes);
      reply = checkpoint_reply (&info, stop || !job.was_running, thaw);
    }
  info.sandbox_name = info.rootfs_source = info.rootfs_sha256 = NULL;
  csr_ckpt_info_release (&info);
  csr_error_free (thaw);
  job_clear (k);
  if (stop)
    keeper_stop (k);
  if (reply && client >= 0)
    keeper_reply (client, reply);
  free (reply);
  if (client >= 0)
    close (client);
  if (idle)
    {
      idle_done = rc == 0;
      keeper_finish (k, "idle timeout");
    }
}

/* The restore's reply: the worker's counts, and the sessions loaded. */
static void
restore_reply (struct keeper *k, int rc, csr_error *e)
{
  if (rc < 0)
    reply_err (job.client, e);
  else if (job.client >= 0)
    {
      struct csr_jgen w;
      cleanup_free char *sessions = ckpt_sessions_json ();
      char ebuf[64];
      cleanup_yajl_val yajl_val ss
          = sessions ? yajl_tree_parse (sessions, ebuf, sizeof ebuf) : NULL;
      if (csr_jgen_init (&w, false, NULL) == 0)
        {
          csr_jgen_map_open (&w);
          csr_jgen_str (&w, "ok");
          csr_jgen_bool (&w, true);
          csr_ckpt_stats_gen (&w, &job.st);
          csr_jgen_str (&w, "sessions");
          if (ss)
            csr_jgen_tree (&w, ss);
          else
            {
              csr_jgen_array_open (&w);
              csr_jgen_array_close (&w);
            }
          csr_jgen_map_close (&w);
          char *s = csr_jgen_finish (&w, "reply", NULL, NULL);
          if (s)
            keeper_reply (job.client, s);
          free (s);
        }
    }
  csr_error_free (e);
  job_clear (k);
}

static void
sessions_loaded (struct keeper *k)
{
  if (job.kind == JOB_RESTORE)
    restore_reply (k, 0, NULL);
}

static void
restore_done (struct keeper *k, int status)
{
  csr_error *e = NULL;
  int rc = parse_report (job.result, status, &job.st, &e);
  if (rc == 0 && keeper_start (k, &e) < 0)
    rc = csr_error_wrap (&e, "start the restored sandbox");
  /* Each sessions/NAME the worker wrote goes into a new session of that
   * name, before the reply says the sandbox is ready. */
  int n = 0;
  if (rc == 0
      && (n = ckpt_sessions_load (k, job.sessdir, job.session_timeout_ms, sessions_loaded, &e)) < 0)
    rc = csr_error_wrap (&e, "load the sessions");
  if (rc == 0 && n > 0)
    return; /* sessions_loaded */
  restore_reply (k, rc, e);
}

/* The worker's report is readable (or it ended). */
static void
on_report (struct keeper *k, int fd, short revents, void *arg)
{
  (void)arg, (void)revents;
  char buf[8192];
  ssize_t r = read (fd, buf, sizeof buf);
  if (r < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (r > 0 && job.len + (size_t)r <= RESULT_MAX)
    {
      char *nb = realloc (job.result, job.len + (size_t)r + 1);
      if (nb)
        {
          memcpy (nb + job.len, buf, (size_t)r);
          job.len += (size_t)r;
          nb[job.len] = '\0';
          job.result = nb;
        }
      return;
    }
  if (r > 0)
    return;
  /* End of the report: the worker is done. */
  keeper_unwatch (k, fd);
  close (fd);
  job.result_fd = -1;
  int status = reap_worker ();
  if (job.kind == JOB_CHECKPOINT)
    checkpoint_done (k, status);
  else
    restore_done (k, status);
}

/* The client went away (its command interrupted or killed): a checkpoint
 * is abandoned (nothing left, the sandbox as it was); the sandbox made for
 * a restore goes too (its command would have removed it on any failure). */
static void
on_client_gone (struct keeper *k, int fd, short revents, void *arg)
{
  (void)fd, (void)revents, (void)arg;
  enum job_kind kind = job.kind;
  job_abort (k, NULL);
  if (kind == JOB_RESTORE)
    keeper_finish (k, "the restore's command went away");
}

/* ------------------------------------------------------------ requests */

static int
begin_job (struct keeper *k, enum job_kind kind, int client, csr_error **err)
{
  job.kind = kind;
  job.client = client;
  job.worker = 0;
  job.session_timeout_ms = SESSION_TIMEOUT_MS;
  job.w = (struct csr_ckpt_writer){ .ckfd = -1, .tmpfd = -1, .lockfd = -1, .archive_fd = -1 };
  job.q = (struct csr_quiesce){ .method = "none" };
  k->n_busy++;
  k->busy_with = kind == JOB_CHECKPOINT ? "a checkpoint" : "a restore";
  /* issue 15, --disk: the keeper's way to the layer (through the tmpfs). */
  job.upper_fd = open (k->upper_keeper, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (job.upper_fd < 0)
    return csr_error_errno (err, "open the layer %s", k->upper);
  return 0;
}

/* The spec.json of a checkpoint of K. */
static char *
spec_of (struct keeper *k, csr_error **err)
{
  struct csr_ckpt_spec c = { .s = *k->spec, .rootfs_sha256 = k->rootfs->sha256 };
  c.s.rootfs = k->rootfs->source;
  c.s.rootfs_dir = k->rootfs->dir;
  return csr_ckpt_spec_json (&c, err);
}

/* The rest of a checkpoint once its sessions have saved: the sandbox kept
 * still, the worker packs. */
static int
pack_checkpoint (struct keeper *k, csr_error **err)
{
  cleanup_free char *spec = spec_of (k, err);
  if (spec == NULL)
    return -1;
  if (k->running && csr_quiesce (k->cg, k->jail.pid, &job.q, err) < 0)
    return -1;
  struct worker_args a
      = { .upper_fd = job.upper_fd, .archive_fd = job.w.archive_fd, .spec = spec, .sessdir = -1 };
  a.n_sessions = ckpt_sessions_files (a.sessions, CSR_CKPT_MAX_SESSIONS);
  pid_t pid = spawn_worker (k, pack_worker, &a, &job.result_fd, err);
  if (pid < 0)
    return -1;
  job.worker = pid;
  if ((job.client >= 0 || job.idle) && keeper_watch (k, job.result_fd, POLLIN, on_report, NULL) < 0)
    return csr_error_errno (err, "watch the checkpoint");
  return 0;
}

static void
sessions_saved (struct keeper *k)
{
  csr_error *e = NULL;
  if (job.kind != JOB_CHECKPOINT || pack_checkpoint (k, &e) == 0)
    return;
  bool idle = job.idle;
  reply_err (job.client, e);
  fprintf (stderr, "csrun sandbox %s: checkpoint failed: %s\n", k->spec->id, csr_error_text (e));
  csr_error_free (e);
  job_abort (k, NULL);
  if (idle)
    keeper_finish (k, "idle timeout");
}

/* Start a checkpoint into the checkpoint directory CKFD (taken): the
 * sessions save first (sessions_saved), then pack_checkpoint. */
static int
start_checkpoint (struct keeper *k, int ckfd, bool leave_running, int64_t ttl_s,
                  const char *trigger, csr_error **err)
{
  job.ckfd = ckfd;
  job.leave_running = leave_running;
  job.ttl_s = ttl_s;
  snprintf (job.trigger, sizeof job.trigger, "%s", trigger);
  job.was_running = k->running;
  if (csr_ckpt_writer_open (ckfd, &job.w, err) < 0)
    return -1;
  if (job.client >= 0 && keeper_watch (k, job.client, POLLRDHUP, on_client_gone, NULL) < 0)
    return csr_error_errno (err, "watch the checkpoint");
  /* While the sandbox runs: a session must run to pickle its globals. */
  int n = ckpt_sessions_save (k, job.w.tmpfd, job.session_timeout_ms, sessions_saved, err);
  if (n < 0)
    return -1;
  return n > 0 ? 0 : pack_checkpoint (k, err);
}

/* A request that failed to start: its error to FD, the job undone. */
static void
start_failed (struct keeper *k, int fd, csr_error *e)
{
  keeper_unwatch (k, fd);
  job.client = -1;
  reply_err (fd, e);
  csr_error_free (e);
  job_abort (k, NULL);
}

/* The request's session_timeout_ms, else the default. */
static int
session_timeout (yajl_val req)
{
  yajl_val t = csr_json_get (req, "session_timeout_ms");
  return t && YAJL_IS_INTEGER (t) && YAJL_GET_INTEGER (t) > 0 && YAJL_GET_INTEGER (t) <= INT32_MAX
             ? (int)YAJL_GET_INTEGER (t)
             : SESSION_TIMEOUT_MS;
}

static void
op_checkpoint (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  struct stat st;
  if (n_fds != 1 || fstat (fds[0], &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid ()
      || (st.st_mode & 022))
    return keeper_reply_error (fd, "checkpoint: expected the checkpoint directory");
  long long ttl_ms = csr_json_int (req, "ttl_ms", 0);
  bool leave = YAJL_IS_TRUE (csr_json_get (req, "leave_running"));
  csr_error *e = NULL;
  int ckfd = fds[0];
  fds[0] = -1;
  if (begin_job (k, JOB_CHECKPOINT, fd, &e) < 0)
    {
      close (ckfd);
      return start_failed (k, fd, e);
    }
  job.session_timeout_ms = session_timeout (req);
  if (start_checkpoint (k, ckfd, leave, ttl_ms > 0 ? (ttl_ms + 999) / 1000 : 0, "command", &e) < 0)
    return start_failed (k, fd, e);
  *keep = true;
}

static void
op_restore (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  struct stat st;
  if (n_fds != 1 || fstat (fds[0], &st) < 0 || !S_ISREG (st.st_mode))
    return keeper_reply_error (fd, "restore: expected the checkpoint's archive");
  const char *want = csr_json_str (csr_json_get (req, "rootfs_sha256"));
  const char *have = k->rootfs->sha256;
  if (want && (have == NULL || strcmp (want, have) != 0))
    return reply_kind (fd, "rootfs",
                       have ? "the checkpoint was made on another rootfs (its digest differs)"
                            : "the checkpoint was made on a rootfs tarball, this is a directory",
                       CSR_CKPT_E_ROOTFS);
  /* The layer is filled while nothing has it mounted. */
  keeper_stop (k);
  csr_error *e = NULL;
  if (begin_job (k, JOB_RESTORE, fd, &e) < 0)
    return start_failed (k, fd, e);
  job.session_timeout_ms = session_timeout (req);
  job.archive_fd = fds[0];
  fds[0] = -1;
  if ((job.sessdir = ckpt_sessions_dir (k, true, &e)) < 0)
    return start_failed (k, fd, e);
  struct worker_args a
      = { .upper_fd = job.upper_fd, .archive_fd = job.archive_fd, .sessdir = job.sessdir };
  pid_t pid = spawn_worker (k, unpack_worker, &a, &job.result_fd, &e);
  if (pid < 0)
    return start_failed (k, fd, e);
  job.worker = pid;
  if (keeper_watch (k, job.result_fd, POLLIN, on_report, NULL) < 0
      || keeper_watch (k, fd, POLLRDHUP, on_client_gone, NULL) < 0)
    {
      csr_error_errno (&e, "watch the restore");
      return start_failed (k, fd, e);
    }
  *keep = true;
}

/* ------------------------------------------------------------ hooks */

static bool ckpt_idle (struct keeper *k);

static int
ckpt_init (struct keeper *k, csr_error **err)
{
  if (!k->spec->idle_checkpoint)
    return 0;
  idle_ckfd = csr_ckpt_root (true, NULL, err);
  if (idle_ckfd < 0)
    return csr_error_wrap (err, "--idle-action checkpoint");
  k->on_idle = ckpt_idle;
  return 0;
}

static void
ckpt_stopping (struct keeper *k)
{
  job_abort (k, "the sandbox was stopped during the checkpoint");
}

/* The checkpoint of the idle sandbox started (trigger idle; while it runs,
 * the keeper finishes when it is done: checkpoint_done); -1 with *ERR (the
 * caller undoes the job). */
static int
start_idle_checkpoint (struct keeper *k, csr_error **err)
{
  int ckfd = fcntl (idle_ckfd, F_DUPFD_CLOEXEC, 3);
  if (ckfd < 0)
    return csr_error_errno (err, "dup");
  if (begin_job (k, JOB_CHECKPOINT, -1, err) < 0)
    {
      close (ckfd);
      return -1;
    }
  job.idle = k->running;
  return start_checkpoint (k, ckfd, false, 0, "idle", err);
}

/* Before an idle sandbox is removed: its checkpoint, taken here and waited
 * for (the jail is already stopped: nothing writes the layer). */
static void
idle_checkpoint (struct keeper *k)
{
  csr_error *e = NULL;
  if (start_idle_checkpoint (k, &e) == 0)
    {
      while (job.kind != JOB_NONE)
        {
          struct pollfd p = { job.result_fd, POLLIN, 0 };
          if (poll (&p, 1, -1) < 0 && errno != EINTR)
            {
              csr_error_errno (&e, "poll");
              break;
            }
          on_report (k, job.result_fd, p.revents, NULL);
        }
      if (job.kind == JOB_NONE)
        return;
    }
  fprintf (stderr, "csrun sandbox %s: idle: checkpoint failed: %s\n", k->spec->id,
           e ? csr_error_text (e) : "?");
  csr_error_free (e);
  job_abort (k, NULL);
}

static void
ckpt_finish (struct keeper *k)
{
  job_abort (k, "the sandbox was removed during the checkpoint");
  if (k->idle_expired && k->spec->idle_checkpoint && idle_ckfd >= 0 && !idle_done)
    idle_checkpoint (k);
}

/* The sandbox has been idle for its timeout: with --idle-action checkpoint
 * and sessions, it is checkpointed while it still runs (its sessions must
 * run to save their globals), then removed (checkpoint_done); without
 * sessions, or when this can't start, ckpt_finish checkpoints it stopped. */
static bool
ckpt_idle (struct keeper *k)
{
  const char *names[1];
  if (!k->spec->idle_checkpoint || idle_ckfd < 0 || !k->running || job.kind != JOB_NONE
      || keeper_session_names (k, names, 1) == 0)
    return false;
  csr_error *e = NULL;
  if (start_idle_checkpoint (k, &e) == 0)
    return true;
  fprintf (stderr, "csrun sandbox %s: idle: checkpoint with the sessions failed: %s\n", k->spec->id,
           e ? csr_error_text (e) : "?");
  csr_error_free (e);
  job_abort (k, NULL);
  return false;
}

static const struct keeper_op ckpt_ops[] = {
  { "checkpoint", op_checkpoint, true },
  { "restore", op_restore, true },
  { NULL, NULL, false },
};

const struct keeper_part keeper_part_checkpoint = {
  .name = "checkpoint",
  .ops = ckpt_ops,
  .init = ckpt_init,
  .stopping = ckpt_stopping,
  .finish = ckpt_finish,
};
