/* csrun — --patch-cmd: ask an external program for a patch.
 *
 * PROGRAM runs through /bin/sh -c outside the jail, in its own process
 * group, with a clean environment (PATH, HOME, LANG from the host).  It gets
 * {"code","diagnosis","attempt","violations","stdout_tail","stderr_tail",...}
 * on stdin and answers with the patched
 * program on stdout (a fenced markdown block is fine).  The whole group is
 * killed on timeout and after the program exits, so nothing is left behind. */
#include "config.h"
#include "heal.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "../util/clock.h"
#include "../util/cleanup.h"
#include "../util/syscalls.h"
#include "../util/utf8.h"

#define MAX_REPLY (1024 * 1024)
#define MAX_ERR_KEEP 4096

/* *why points here when it has to carry a number: valid until the next call
 * in the same thread. */
static __thread char why_buf[256];

/* ------------------------------------------------------------ request */

static int
gen_string (yajl_gen g, const char *s)
{
  if (s == NULL)
    return yajl_gen_null (g) == yajl_gen_status_ok ? 0 : -1;
  size_t n = 0;
  char *clean = csr_utf8_sanitize (s, strlen (s), &n);
  if (clean == NULL)
    return -1;
  int r = yajl_gen_string (g, (const unsigned char *)clean, n) == yajl_gen_status_ok ? 0 : -1;
  free (clean);
  return r;
}

#define KEY(g, k) gen_string ((g), (k))

/* The gate's violations: [{"rule","line","col","message"}], empty unless it
 * blocked the code. */
static int
gen_violations (yajl_gen g, const struct csr_gate_verdict *v)
{
  int r = yajl_gen_array_open (g) != yajl_gen_status_ok;
  for (size_t i = 0; v && v->outcome == CSR_GATE_BLOCKED && i < v->n_violations; i++)
    {
      const struct csr_violation *x = &v->violations[i];
      r |= yajl_gen_map_open (g) != yajl_gen_status_ok;
      r |= KEY (g, "rule") || gen_string (g, x->rule);
      r |= KEY (g, "line") || yajl_gen_integer (g, x->line) != yajl_gen_status_ok;
      r |= KEY (g, "col") || yajl_gen_integer (g, x->col) != yajl_gen_status_ok;
      r |= KEY (g, "message") || gen_string (g, x->message);
      r |= yajl_gen_map_close (g) != yajl_gen_status_ok;
    }
  r |= yajl_gen_array_close (g) != yajl_gen_status_ok;
  return r;
}

/* "NAME_tail": the last CSR_PATCHCMD_TAIL_MAX bytes of B, from a character
 * boundary on (invalid bytes become U+FFFD in gen_string), and
 * "NAME_truncated": whether the stream wrote more than that. */
static int
gen_tail (yajl_gen g, const char *name, const struct csr_bbuf *b)
{
  size_t len = 0;
  cleanup_free char *all = b ? csr_bbuf_contents (b, &len) : strdup ("");
  if (all == NULL)
    return -1;
  size_t start = len > CSR_PATCHCMD_TAIL_MAX ? len - CSR_PATCHCMD_TAIL_MAX : 0;
  /* Skip the continuation bytes of a character cut at the start (at most 3). */
  for (int k = 0; k < 3 && start < len && ((unsigned char)all[start] & 0xc0) == 0x80; k++)
    start++;
  char key[32];
  snprintf (key, sizeof key, "%s_tail", name);
  int r = KEY (g, key) || gen_string (g, all + start);
  snprintf (key, sizeof key, "%s_truncated", name);
  bool cut = start > 0 || (b && b->total > len);
  r |= KEY (g, key) || yajl_gen_bool (g, cut) != yajl_gen_status_ok;
  return r;
}

static int
build_request (const struct csr_patchcmd_input *in, char **out, size_t *len)
{
  const char *code = in->code;
  const struct csr_diagnosis *d = in->diagnosis;
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    return -1;
  int r = 0;
  r |= yajl_gen_map_open (g) != yajl_gen_status_ok;
  r |= KEY (g, "code") || gen_string (g, code ? code : "");
  r |= KEY (g, "diagnosis");
  if (d == NULL)
    r |= yajl_gen_null (g) != yajl_gen_status_ok;
  else
    {
      r |= yajl_gen_map_open (g) != yajl_gen_status_ok;
      r |= KEY (g, "error_type") || gen_string (g, d->error_type);
      r |= KEY (g, "message") || gen_string (g, d->message);
      r |= KEY (g, "line") || yajl_gen_integer (g, d->line) != yajl_gen_status_ok;
      r |= KEY (g, "context") || gen_string (g, d->context);
      r |= yajl_gen_map_close (g) != yajl_gen_status_ok;
    }
  r |= KEY (g, "attempt") || yajl_gen_integer (g, in->attempt) != yajl_gen_status_ok;
  r |= KEY (g, "violations") || gen_violations (g, in->gate);
  r |= gen_tail (g, "stdout", in->out);
  r |= gen_tail (g, "stderr", in->err);
  r |= yajl_gen_map_close (g) != yajl_gen_status_ok;
  const unsigned char *buf = NULL;
  size_t n = 0;
  if (r == 0 && yajl_gen_get_buf (g, &buf, &n) == yajl_gen_status_ok)
    {
      *out = malloc (n + 2);
      if (*out != NULL)
        {
          memcpy (*out, buf, n);
          (*out)[n] = '\n';
          (*out)[n + 1] = '\0';
          *len = n + 1;
        }
    }
  else
    *out = NULL;
  yajl_gen_free (g);
  return *out ? 0 : -1;
}

/* ------------------------------------------------------------- child */

/* The environment, built before fork (no allocation in the child). */
struct env
{
  char *vars[4];
  size_t n;
};

static void
env_release (struct env *e)
{
  for (size_t i = 0; i < e->n; i++)
    free (e->vars[i]);
  e->n = 0;
}

static int
env_build (struct env *e)
{
  static const char *const keep[] = { "PATH", "HOME", "LANG" };
  e->n = 0;
  for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
    {
      const char *v = getenv (keep[i]);
      if (v == NULL && strcmp (keep[i], "PATH") == 0)
        v = "/usr/local/bin:/usr/bin:/bin";
      if (v == NULL)
        continue;
      char *s = NULL;
      if (asprintf (&s, "%s=%s", keep[i], v) < 0)
        {
          env_release (e);
          return -1;
        }
      e->vars[e->n++] = s;
    }
  e->vars[e->n] = NULL;
  return 0;
}

static void __attribute__ ((noreturn))
child_exec (const char *program, int in, int out, int errfd, char *const *envp)
{
  setpgid (0, 0);
  /* Default dispositions and an empty mask for the program. */
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP)
      sigaction (s, &sa, NULL);
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  if (dup2 (in, 0) < 0 || dup2 (out, 1) < 0 || dup2 (errfd, 2) < 0)
    _exit (127);
  csr_close_range_between (3, ~0U);
  char *argv[] = { (char *)"sh", (char *)"-c", (char *)program, NULL };
  execve ("/bin/sh", argv, envp);
  _exit (127);
}

/* -------------------------------------------------------------- parent */

struct run
{
  int in, out, err; /* our ends; -1 once closed */
  const char *req;
  size_t req_len, req_off;
  char *reply;
  size_t reply_len;
  bool too_large;
  char errtail[MAX_ERR_KEEP];
  size_t errtail_len;
};

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* Keep the last MAX_ERR_KEEP bytes of stderr. */
static void
keep_err (struct run *r, const char *buf, size_t n)
{
  if (n >= MAX_ERR_KEEP)
    {
      memcpy (r->errtail, buf + n - MAX_ERR_KEEP, MAX_ERR_KEEP);
      r->errtail_len = MAX_ERR_KEEP;
      return;
    }
  if (r->errtail_len + n > MAX_ERR_KEEP)
    {
      size_t drop = r->errtail_len + n - MAX_ERR_KEEP;
      memmove (r->errtail, r->errtail + drop, r->errtail_len - drop);
      r->errtail_len -= drop;
    }
  memcpy (r->errtail + r->errtail_len, buf, n);
  r->errtail_len += n;
}

/* One round of I/O; WAKE (the pidfd, or -1) ends the wait when the program
 * exits.  Returns -1 on a csrun error. */
static int
pump (struct run *r, int wake, int timeout_ms, csr_error **err)
{
  struct pollfd pfd[4];
  int n = 0, iin = -1, iout = -1, ierr = -1;
  if (r->in >= 0)
    pfd[iin = n++] = (struct pollfd){ .fd = r->in, .events = POLLOUT };
  if (r->out >= 0)
    pfd[iout = n++] = (struct pollfd){ .fd = r->out, .events = POLLIN };
  if (r->err >= 0)
    pfd[ierr = n++] = (struct pollfd){ .fd = r->err, .events = POLLIN };
  if (wake >= 0)
    pfd[n++] = (struct pollfd){ .fd = wake, .events = POLLIN };
  int k = poll (pfd, (nfds_t)n, timeout_ms);
  if (k < 0)
    return errno == EINTR ? 0 : csr_error_errno (err, "patch command: poll");
  if (k == 0)
    return 0;
  if (iin >= 0 && pfd[iin].revents)
    {
      ssize_t w = write (r->in, r->req + r->req_off, r->req_len - r->req_off);
      if (w > 0)
        r->req_off += (size_t)w;
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || r->req_off == r->req_len)
        close_fd (&r->in); /* EPIPE: it does not read its input, fine */
    }
  char buf[16384];
  if (iout >= 0 && pfd[iout].revents)
    {
      ssize_t got = read (r->out, buf, sizeof buf);
      if (got > 0)
        {
          if (r->reply_len + (size_t)got > MAX_REPLY)
            {
              r->too_large = true;
              close_fd (&r->out);
            }
          else
            {
              memcpy (r->reply + r->reply_len, buf, (size_t)got);
              r->reply_len += (size_t)got;
            }
        }
      else if (got == 0 || (errno != EAGAIN && errno != EINTR))
        close_fd (&r->out);
    }
  if (ierr >= 0 && pfd[ierr].revents)
    {
      ssize_t got = read (r->err, buf, sizeof buf);
      if (got > 0)
        keep_err (r, buf, (size_t)got);
      else if (got == 0 || (errno != EAGAIN && errno != EINTR))
        close_fd (&r->err);
    }
  return 0;
}

/* The last non-empty line of what the program wrote on stderr. */
static void
last_err_line (const struct run *r, char *buf, size_t size)
{
  size_t e = r->errtail_len;
  while (e > 0
         && (r->errtail[e - 1] == '\n' || r->errtail[e - 1] == '\r' || r->errtail[e - 1] == ' '
             || r->errtail[e - 1] == '\t'))
    e--;
  size_t s = e;
  while (s > 0 && r->errtail[s - 1] != '\n')
    s--;
  size_t n = e - s < size - 1 ? e - s : size - 1;
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char)r->errtail[s + i];
      buf[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
  buf[n] = '\0';
  if (!csr_utf8_valid (buf, n)) /* cut in the middle of a character, or not text */
    for (size_t i = 0; i < n; i++)
      if ((unsigned char)buf[i] >= 0x80)
        buf[i] = '?';
}

static int
set_nonblock (int fd)
{
  int fl = fcntl (fd, F_GETFL);
  return fl < 0 ? -1 : fcntl (fd, F_SETFL, fl | O_NONBLOCK);
}

/* Compare ignoring trailing white space (the extracted reply always ends
 * with exactly one newline). */
static bool
same_code (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  while (la > 0 && strchr (" \t\r\n", a[la - 1]))
    la--;
  while (lb > 0 && strchr (" \t\r\n", b[lb - 1]))
    lb--;
  return la == lb && memcmp (a, b, la) == 0;
}

static void
reap (pid_t pid, int *status)
{
  while (waitpid (pid, status, 0) < 0 && errno == EINTR)
    ;
}

/* Feed the request to PID and collect its output until it exits (then its
 * group is killed and the pipes drained, 2 s at most) or TIMEOUT_S passes
 * (<= 0: no limit).  *EXITED: it was reaped (*STATUS); *TIMED_OUT: it was
 * still running at the deadline. */
static int
converse (struct run *r, pid_t pid, int pidfd, double timeout_s, int *status, bool *exited,
          bool *timed_out, csr_error **err)
{
  double deadline = timeout_s > 0 ? csr_mono_s () + timeout_s : DBL_MAX;
  *timed_out = *exited = false;
  while (!*exited || r->out >= 0 || r->err >= 0)
    {
      double left = deadline - csr_mono_s ();
      if (left <= 0)
        {
          /* After the exit: only an escaped grandchild holds the pipes. */
          *timed_out = !*exited;
          break;
        }
      if (r->too_large)
        break;
      int ms = left > 1e3 ? 1000000 : (int)(left * 1000) + 1;
      if (!*exited && csr_child_exited (pid))
        {
          /* Whatever it left in its group goes too (the zombie leader keeps
           * the group id ours); then drain the pipes. */
          kill (-pid, SIGKILL);
          reap (pid, status);
          *exited = true;
          if (deadline > csr_mono_s () + 2.0)
            deadline = csr_mono_s () + 2.0;
          continue;
        }
      if (!*exited && pidfd < 0 && ms > 20)
        ms = 20; /* no pidfd: look at the process now and then */
      if (pump (r, *exited ? -1 : pidfd, ms, err) < 0)
        return -1;
    }
  return 0;
}

/* What the program's run gave: 1 and *OUT (the patched code), 0 and *WHY
 * (no usable patch), or -1 (no memory). */
static int
judge_reply (const struct run *r, int status, bool timed_out, double timeout_s, const char *code,
             char **out, const char **why, csr_error **err)
{
  char errline[160];
  last_err_line (r, errline, sizeof errline);
  if (timed_out)
    {
      snprintf (why_buf, sizeof why_buf, "timed out after %gs", timeout_s);
      *why = why_buf;
    }
  else if (r->too_large)
    *why = "output too large";
  else if (WIFSIGNALED (status))
    {
      snprintf (why_buf, sizeof why_buf, "killed by signal %d", WTERMSIG (status));
      *why = why_buf;
    }
  else if (WIFEXITED (status) && WEXITSTATUS (status) != 0)
    {
      if (errline[0])
        snprintf (why_buf, sizeof why_buf, "exit status %d: %s", WEXITSTATUS (status), errline);
      else
        snprintf (why_buf, sizeof why_buf, "exit status %d", WEXITSTATUS (status));
      *why = why_buf;
    }
  else if (memchr (r->reply, '\0', r->reply_len))
    *why = "unusable reply: contains a NUL byte"; /* as a snippet with one is refused */
  else
    {
      char *patched = csr_extract_code (r->reply, r->reply_len);
      if (patched == NULL)
        return csr_error_set (err, ENOMEM, "patch command: cannot allocate the reply");
      if (patched[0] == '\0')
        {
          *why = "no code in the reply";
          free (patched);
        }
      else if (same_code (patched, code))
        {
          *why = "identical to the input";
          free (patched);
        }
      else
        {
          *out = patched;
          return 1;
        }
    }
  return 0;
}

int
csr_patchcmd_run (const char *program, double timeout_s, const char *code,
                  const struct csr_diagnosis *d, int attempt, char **out, const char **why,
                  csr_error **err)
{
  struct csr_patchcmd_input in = { .code = code, .diagnosis = d, .attempt = attempt };
  return csr_patchcmd_run_ex (program, timeout_s, &in, out, why, err);
}

int
csr_patchcmd_run_ex (const char *program, double timeout_s, const struct csr_patchcmd_input *in,
                     char **out, const char **why, csr_error **err)
{
  *out = NULL;
  *why = NULL;
  if (program == NULL || *program == '\0')
    return csr_error_set (err, EINVAL, "patch command: empty program");
  const char *code = in->code ? in->code : "";
  struct csr_patchcmd_input req_in = *in;
  req_in.code = code;

  cleanup_free char *req = NULL;
  size_t req_len = 0;
  if (build_request (&req_in, &req, &req_len) < 0)
    return csr_error_set (err, ENOMEM, "patch command: cannot build the request");

  struct env env;
  if (env_build (&env) < 0)
    return csr_error_set (err, ENOMEM, "patch command: cannot build the environment");

  int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
  struct run r = { .in = -1, .out = -1, .err = -1, .req = req, .req_len = req_len };
  int ret = -1;
  pid_t pid = -1;
  int pidfd = -1;
  sigset_t pipe_set, old_mask;
  bool masked = false;

  r.reply = malloc (MAX_REPLY + 1);
  if (r.reply == NULL)
    {
      csr_error_set (err, ENOMEM, "patch command: cannot allocate the reply buffer");
      goto out;
    }
  if (pipe2 (pin, O_CLOEXEC) < 0 || pipe2 (pout, O_CLOEXEC) < 0 || pipe2 (perr, O_CLOEXEC) < 0)
    {
      csr_error_errno (err, "patch command: pipe");
      goto out;
    }

  /* SIGPIPE stays blocked while we write to a program that may not read:
   * the write fails with EPIPE instead, and a SIGPIPE we caused is consumed
   * before the old mask comes back. */
  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &pipe_set, &old_mask);
  masked = true;
  sigset_t pending;
  sigpending (&pending);
  bool was_pending = sigismember (&pending, SIGPIPE) == 1;

  pid = fork ();
  if (pid < 0)
    {
      csr_error_errno (err, "patch command: fork");
      goto out;
    }
  if (pid == 0)
    child_exec (program, pin[0], pout[1], perr[1], env.vars);
  setpgid (pid, pid); /* also in the child: whichever runs first */
  close_fd (&pin[0]);
  close_fd (&pout[1]);
  close_fd (&perr[1]);
  r.in = steal_fd (&pin[1]);
  r.out = steal_fd (&pout[0]);
  r.err = steal_fd (&perr[0]);
  set_nonblock (r.in);
  set_nonblock (r.out);
  set_nonblock (r.err);
  pidfd = csr_pidfd_open (pid);

  bool timed_out = false, exited = false;
  int status = 0;
  if (converse (&r, pid, pidfd, timeout_s, &status, &exited, &timed_out, err) < 0)
    goto out;

  if (!exited)
    {
      kill (-pid, SIGKILL);
      reap (pid, &status);
    }
  pid = -1;
  close_fd (&r.in);
  close_fd (&r.out);
  close_fd (&r.err);

  ret = judge_reply (&r, status, timed_out, timeout_s, code, out, why, err);

out:
  if (pid > 0)
    {
      kill (-pid, SIGKILL);
      kill (pid, SIGKILL);
      reap (pid, &status);
    }
  if (masked)
    {
      if (!was_pending)
        {
          /* Consume a SIGPIPE our writes raised. */
          struct timespec zero = { 0, 0 };
          sigpending (&pending);
          while (sigismember (&pending, SIGPIPE) == 1 && sigtimedwait (&pipe_set, NULL, &zero) < 0
                 && errno == EINTR)
            ;
        }
      pthread_sigmask (SIG_SETMASK, &old_mask, NULL);
    }
  if (pidfd >= 0)
    close (pidfd);
  close_fd (&r.in);
  close_fd (&r.out);
  close_fd (&r.err);
  for (int i = 0; i < 2; i++)
    {
      close_fd (&pin[i]);
      close_fd (&pout[i]);
      close_fd (&perr[i]);
    }
  free (r.reply);
  env_release (&env);
  return ret;
}
