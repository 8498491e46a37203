/* csrun — sandbox files: the keeper's part (files.h).  A "files" request
 * forks a worker into the running sandbox (files-worker.c); the keeper
 * watches its status pipe and the client's socket, never waits for it, and
 * replies when it ends.  A client that goes away takes its worker with it;
 * stopping the sandbox kills every worker. */
#include "config.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <iconv.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/archive-lib.h"
#include "../util/clock.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "files-worker.h"
#include "keeper.h"

/* What every worker needs ready before it joins the sandbox, whose mount
 * namespace has none of it (or worse, the sandbox's own): libarchive and
 * its libraries, glibc's charset configuration, a UTF-8 LC_CTYPE, and the
 * worker's seccomp filter. */
static struct
{
  bool ready;
  locale_t locale;
  struct csr_seccomp *lockdown;
} prep;

/* No exec, no executable mapping (so no dlopen), no personality change
 * (READ_IMPLIES_EXEC). */
static const char lockdown_json[]
    = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
      "{\"names\":[\"execve\",\"execveat\",\"personality\"],\"action\":\"SCMP_ACT_ERRNO\","
      "\"errnoRet\":1},"
      "{\"names\":[\"mmap\",\"mprotect\",\"pkey_mprotect\"],\"action\":\"SCMP_ACT_ERRNO\","
      "\"errnoRet\":1,\"args\":[{\"index\":2,\"value\":4,\"valueTwo\":4,"
      "\"op\":\"SCMP_CMP_MASKED_EQ\"}]}]}";

int
csr_files_lockdown (struct csr_seccomp **out, csr_error **err)
{
  if (csr_seccomp_compile (lockdown_json, sizeof lockdown_json - 1, out, err) < 0)
    return csr_error_wrap (err, "the file worker's seccomp filter");
  return 0;
}

static int
prepare (csr_error **err)
{
  if (prep.ready)
    return 0;
  if (csr_la_load (err) < 0)
    return -1;
  /* glibc reads its gconv configuration on the first conversion: now,
   * from the host's tree. */
  iconv_t cd = iconv_open ("UTF-8", "ANSI_X3.4-1968");
  if (cd != (iconv_t)-1)
    iconv_close (cd);
  prep.locale = newlocale (LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
  if (csr_files_lockdown (&prep.lockdown, err) < 0)
    return -1;
  prep.ready = true;
  return 0;
}

/* ------------------------------------------------------------ operations */

struct fop
{
  bool used;
  pid_t worker;
  int status_fd;
  int client;
  bool client_gone, stopped;
  char *buf;
  size_t len, cap;
};
static struct fop fops[CSR_FILES_MAX_OPS];

static void
reply_error (int fd, const char *msg, bool refused)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "error", msg);
  csr_jgen_str (&w, "refused");
  csr_jgen_bool (&w, refused);
  csr_jgen_map_close (&w);
  char *s = csr_jgen_finish (&w, "reply", NULL, NULL);
  if (s)
    keeper_reply (fd, s);
  free (s);
}

/* The worker's result when it is one, else what its end says. */
static void
reply_end (struct fop *o, int status)
{
  char ebuf[64];
  yajl_val t = o->buf ? yajl_tree_parse (o->buf, ebuf, sizeof ebuf) : NULL;
  bool good = t && YAJL_IS_OBJECT (t)
              && (csr_json_get (t, "ok") || csr_json_str (csr_json_get (t, "error")));
  yajl_tree_free (t);
  if (good && !memchr (o->buf, '\n', o->len))
    keeper_reply (o->client, o->buf);
  else if (o->stopped)
    reply_error (o->client, "the sandbox was stopped during the operation", true);
  else if (WIFSIGNALED (status))
    {
      char msg[128];
      snprintf (msg, sizeof msg,
                "the file worker was killed by signal %d (out of the sandbox's memory?)",
                WTERMSIG (status));
      reply_error (o->client, msg, false);
    }
  else
    reply_error (o->client, "the file worker could not enter the sandbox (see its keeper.log)",
                 false);
}

static void
release (struct keeper *k, struct fop *o)
{
  free (o->buf);
  if (!o->client_gone)
    close (o->client);
  memset (o, 0, sizeof *o);
  k->n_busy--;
  k->last_activity_ms = csr_mono_ms ();
}

static void
status_ready (struct keeper *k, int fd, short revents, void *arg)
{
  (void)revents;
  struct fop *o = arg;
  for (;;)
    {
      if (o->len + 4096 + 1 > o->cap && o->cap < (1u << 20))
        {
          size_t cap = o->cap ? o->cap * 2 : 8192;
          char *b = realloc (o->buf, cap);
          if (b == NULL)
            break;
          o->buf = b;
          o->cap = cap;
        }
      if (o->len + 1 >= o->cap)
        {
          /* Too long to be a result: read on, keep nothing more. */
          char sink[4096];
          ssize_t r = read (fd, sink, sizeof sink);
          if (r > 0)
            continue;
          if (r < 0 && (errno == EAGAIN || errno == EINTR))
            return;
          break;
        }
      ssize_t r = read (fd, o->buf + o->len, o->cap - o->len - 1);
      if (r > 0)
        {
          o->len += (size_t)r;
          o->buf[o->len] = '\0';
          continue;
        }
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && errno == EAGAIN)
        return;
      break; /* the end: the worker is done */
    }
  keeper_unwatch (k, fd);
  close (fd);
  if (!o->client_gone)
    keeper_unwatch (k, o->client);
  int status = 0;
  while (waitpid (o->worker, &status, 0) < 0 && errno == EINTR)
    ;
  if (!o->client_gone)
    reply_end (o, status);
  release (k, o);
}

/* The client hung up (interrupted): its worker goes too (SIGTERM: it
 * removes the file it was making). */
static void
client_gone (struct keeper *k, int fd, short revents, void *arg)
{
  (void)revents;
  struct fop *o = arg;
  kill (o->worker, SIGTERM);
  keeper_unwatch (k, fd);
  close (fd);
  o->client_gone = true;
}

/* ------------------------------------------------------------ the request */

static int
parse_action (const char *s)
{
  static const char *const names[]
      = { [CSR_FILES_READ] = "read", [CSR_FILES_WRITE] = "write", [CSR_FILES_GET] = "get",
          [CSR_FILES_PUT] = "put",   [CSR_FILES_LS] = "ls",       [CSR_FILES_FIND] = "find" };
  for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
    if (strcmp (s, names[i]) == 0)
      return (int)i;
  return -1;
}

static void
op_files (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  if (!k->running)
    return reply_error (fd, "the sandbox is stopped (csrun sandbox start ID)", true);
  if (n_fds != 1)
    return reply_error (fd, "files: expected one descriptor", false);
  int action = parse_action (csr_json_str (csr_json_get (req, "action")));
  const char *path = csr_json_str (csr_json_get (req, "path"));
  long long max_bytes = csr_json_int (req, "max_bytes", 0),
            max_entries = csr_json_int (req, "max_entries", 0);
  if (action < 0 || path == NULL || max_bytes <= 0 || max_entries <= 0)
    return reply_error (fd, "files: a bad request", false);
  csr_error *e = NULL;
  if (prepare (&e) < 0)
    {
      reply_error (fd, csr_error_text (e), false);
      csr_error_free (e);
      return;
    }
  size_t slot = 0;
  while (slot < CSR_FILES_MAX_OPS && fops[slot].used)
    slot++;
  if (slot == CSR_FILES_MAX_OPS)
    return reply_error (fd, "too many file operations at once in this sandbox (at most 32)", true);
  int st[2];
  if (pipe2 (st, O_CLOEXEC) < 0)
    return reply_error (fd, "files: pipe failed", false);
  struct csr_files_work w = {
    .req = {
      .action = (enum csr_files_action)action,
      .path = path,
      .raw_tar = YAJL_IS_TRUE (csr_json_get (req, "raw")),
      .recursive = YAJL_IS_TRUE (csr_json_get (req, "recursive")),
      .pattern = csr_json_str (csr_json_get (req, "pattern")),
      .mode = (int)csr_json_int (req, "mode", -1),
      .max_bytes = (uint64_t)max_bytes,
      .max_entries = (uint64_t)max_entries,
    },
    .workdir = k->spec->workdir,
    .data = fds[0],
    .status = st[1],
    .locale = prep.locale,
    .lockdown = prep.lockdown,
    .sn = &k->sn,
  };
  struct csr_sbx_target t;
  keeper_target (k, &t);
  pid_t pid = csr_sbx_fork_in (&t, CSR_SBX_NS_USER | CSR_SBX_NS_MNT | CSR_SBX_JOIN_CGROUP,
                               csr_files_work, &w, &e);
  close (st[1]);
  if (pid < 0)
    {
      close (st[0]);
      reply_error (fd, csr_error_text (e), false);
      csr_error_free (e);
      return;
    }
  fcntl (st[0], F_SETFL, O_NONBLOCK);
  struct fop *o = &fops[slot];
  *o = (struct fop){ .used = true, .worker = pid, .status_fd = st[0], .client = fd };
  if (keeper_watch (k, st[0], POLLIN, status_ready, o) < 0
      || keeper_watch (k, fd, POLLRDHUP, client_gone, o) < 0)
    {
      keeper_unwatch (k, st[0]);
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
      close (st[0]);
      memset (o, 0, sizeof *o);
      return reply_error (fd, "the keeper is too busy (too many descriptors watched)", false);
    }
  k->n_busy++;
  *keep = true;
}

/* ------------------------------------------------------------ hooks */

static void
files_stopping (struct keeper *k)
{
  (void)k;
  for (size_t i = 0; i < CSR_FILES_MAX_OPS; i++)
    if (fops[i].used)
      {
        fops[i].stopped = true;
        kill (fops[i].worker, SIGTERM);
      }
}

static void
files_finish (struct keeper *k)
{
  for (size_t i = 0; i < CSR_FILES_MAX_OPS; i++)
    if (fops[i].used)
      {
        struct fop *o = &fops[i];
        kill (o->worker, SIGKILL);
        waitpid (o->worker, NULL, 0);
        close (o->status_fd);
        release (k, o);
      }
}

static const struct keeper_op files_ops[] = {
  { "files", op_files, true },
  { NULL, NULL, false },
};

const struct keeper_part keeper_part_files
    = { "files", files_ops, NULL, NULL, files_stopping, files_finish };
