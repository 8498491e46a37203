/* csrun — the keeper's part for `csrun sandbox run` (run.h): a snippet
 * that is a file of the sandbox is read, and its healed version written
 * back, by a process that joins the sandbox (exec.h's csr_sbx_fork_in), drops
 * every capability and resolves the path there, never through /proc's magic
 * links; it answers the caller on the caller's connection itself.  (The
 * attempts themselves are execs: keeper-exec.c.) */
#include "config.h"
#include "keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../jail/caps.h"
#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/digest.h"
#include "../util/fdpass.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "../util/syscalls.h"

#define MAX_JOBS 16

/* One read or write-back: the caller's connection, the process in the
 * sandbox, what it works on. */
struct file_job
{
  bool used;
  int conn;
  pid_t pid;
  int pidfd;
  const char *workdir;
  char path[PATH_MAX];
  char sha256[CSR_SHA256_HEX_LEN + 1];
  long long max;
  int data_fd;
};
static struct file_job jobs[MAX_JOBS];

/* ------------------------------------------------------------ in the sandbox */

/* Send JSON (and FD, when >= 0) to the caller, as one line. */
static int
send_reply (int conn, const char *json, int fd)
{
  size_t len = strlen (json);
  cleanup_free char *line = malloc (len + 1);
  if (line == NULL)
    return -1;
  memcpy (line, json, len);
  line[len] = '\n';
  return csr_send_fds (conn, line, len + 1, &fd, fd >= 0 ? 1 : 0);
}

/* The error reply {"error": ...}; the process's status is still 0 (it
 * answered). */
__attribute__ ((format (printf, 2, 3))) static int
child_fail (int conn, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  cleanup_free char *msg = NULL;
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  keeper_reply_error (conn, msg ? msg : "out of memory");
  return 0;
}

/* Open PATH (symbolic links already resolved) without following any link. */
static int
open_no_links (const char *path, int flags)
{
  struct open_how how = { .flags = (uint64_t)flags | O_CLOEXEC | O_NOCTTY,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  return (int)syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

/* As the sandbox's root without capabilities, in its working directory. */
static int
become_plain (const struct file_job *j, char *why, size_t n)
{
  /* Nothing of the keeper's but the caller's connection and the data. */
  int keep[] = { j->conn, j->data_fd };
  csr_close_all_but (keep, 2);
  csr_error *e = NULL;
  if (csr_caps_drop_all (0, 0, &e) < 0)
    {
      snprintf (why, n, "drop capabilities: %s", csr_error_text (e));
      csr_error_free (e);
      return -1;
    }
  if (chdir (j->workdir) < 0)
    {
      snprintf (why, n, "the working directory %s: %s", j->workdir, strerror (errno));
      return -1;
    }
  return 0;
}

static int
read_child (void *arg)
{
  struct file_job *j = arg;
  char why[512];
  if (become_plain (j, why, sizeof why) < 0)
    return child_fail (j->conn, "%s", why);
  cleanup_free char *real = realpath (j->path, NULL);
  if (real == NULL)
    return child_fail (j->conn, "%s: %s (in the sandbox)", j->path, strerror (errno));
  cleanup_close int fd = open_no_links (real, O_RDONLY | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return child_fail (j->conn, "%s: %s (in the sandbox)", real, strerror (errno));
  if (!S_ISREG (st.st_mode))
    return child_fail (j->conn, "%s: not a regular file", real);
  if (st.st_size > j->max)
    return child_fail (j->conn, "%s is larger than %lld bytes (--max-code-size)", real, j->max);
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return 1;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "path", real);
  csr_jgen_kv_int (&w, "size", (long long)st.st_size);
  csr_jgen_map_close (&w);
  cleanup_free char *s = csr_jgen_finish (&w, "reply", NULL, NULL);
  return s && send_reply (j->conn, s, fd) == 0 ? 0 : 1;
}

/* Copy the memfd IN (from its start) to OUT. */
static int
copy_data (int in, int out)
{
  char buf[65536];
  off_t off = 0;
  for (;;)
    {
      ssize_t r = pread (in, buf, sizeof buf, off);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return r < 0 ? -1 : 0;
      if (csr_write_all (out, buf, (size_t)r, NULL) < 0)
        return -1;
      off += r;
    }
}

static int
write_child (void *arg)
{
  struct file_job *j = arg;
  char why[512];
  if (become_plain (j, why, sizeof why) < 0)
    return child_fail (j->conn, "%s", why);
  cleanup_close int fd = open_no_links (j->path, O_RDONLY | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return child_fail (j->conn, "%s changed since it was read (%s): not replaced", j->path,
                       strerror (errno));
  char now[CSR_SHA256_HEX_LEN + 1];
  if (!S_ISREG (st.st_mode) || csr_sha256_fd (fd, now, NULL) < 0 || strcmp (now, j->sha256) != 0)
    return child_fail (j->conn, "%s changed since it was read: not replaced", j->path);
  cleanup_free char *d = strdup (j->path), *b = strdup (j->path);
  if (d == NULL || b == NULL)
    return 1;
  const char *dir = dirname (d), *base = basename (b);
  cleanup_close int dfd = open_no_links (dir, O_RDONLY | O_DIRECTORY);
  if (dfd < 0)
    return child_fail (j->conn, "%s: %s", dir, strerror (errno));
  char tmp[NAME_MAX + 1];
  if (snprintf (tmp, sizeof tmp, ".%s.csrun-%d", base, (int)getpid ()) >= (int)sizeof tmp)
    return child_fail (j->conn, "%s: the name is too long for a temporary file beside it", j->path);
  int tfd = openat (dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (tfd < 0)
    return child_fail (j->conn, "%s/%s: %s", dir, tmp, strerror (errno));
  const char *step = "write";
  int ok = copy_data (j->data_fd, tfd) == 0
           && ((st.st_uid == getuid () && st.st_gid == getgid ())
               || (step = "keep the owner", fchown (tfd, st.st_uid, st.st_gid) == 0))
           && (step = "keep the mode", fchmod (tfd, st.st_mode & 07777) == 0)
           && (step = "fsync", fsync (tfd) == 0);
  int saved = errno;
  if (close (tfd) < 0 && ok)
    {
      ok = 0;
      saved = errno;
      step = "close";
    }
  if (ok && renameat (dfd, tmp, dfd, base) < 0)
    {
      ok = 0;
      saved = errno;
      step = "rename";
    }
  if (!ok)
    {
      unlinkat (dfd, tmp, 0);
      return child_fail (j->conn, "%s: %s the new version: %s (the file is unchanged)", j->path,
                         step, strerror (saved));
    }
  fsync (dfd);
  keeper_reply (j->conn, "{\"ok\":true}");
  return 0;
}

/* ------------------------------------------------------------ in the keeper */

static void
job_done (struct keeper *k, int fd, short revents, void *arg)
{
  (void)fd, (void)revents;
  struct file_job *j = arg;
  int st = 0;
  while (waitpid (j->pid, &st, 0) < 0 && errno == EINTR)
    ;
  /* The process answers itself; it did not when it could not even enter. */
  if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
    keeper_reply_error (j->conn, "could not enter the sandbox (see its keeper.log)");
  keeper_unwatch (k, j->pidfd);
  close (j->pidfd);
  close (j->conn);
  j->used = false;
  k->n_busy--;
  k->last_activity_ms = csr_mono_ms ();
}

/* A job for the request REQ on connection FD, with its path; NULL after
 * replying an error. */
static struct file_job *
new_job (struct keeper *k, int fd, yajl_val req)
{
  if (!k->running)
    return keeper_reply_error (fd, "the sandbox is stopped (csrun sandbox start ID)"), NULL;
  const char *path = csr_json_str (csr_json_get (req, "path"));
  if (path == NULL || *path == '\0' || strlen (path) >= PATH_MAX)
    return keeper_reply_error (fd, "run: a path in the sandbox is needed"), NULL;
  for (size_t i = 0; i < MAX_JOBS; i++)
    if (!jobs[i].used)
      {
        struct file_job *j = &jobs[i];
        memset (j, 0, sizeof *j);
        j->conn = fd;
        j->data_fd = -1;
        j->workdir = k->spec->workdir;
        snprintf (j->path, sizeof j->path, "%s", path);
        return j;
      }
  return keeper_reply_error (fd, "too many file requests at once in this sandbox"), NULL;
}

static void
start_job (struct keeper *k, struct file_job *j, int (*fn) (void *), bool *keep)
{
  struct csr_sbx_target t;
  keeper_target (k, &t);
  csr_error *e = NULL;
  j->pid = csr_sbx_fork_in (&t, CSR_SBX_JOIN_ALL, fn, j, &e);
  if (j->pid < 0)
    {
      keeper_reply_error (j->conn, csr_error_text (e));
      csr_error_free (e);
      return;
    }
  j->pidfd = csr_pidfd_open (j->pid);
  if (j->pidfd < 0 || keeper_watch (k, j->pidfd, POLLIN, job_done, j) < 0)
    {
      /* No pidfd (or no room to watch it): wait here, it is short. */
      if (j->pidfd >= 0)
        close (j->pidfd);
      int st = 0;
      while (waitpid (j->pid, &st, 0) < 0 && errno == EINTR)
        ;
      if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
        keeper_reply_error (j->conn, "could not enter the sandbox (see its keeper.log)");
      return;
    }
  j->used = true;
  k->n_busy++;
  *keep = true;
}

static void
op_read (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)fds, (void)n_fds;
  struct file_job *j = new_job (k, fd, req);
  if (j == NULL)
    return;
  yajl_val m = csr_json_get (req, "max");
  j->max = m && YAJL_IS_INTEGER (m) && YAJL_GET_INTEGER (m) > 0 ? YAJL_GET_INTEGER (m) : 1 << 20;
  start_job (k, j, read_child, keep);
}

static void
op_write (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  const char *sha = csr_json_str (csr_json_get (req, "sha256"));
  if (n_fds != 1 || sha == NULL || strlen (sha) != CSR_SHA256_HEX_LEN)
    return keeper_reply_error (fd, "run-write: expected a path, its sha256 and the new version");
  struct file_job *j = new_job (k, fd, req);
  if (j == NULL)
    return;
  if (j->path[0] != '/')
    return keeper_reply_error (fd, "run-write: the path must be absolute");
  snprintf (j->sha256, sizeof j->sha256, "%s", sha);
  j->data_fd = fds[0]; /* the process gets its own copy; the keeper's is closed after us */
  start_job (k, j, write_child, keep);
}

static const struct keeper_op run_ops[] = {
  { "run-read", op_read, true },
  { "run-write", op_write, true },
  { NULL, NULL, false },
};

const struct keeper_part keeper_part_run = { "run", run_ops, NULL, NULL, NULL, NULL };
