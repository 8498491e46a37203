/* csrun — Python through the snippet pipeline in a sandbox, the caller's
 * side (run.h): the launchers that start an attempt through the sandbox's
 * keeper (an exec, or a cell of a session), a snippet that is a file of the
 * sandbox, and the session requests. */
#include "config.h"
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/digest.h"
#include "../util/fdpass.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"

bool
csr_sbx_session_name_ok (const char *name)
{
  size_t n = strlen (name);
  return n > 0 && n <= CSR_SBX_SESSION_NAME_MAX
         && strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n
         && strcmp (name, ".") != 0 && strcmp (name, "..") != 0;
}

/* A sealed memfd holding DATA (what goes into the sandbox: never a host
 * file, whose /proc/self/fd link could be reopened for writing there). */
static int
sealed_memfd (const char *what, const char *data, size_t len, csr_error **err)
{
  cleanup_close int m = memfd_create (what, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (m < 0)
    return csr_error_errno (err, "memfd_create");
  if (csr_write_all (m, data, len, err) < 0)
    return -1;
  if (fcntl (m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0
      || lseek (m, 0, SEEK_SET) < 0)
    return csr_error_errno (err, "seal the memfd");
  return steal_fd (&m);
}

/* One reply line from the keeper, and the descriptor that came with it
 * (*FD, -1: none); at most 64 KiB; a reply {"error": ...} becomes *ERR
 * (ESRCH when the sandbox is stopped, EBUSY when the session is busy). */
static int
reply_with_fd (int sock, char **line, int *fd, csr_error **err)
{
  *line = NULL;
  if (fd)
    *fd = -1;
  size_t cap = 1 << 16, n = 0;
  cleanup_free char *buf = malloc (cap);
  if (buf == NULL)
    return csr_error_set (err, ENOMEM, "reply");
  while (memchr (buf, '\n', n) == NULL)
    {
      if (n + 1 >= cap)
        return csr_error_set (err, E2BIG, "the keeper's reply is too long");
      int got = -1;
      ssize_t r = csr_recv_fd (sock, buf + n, cap - n - 1, &got);
      if (got >= 0)
        {
          if (fd && *fd < 0)
            *fd = got;
          else
            close (got);
        }
      if (r <= 0)
        return csr_error_set (err, r < 0 ? errno : EPIPE,
                              "the sandbox's keeper closed the connection");
      n += (size_t)r;
    }
  *(char *)memchr (buf, '\n', n) = '\0';
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (buf, ebuf, sizeof ebuf);
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  if (t == NULL || msg)
    {
      int st = msg == NULL                       ? EPROTO
               : strstr (msg, "is stopped")      ? ESRCH
               : strstr (msg, "is busy")         ? EBUSY
               : strstr (msg, "no such session") ? ENOENT
               : strstr (msg, "changed since")   ? EBUSY
               : strstr (msg, "too many")        ? EAGAIN
                                                 : 0;
      csr_error_set (err, 0, "%s", msg ? msg : "the keeper's reply is not JSON");
      if (*err)
        (*err)->status = st; /* the keeper's message says it already */
      if (fd && *fd >= 0)
        {
          close (*fd);
          *fd = -1;
        }
      return -1;
    }
  *line = steal_pointer (&buf);
  return 0;
}

/* ------------------------------------------------------------ the launchers */

/* The attempt's descriptors (launcher.h has the layout): stdin (-1:
 * /dev/null), stdout, stderr, the verdict pipe (fd 3), the precompiled gate
 * (fd 4, when there is one), the snippet (fd 5), the next attempt's socket
 * (fd 6, when the attempt may wait for it).  NUMS gets the fd numbers of
 * those after the first three. */
static size_t
attempt_fds (const struct jail_snippet *s, int devnull, int src, int fds[8], int nums[5],
             size_t *n_nums)
{
  size_t n = 0, k = 0;
  fds[n++] = s->stdin_fd >= 0 ? s->stdin_fd : devnull;
  fds[n++] = s->stdout_fd;
  fds[n++] = s->stderr_fd;
  if (s->n_extra_fds > 0 && s->extra_fds[0] >= 0)
    {
      fds[n++] = s->extra_fds[0];
      nums[k++] = CSR_LAUNCH_FD_VERDICT;
    }
  if (s->n_extra_fds > 1 && s->extra_fds[1] >= 0)
    {
      fds[n++] = s->extra_fds[1];
      nums[k++] = CSR_LAUNCH_FD_GATE;
    }
  fds[n++] = src;
  nums[k++] = CSR_LAUNCH_FD_SOURCE;
  size_t next = CSR_LAUNCH_FD_NEXT - 3;
  if (s->n_extra_fds > next && s->extra_fds[next] >= 0)
    {
      fds[n++] = s->extra_fds[next];
      nums[k++] = CSR_LAUNCH_FD_NEXT;
    }
  *n_nums = k;
  return n;
}

/* The request for an exec (the gate's command line) or a cell (the code
 * on fd 5, the policy and the args in the request). */
static char *
attempt_request (const struct csr_sbx_launcher *sl, const struct csr_launch_req *r, const int *nums,
                 size_t n_nums, csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  if (sl->session)
    {
      csr_jgen_kv_str (&w, "op", "session-run");
      csr_jgen_kv_str (&w, "name", sl->session);
      csr_jgen_kv_str (&w, "policy", r->policy_json ? r->policy_json : "{\"rules\":[]}");
      csr_jgen_str (&w, "args");
      csr_jgen_array_open (&w);
      for (int i = 0; i < r->n_args; i++)
        csr_jgen_str (&w, r->args[i]);
      csr_jgen_array_close (&w);
    }
  else
    {
      static const char *const none[] = { NULL };
      csr_jgen_kv_str (&w, "op", "exec");
      csr_jgen_kv_strv (&w, "argv", (const char *const *)r->spec->argv);
      csr_jgen_kv_strv (&w, "env", sl->env ? sl->env : none);
      csr_jgen_str (&w, "fds");
      csr_jgen_array_open (&w);
      for (size_t i = 0; i < n_nums; i++)
        csr_jgen_int (&w, nums[i]);
      csr_jgen_array_close (&w);
    }
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "the attempt's request", NULL, err);
}

static int
sbx_start (const struct csr_launcher *l, const struct csr_launch_req *r, struct csr_launched *p,
           csr_error **err)
{
  struct csr_sbx_launcher *sl = l->data;
  cleanup_close int src = sealed_memfd ("snippet.py", r->code, r->code_len, err);
  if (src < 0)
    return -1;
  cleanup_close int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0)
    return csr_error_errno (err, "/dev/null");
  int fds[8], nums[5];
  size_t n_nums = 0;
  size_t n = attempt_fds (r->spec, devnull, src, fds, nums, &n_nums);
  if (sl->session)
    {
      /* A cell: stdin, stdout, stderr, the verdict pipe, the code. */
      if (n_nums == 0 || nums[0] != CSR_LAUNCH_FD_VERDICT)
        return csr_error_set (err, EINVAL, "a cell needs the gate's verdict pipe");
      fds[4] = src;
      n = 5;
    }
  cleanup_free char *req = attempt_request (sl, r, nums, n_nums, err);
  if (req == NULL)
    return -1;
  p->sock = csr_sandbox_connect (sl->dirfd, req, fds, n, err);
  if (p->sock < 0)
    return -1;
  p->exit_fd = p->sock;
  return 0;
}

static bool
sbx_ended (struct csr_launched *p)
{
  (void)p;
  return false; /* the socket is always there to poll */
}

/* Stop the attempt: the keeper kills an exec's process group, or
 * interrupts a cell, when our side of the connection closes; its reply
 * still comes. */
static int
sbx_kill_payload (struct csr_launched *p)
{
  if (p->sock >= 0)
    shutdown (p->sock, SHUT_WR);
  return 1;
}

static void
sbx_kill (struct csr_launched *p)
{
  sbx_kill_payload (p);
}

static int
sbx_wait (struct csr_launched *p, struct csr_jail_exit *ex, csr_error **err)
{
  struct csr_sbx_launcher *sl = p->priv;
  memset (ex, 0, sizeof *ex);
  cleanup_free char *line = NULL;
  if (reply_with_fd (p->sock, &line, NULL, err) < 0)
    {
      sl->refused = (*err)->status == ESRCH || (*err)->status == EBUSY || (*err)->status == EAGAIN;
      return csr_error_wrap (err, "sandbox");
    }
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (line, ebuf, sizeof ebuf);
  if (YAJL_IS_TRUE (csr_json_get (t, "setup_failed")))
    return csr_error_set (err, 0,
                          "the attempt could not be started in the sandbox (see its "
                          "keeper.log)");
  if (YAJL_IS_TRUE (csr_json_get (t, "exec_failed")))
    return csr_error_set (err, 0, "the sandbox has no /usr/bin/python3");
  long long sig = csr_json_int (t, "signal", 0), code = csr_json_int (t, "exit_code", -1);
  if (sig > 0)
    ex->signal = (int)sig;
  else if (code >= 0)
    {
      ex->exited = true;
      ex->exit_code = (int)code;
    }
  long long cpu = csr_json_int (t, "cpu_ms", 0), rss = csr_json_int (t, "maxrss_kib", 0);
  ex->cpu_us = cpu > 0 ? (uint64_t)cpu * 1000 : 0;
  ex->maxrss_kib = rss > 0 ? (uint64_t)rss : 0;
  if (sl->session)
    {
      sl->session_started |= YAJL_IS_TRUE (csr_json_get (t, "started"));
      sl->session_lost |= YAJL_IS_TRUE (csr_json_get (t, "lost"));
      sl->cell = csr_json_int (t, "cell", sl->cell);
    }
  return 0;
}

static void
sbx_release (struct csr_launched *p)
{
  if (p->sock >= 0)
    close (p->sock);
  p->sock = p->exit_fd = -1;
}

/* The same start, with P->priv (the launcher) for wait. */
static int
sbx_start_priv (const struct csr_launcher *l, const struct csr_launch_req *r,
                struct csr_launched *p, csr_error **err)
{
  p->priv = l->data;
  return sbx_start (l, r, p, err);
}

void
csr_sbx_launcher_init (struct csr_sbx_launcher *sl, int dirfd, const struct csr_sandbox_spec *spec,
                       const char *session, const char *const *env)
{
  memset (sl, 0, sizeof *sl);
  sl->dirfd = dirfd;
  sl->session = session;
  sl->env = env;
  struct csr_limits_applied *a = &sl->applied;
  snprintf (a->mechanism, sizeof a->mechanism, "%s", spec->mechanism[0] ? spec->mechanism : "none");
  a->memory = spec->memory && spec->memory_enforced;
  a->pids = spec->pids && spec->pids_enforced;
  a->cpu = spec->cpu_millis && spec->cpu_enforced;
  a->memory_by_rlimit = a->memory && strstr (spec->mechanism, "rlimit") != NULL;
  sl->l = (struct csr_launcher){
    .name = session ? "session" : "sandbox",
    .one_shot = false,
    /* An exec starts the interpreter: the precompiled gate saves it the
     * gate's compilation; a session compiled the gate once. */
    .gate_code = session == NULL,
    .source_on_fd = true,
    .rerun_unrun_only = session != NULL,
    /* issue 17: an exec whose code never ran waits for the next attempt's
     * (fd 6); a cell has no interpreter of its own to keep. */
    .reuse_unrun = session == NULL,
    .applied = &sl->applied,
    .start = sbx_start_priv,
    .ended = sbx_ended,
    .kill_payload = sbx_kill_payload,
    .kill = sbx_kill,
    .wait = sbx_wait,
    .release = sbx_release,
    .data = sl,
  };
}

/* ------------------------------------------------------------ a file of the sandbox */

/* Send REQ (with FDS), read the reply (and a descriptor with it). */
static int
call_fd (int dirfd, const char *req, const int *fds, size_t n_fds, int timeout_ms, char **reply,
         int *fd, csr_error **err)
{
  cleanup_close int s = csr_sandbox_connect (dirfd, req, fds, n_fds, err);
  if (s < 0)
    return -1;
  if (timeout_ms >= 0)
    {
      struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
      setsockopt (s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
  return reply_with_fd (s, reply, fd, err);
}

int
csr_sbx_read_snippet (int dirfd, const char *path, size_t max, char **code, size_t *len,
                      char **real, char sha256[65], csr_error **err)
{
  *code = *real = NULL;
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return -1;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "op", "run-read");
  csr_jgen_kv_str (&w, "path", path);
  csr_jgen_kv_int (&w, "max", (long long)max);
  csr_jgen_map_close (&w);
  cleanup_free char *req = csr_jgen_finish (&w, "the request", NULL, err);
  if (req == NULL)
    return -1;
  cleanup_free char *reply = NULL;
  cleanup_close int fd = -1;
  if (call_fd (dirfd, req, NULL, 0, 30000, &reply, &fd, err) < 0)
    return -1;
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (reply, ebuf, sizeof ebuf);
  const char *rp = csr_json_str (csr_json_get (t, "path"));
  if (fd < 0 || rp == NULL)
    return csr_error_set (err, EPROTO, "the keeper sent no file");
  if (csr_read_fd (fd, max, code, len, err) < 0)
    return csr_error_wrap (err, "%s", rp);
  if (*len > max)
    {
      free (*code);
      *code = NULL;
      return csr_error_set (err, E2BIG, "%s is larger than %zu bytes", rp, max);
    }
  if ((*real = strdup (rp)) == NULL)
    return csr_error_set (err, ENOMEM, "out of memory");
  return csr_sha256_buf (*code, *len, sha256, err);
}

int
csr_sbx_write_back (int dirfd, const char *real, const char *old_sha256, const char *code,
                    size_t len, csr_error **err)
{
  cleanup_close int m = sealed_memfd ("healed.py", code, len, err);
  if (m < 0)
    return -1;
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return -1;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "op", "run-write");
  csr_jgen_kv_str (&w, "path", real);
  csr_jgen_kv_str (&w, "sha256", old_sha256);
  csr_jgen_map_close (&w);
  cleanup_free char *req = csr_jgen_finish (&w, "the request", NULL, err);
  if (req == NULL)
    return -1;
  cleanup_free char *reply = NULL;
  return call_fd (dirfd, req, &m, 1, 60000, &reply, NULL, err);
}

/* ------------------------------------------------------------ sessions */

static char *
session_request (const char *op, const char *name, csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "op", op);
  if (name)
    csr_jgen_kv_str (&w, "name", name);
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "the request", NULL, err);
}

int
csr_sbx_session_ls (int dirfd, char **reply, csr_error **err)
{
  cleanup_free char *req = session_request ("session-ls", NULL, err);
  return req ? call_fd (dirfd, req, NULL, 0, 10000, reply, NULL, err) : -1;
}

int
csr_sbx_session_rm (int dirfd, const char *name, csr_error **err)
{
  cleanup_free char *req = session_request ("session-rm", name, err);
  cleanup_free char *reply = NULL;
  return req ? call_fd (dirfd, req, NULL, 0, 30000, &reply, NULL, err) : -1;
}

/* Copy the pipe IN to OUT (at most MAX bytes) until its end. */
static int
drain (int in, int out, size_t max, csr_error **err)
{
  size_t total = 0;
  char buf[65536];
  for (;;)
    {
      ssize_t r = read (in, buf, sizeof buf);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return csr_error_errno (err, "read the session's save");
      if (r == 0)
        return 0;
      total += (size_t)r;
      if (total > max)
        return csr_error_set (err, E2BIG, "the save is larger than %zu bytes", max);
      if (csr_write_all (out, buf, (size_t)r, err) < 0)
        return -1;
    }
}

int
csr_sbx_session_save (int dirfd, const char *name, int out_fd, size_t max, char **report,
                      csr_error **err)
{
  *report = NULL;
  cleanup_free char *req = session_request ("session-save", name, err);
  if (req == NULL)
    return -1;
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe");
  cleanup_close int rd = p[0];
  cleanup_close int s = csr_sandbox_connect (dirfd, req, &p[1], 1, err);
  close (p[1]);
  if (s < 0)
    return -1;
  /* The session writes while the keeper waits for its report. */
  csr_error *derr = NULL;
  int drc = drain (rd, out_fd, max, &derr);
  close (steal_fd (&rd));
  if (reply_with_fd (s, report, NULL, err) < 0)
    {
      csr_error_free (derr);
      return -1;
    }
  if (drc < 0)
    {
      free (*report);
      *report = NULL;
      *err = derr;
      return -1;
    }
  return 0;
}

int
csr_sbx_session_load (int dirfd, const char *name, int in_fd, size_t max, char **report,
                      csr_error **err)
{
  *report = NULL;
  cleanup_free char *data = NULL;
  size_t len = 0;
  if (csr_read_fd (in_fd, max, &data, &len, err) < 0)
    return -1;
  if (len > max)
    return csr_error_set (err, E2BIG, "the save is larger than %zu bytes", max);
  cleanup_close int m = sealed_memfd ("session-save", data, len, err);
  if (m < 0)
    return -1;
  cleanup_free char *req = session_request ("session-load", name, err);
  return req ? call_fd (dirfd, req, &m, 1, -1, report, NULL, err) : -1;
}
